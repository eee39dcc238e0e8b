"""LimitRanger: the LimitRanges of a namespace default and bound what Pods and claims ask for, as upstream's
plugin (plugin/pkg/admission/limitranger) does.

Mutating, on Pod creation: each container (and init container) without a request or limit for a resource gets
the `Container` limits' `defaultRequest` / `default`, and the Pod is annotated `kubernetes.io/limit-ranger:
LimitRanger plugin set: cpu, memory request for container app; ...`. Validating, on Pod creation and claim
creation and update: `min`, `max` and `maxLimitRequestRatio` per Container, per Pod (its summed requests and
limits) and `min`/`max` storage per PersistentVolumeClaim; a breach is a 403 with upstream's wording
(`pods "p" is forbidden: maximum cpu usage per Container is 500m, but limit is 600m`, several in brackets).
LimitRanges are read from the server's own cache, so a change applies to the next request.
"""

from __future__ import annotations

from typing import Any

from mini_kube.machinery.quantity import Quantity, scaled_value
from mini_kube.machinery.quota import pods as quota_pods
from mini_kube.machinery.quota.resources import ResourceList, parse_list

from .. import errors
from .chain import AdmissionPlugin, Attributes

Obj = dict[str, Any]
ANNOTATION = "kubernetes.io/limit-ranger"
MAX_MILLI = (2**63 - 1) // 1000


def _values(*quantities: Quantity | None) -> list[int]:
    """requestLimitEnforcedValues: milli-units when all fit, else whole units (absent ones count 0)."""
    whole = [scaled_value(q.value) if q is not None else 0 for q in quantities]
    if all(v <= MAX_MILLI for v in whole):
        return [scaled_value(q.value, 3) if q is not None else 0 for q in quantities]
    return whole


def min_constraint(kind: str, name: str, enforced: Quantity, requests: ResourceList, limits: ResourceList) -> str | None:
    req, lim = requests.get(name), limits.get(name)
    observed_req, observed_lim, value = _values(req, lim, enforced)
    if req is None:
        return f"minimum {name} usage per {kind} is {enforced}.  No request is specified"
    if observed_req < value:
        return f"minimum {name} usage per {kind} is {enforced}, but request is {req}"
    if lim is not None and observed_lim < value:
        return f"minimum {name} usage per {kind} is {enforced}, but limit is {lim}"
    return None


def max_request_constraint(kind: str, name: str, enforced: Quantity, requests: ResourceList) -> str | None:
    req = requests.get(name)
    observed_req, _, value = _values(req, None, enforced)
    if req is None:
        return f"maximum {name} usage per {kind} is {enforced}.  No request is specified"
    if observed_req > value:
        return f"maximum {name} usage per {kind} is {enforced}, but request is {req}"
    return None


def max_constraint(kind: str, name: str, enforced: Quantity, requests: ResourceList, limits: ResourceList) -> str | None:
    req, lim = requests.get(name), limits.get(name)
    observed_req, observed_lim, value = _values(req, lim, enforced)
    if lim is None:
        return f"maximum {name} usage per {kind} is {enforced}.  No limit is specified"
    if observed_lim > value:
        return f"maximum {name} usage per {kind} is {enforced}, but limit is {lim}"
    if req is not None and observed_req > value:
        return f"maximum {name} usage per {kind} is {enforced}, but request is {req}"
    return None


def ratio_constraint(kind: str, name: str, enforced: Quantity, requests: ResourceList,
                     limits: ResourceList) -> str | None:
    req, lim = requests.get(name), limits.get(name)
    observed_req, observed_lim, _ = _values(req, lim, enforced)
    if req is None or observed_req == 0:
        return f"{name} max limit to request ratio per {kind} is {enforced}, but no request is specified or request is 0"
    if lim is None or observed_lim == 0:
        return f"{name} max limit to request ratio per {kind} is {enforced}, but no limit is specified or limit is 0"
    ratio = observed_lim / observed_req
    shown, allowed = ratio, float(scaled_value(enforced.value))
    if scaled_value(enforced.value) <= MAX_MILLI:
        ratio, allowed = ratio * 1000, float(scaled_value(enforced.value, 3))
    if ratio > allowed:
        return f"{name} max limit to request ratio per {kind} is {enforced}, but provided ratio is {shown:f}"
    return None


def _bounds(item: Obj, kind: str, requests: ResourceList, limits: ResourceList) -> list[str]:
    problems = [min_constraint(kind, n, q, requests, limits) for n, q in parse_list(item.get("min")).items()]
    problems += [max_constraint(kind, n, q, requests, limits) for n, q in parse_list(item.get("max")).items()]
    problems += [ratio_constraint(kind, n, q, requests, limits)
                 for n, q in parse_list(item.get("maxLimitRequestRatio")).items()]
    return [p for p in problems if p]


def pod_problems(limit_range: Obj, pod: Obj) -> list[str]:
    """PodValidateLimitFunc: every breach of the LimitRange by the Pod's containers or the Pod as a whole."""
    spec = pod.get("spec") or {}
    problems: list[str] = []
    for item in (limit_range.get("spec") or {}).get("limits") or ():
        if item.get("type") == "Container":
            for container in [*(spec.get("containers") or ()), *(spec.get("initContainers") or ())]:
                resources = container.get("resources") or {}
                problems += _bounds(item, "Container", parse_list(resources.get("requests")),
                                    parse_list(resources.get("limits")))
        if item.get("type") == "Pod":
            problems += _bounds(item, "Pod", quota_pods.aggregate(pod, "requests"), quota_pods.aggregate(pod, "limits"))
    return problems


def claim_problems(limit_range: Obj, claim: Obj) -> list[str]:
    """PersistentVolumeClaimValidateLimitFunc: the claim's storage request within min and max."""
    requests = parse_list(((claim.get("spec") or {}).get("resources") or {}).get("requests"))
    problems: list[str | None] = []
    for item in (limit_range.get("spec") or {}).get("limits") or ():
        if item.get("type") == "PersistentVolumeClaim":
            problems += [min_constraint("PersistentVolumeClaim", n, q, requests, {})
                         for n, q in parse_list(item.get("min")).items()]
            problems += [max_request_constraint("PersistentVolumeClaim", n, q, requests)
                         for n, q in parse_list(item.get("max")).items()]
    return [p for p in problems if p]


def _defaults(limit_range: Obj) -> tuple[Obj, Obj]:
    """defaultContainerResourceRequirements: (requests, limits) the Container limits default to."""
    requests: Obj = {}
    limits: Obj = {}
    for item in (limit_range.get("spec") or {}).get("limits") or ():
        if item.get("type") == "Container":
            requests.update(item.get("defaultRequest") or {})
            limits.update(item.get("default") or {})
    return requests, limits


def apply_defaults(limit_range: Obj, pod: Obj) -> None:
    """mergePodResourceRequirements: fill in what each container leaves unset, and say so in an annotation."""
    default_requests, default_limits = _defaults(limit_range)
    spec = pod.get("spec") or {}
    notes: list[str] = []
    for what, containers in (("container", spec.get("containers") or ()),
                             ("init container", spec.get("initContainers") or ())):
        for container in containers:
            resources = container.setdefault("resources", {})
            set_limits = [n for n in default_limits if n not in (resources.get("limits") or {})]
            set_requests = [n for n in default_requests if n not in (resources.get("requests") or {})]
            if set_limits:
                resources["limits"] = {**(resources.get("limits") or {}), **{n: default_limits[n] for n in set_limits}}
            if set_requests:
                resources["requests"] = {**(resources.get("requests") or {}),
                                         **{n: default_requests[n] for n in set_requests}}
            name = container.get("name", "")
            if set_requests:
                notes.append(f"{', '.join(sorted(set_requests))} request for {what} {name}")
            if set_limits:
                notes.append(f"{', '.join(sorted(set_limits))} limit for {what} {name}")
    if notes:
        meta = pod.setdefault("metadata", {})
        meta["annotations"] = {**(meta.get("annotations") or {}), ANNOTATION: "LimitRanger plugin set: " + "; ".join(notes)}


class LimitRanger(AdmissionPlugin):
    name = "LimitRanger"
    operations = ("CREATE", "UPDATE")

    @staticmethod
    def _kind(attrs: Attributes) -> str:
        """"pods" or "persistentvolumeclaims" when the write is one LimitRanges govern, else ""."""
        res = attrs.resource
        if res.group != "" or res.plural not in ("pods", "persistentvolumeclaims") or attrs.subresource:
            return ""
        if res.plural == "pods" and attrs.operation != "CREATE":
            return ""
        if attrs.old is not None and (attrs.old.get("metadata") or {}).get("deletionTimestamp"):
            return ""
        return res.plural

    @staticmethod
    def _limit_ranges(attrs: Attributes) -> list[Obj]:
        registry = attrs.context.registry
        limit_ranges = registry.resources.lookup("", "v1", "limitranges")
        if limit_ranges is None or not attrs.namespace:
            return []
        return [entry.obj for entry in registry.cache.list(limit_ranges.key_prefix, attrs.namespace)]

    async def mutate(self, attrs: Attributes) -> None:
        if self._kind(attrs) != "pods" or attrs.obj is None:  # reinvoked too: only unset fields are filled
            return
        for limit_range in self._limit_ranges(attrs):
            apply_defaults(limit_range, attrs.obj)

    async def validate(self, attrs: Attributes) -> None:
        kind = self._kind(attrs)
        if not kind or attrs.obj is None:
            return
        for limit_range in self._limit_ranges(attrs):
            problems = pod_problems(limit_range, attrs.obj) if kind == "pods" else claim_problems(limit_range,
                                                                                                  attrs.obj)
            if problems:
                text = problems[0] if len(problems) == 1 else "[" + ", ".join(problems) + "]"
                res = attrs.resource
                raise errors.forbidden_error(f'{res.group_resource} "{attrs.name}" is forbidden: {text}', res.plural,
                                             attrs.name, res.group)
