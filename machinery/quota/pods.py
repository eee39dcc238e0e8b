"""What a Pod uses and which quota scopes it falls under, as upstream's pod evaluator
(pkg/quota/v1/evaluator/core/pods.go) with resourcehelper's PodRequests/PodLimits and the QoS class."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

from mini_kube.machinery.labels import matches as selector_matches
from mini_kube.machinery.names import is_qualified_name
from mini_kube.machinery.quantity import SUMS, parse_quantity
from mini_kube.machinery.times import parse_time

from .resources import ResourceList, add, maximum, parse_list, quantity

Obj = dict[str, Any]
REQUESTS_PREFIX = "requests."
HUGEPAGES_PREFIX = "hugepages-"
POD_RESOURCES = ("count/pods", "cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory",
                 "requests.ephemeral-storage", "limits.cpu", "limits.memory", "limits.ephemeral-storage", "pods")
POD_RESOURCE_PREFIXES = (HUGEPAGES_PREFIX, REQUESTS_PREFIX + HUGEPAGES_PREFIX)
# "if a quota tracks cpu or memory, each container must ask for it" (upstream calls it a mistake it keeps)
VALIDATION_SET = frozenset(("cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory"))
QOS_RESOURCES = ("cpu", "memory")


def is_native(name: str) -> bool:
    """In the kubernetes.io/ namespace (unprefixed names are)."""
    return "/" not in name or "kubernetes.io/" in name


def is_extended(name: str) -> bool:
    """An extended resource a container may request (`example.com/dongle`), counted as `requests.<name>`."""
    if is_native(name) or name.startswith(REQUESTS_PREFIX):
        return False
    return not is_qualified_name(REQUESTS_PREFIX + name)


def is_extended_for_quota(name: str) -> bool:
    """A quota name for an extended resource: only `requests.<name>` is allowed."""
    return not is_native(name) and name.startswith(REQUESTS_PREFIX)


def _value(text: Any) -> Decimal:
    parsed = parse_quantity(text) if text is not None else None
    return parsed.value if parsed is not None else Decimal(0)


def qos_class(spec: Obj) -> str:
    """ComputePodQOS: BestEffort without cpu/memory requests or limits; Guaranteed when every container limits
    both and the summed requests equal the summed limits (by value; zero quantities count as unset); else
    Burstable."""
    requests: dict[str, Decimal] = {}
    limits: dict[str, Decimal] = {}
    guaranteed = True
    for container in [*(spec.get("containers") or ()), *(spec.get("initContainers") or ())]:
        resources = container.get("resources") or {}
        for kind, total in (("requests", requests), ("limits", limits)):
            for name in QOS_RESOURCES:
                value = _value((resources.get(kind) or {}).get(name))
                if value > 0:
                    total[name] = SUMS.add(total.get(name, Decimal(0)), value)
        if not all(_value((resources.get("limits") or {}).get(name)) > 0 for name in QOS_RESOURCES):
            guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    if guaranteed and len(requests) == len(limits) and all(limits.get(k) == v for k, v in requests.items()):
        return "Guaranteed"
    return "Burstable"


def pod_qos(pod: Obj) -> str:
    """GetPodQOS: status.qosClass when set, else computed."""
    known = (pod.get("status") or {}).get("qosClass")
    return known if known else qos_class(pod.get("spec") or {})


def aggregate(pod: Obj, kind: str) -> ResourceList:
    """The containers' sum, sidecar init containers included, or the largest init container's need if bigger."""
    spec = pod.get("spec") or {}
    total: ResourceList = {}
    for container in spec.get("containers") or ():
        total = add(total, parse_list((container.get("resources") or {}).get(kind)))
    sidecars: ResourceList = {}
    init_peak: ResourceList = {}
    for container in spec.get("initContainers") or ():
        own = parse_list((container.get("resources") or {}).get(kind))
        if container.get("restartPolicy") == "Always":
            total = add(total, own)
            sidecars = add(sidecars, own)
            need = sidecars
        else:
            need = add(own, sidecars)
        init_peak = maximum(init_peak, need)
    return maximum(total, init_peak)


def pod_requests(pod: Obj) -> ResourceList:
    """resourcehelper.PodRequests: the aggregate requests plus the Pod overhead."""
    return add(aggregate(pod, "requests"), parse_list((pod.get("spec") or {}).get("overhead")))


def pod_limits(pod: Obj) -> ResourceList:
    """resourcehelper.PodLimits: the aggregate limits, the overhead added to those that are set."""
    limits = aggregate(pod, "limits")
    overhead = parse_list((pod.get("spec") or {}).get("overhead"))
    return add(limits, {name: value for name, value in overhead.items() if name in limits})


def compute_usage(requests: ResourceList, limits: ResourceList) -> ResourceList:
    """podComputeUsageHelper: the quota names a Pod's (or a container's) requests and limits charge."""
    result: ResourceList = {"pods": quantity(1)}
    for name in ("cpu", "memory", "ephemeral-storage"):
        if name in requests:
            result[name] = requests[name]
            result[REQUESTS_PREFIX + name] = requests[name]
        if name in limits:
            result[f"limits.{name}"] = limits[name]
    for name, value in requests.items():
        if name.startswith(HUGEPAGES_PREFIX):
            result[name] = value
            result[REQUESTS_PREFIX + name] = value
        if is_extended(name):
            result[REQUESTS_PREFIX + name] = value
    return result


def charged(pod: Obj, now: dt.datetime) -> bool:
    """QuotaV1Pod: not terminal, and not stuck terminating past its grace period."""
    if (pod.get("status") or {}).get("phase") in ("Failed", "Succeeded"):
        return False
    meta = pod.get("metadata") or {}
    deletion = parse_time(meta.get("deletionTimestamp"))
    grace = meta.get("deletionGracePeriodSeconds")
    if deletion is None or grace is None:
        return True
    try:
        return now <= deletion + dt.timedelta(seconds=grace)
    except OverflowError:  # a deadline past year 9999 (the API holds a huge grace period's there): not reached
        return True


def usage(pod: Obj, now: dt.datetime) -> ResourceList:
    """PodUsageFunc: count/pods always; the compute resources while the Pod is charged."""
    result: ResourceList = {"count/pods": quantity(1)}
    if not charged(pod, now):
        return result
    return add(result, compute_usage(pod_requests(pod), pod_limits(pod)))


def missing_requests(required: list[str], pod: Obj) -> str | None:
    """Constraints: when a quota tracks cpu or memory, each container must set it; the error text, or None."""
    wanted = set(required) & VALIDATION_SET
    spec = pod.get("spec") or {}
    missing: dict[str, set[str]] = {}
    for container in [*(spec.get("containers") or ()), *(spec.get("initContainers") or ())]:
        resources = container.get("resources") or {}
        has = compute_usage(parse_list(resources.get("requests")), parse_list(resources.get("limits")))
        for name in wanted - has.keys():
            missing.setdefault(name, set()).add(container.get("name", ""))
    if not missing:
        return None
    return "must specify " + "; ".join(f"{name} for: {','.join(sorted(missing[name]))}" for name in sorted(missing))


def _cross_namespace_terms(terms: list[Obj] | None) -> bool:
    return any(t.get("namespaces") or t.get("namespaceSelector") is not None for t in terms or ())


def uses_cross_namespace_affinity(pod: Obj) -> bool:
    affinity = (pod.get("spec") or {}).get("affinity") or {}
    for kind in ("podAffinity", "podAntiAffinity"):
        terms = affinity.get(kind) or {}
        if _cross_namespace_terms(terms.get("requiredDuringSchedulingIgnoredDuringExecution")):
            return True
        weighted = terms.get("preferredDuringSchedulingIgnoredDuringExecution") or ()
        if _cross_namespace_terms([w.get("podAffinityTerm") or {} for w in weighted]):
            return True
    return False


def is_terminating(pod: Obj) -> bool:
    deadline = (pod.get("spec") or {}).get("activeDeadlineSeconds")
    return deadline is not None and deadline >= 0


def matches_scope(selector: Obj, pod: Obj) -> bool:
    """podMatchesScopeFunc: whether the Pod falls under one scope selector requirement."""
    scope = selector.get("scopeName")
    if scope == "Terminating":
        return is_terminating(pod)
    if scope == "NotTerminating":
        return not is_terminating(pod)
    if scope == "BestEffort":
        return pod_qos(pod) == "BestEffort"
    if scope == "NotBestEffort":
        return pod_qos(pod) != "BestEffort"
    if scope == "PriorityClass":
        name = (pod.get("spec") or {}).get("priorityClassName") or ""
        if selector.get("operator") == "Exists":
            return bool(name)
        expression = {"key": "PriorityClass", "operator": selector.get("operator"),
                      "values": selector.get("values") or []}
        return selector_matches({"matchExpressions": [expression]}, {"PriorityClass": name} if name else {})
    if scope == "CrossNamespacePodAffinity":
        return uses_cross_namespace_affinity(pod)
    return False
