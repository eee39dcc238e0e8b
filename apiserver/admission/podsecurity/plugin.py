"""The PodSecurity admission plugin (upstream's plugin/pkg/admission/security/podsecurity, on by default).

Pods are refused when they violate their namespace's `enforce` level; Pods and workload templates get a
Warning for the `warn` level and an audit annotation for the `audit` level; a namespace whose labels are invalid
is refused (422), and one whose enforce level tightens warns about the existing Pods that would now be refused.
Exempt usernames, namespaces and runtime classes come from the PodSecurityConfiguration.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ... import errors
from ..chain import AdmissionPlugin, Attributes
from .api import (
    AUDIT_VIOLATIONS,
    ENFORCE_POLICY,
    EXEMPT,
    LABEL_PREFIX,
    MODES,
    PRIVILEGED,
    PRIVILEGED_LATEST,
    LevelVersion,
    Policy,
    compare_levels,
    policy_to_evaluate,
)
from .config import PLUGIN_NAME, PodSecurityConfiguration
from .evaluator import evaluate, forbidden_detail, forbidden_reason

Obj = dict[str, Any]
NamespaceGetter = Callable[[str], Obj | None]
PodLister = Callable[[str], list[Obj]]

IGNORED_POD_SUBRESOURCES = frozenset(("exec", "attach", "binding", "eviction", "log", "portforward", "proxy",
                                      "status"))
POD_CONTROLLERS = frozenset((("", "replicationcontrollers"), ("", "podtemplates"), ("apps", "replicasets"),
                             ("apps", "deployments"), ("apps", "statefulsets"), ("apps", "daemonsets"),
                             ("batch", "jobs"), ("batch", "cronjobs")))
MAX_PODS_TO_CHECK = 3000  # existing Pods checked when a namespace's enforce level tightens
POD_CHECK_SECONDS = 1.0
YIELD_EVERY = 100  # Pods checked between returns to the event loop


@dataclass(slots=True)
class Decision:
    """What the plugin concluded: warnings, audit annotations (unprefixed) and the refusal if any."""

    warnings: list[str] = field(default_factory=list)
    annotations: dict[str, str] = field(default_factory=dict)
    error: errors.StatusError | None = None


def pod_template(group: str, plural: str, obj: Obj) -> tuple[Obj, Obj] | None:
    """(metadata, spec) of the Pod template a workload object carries, None when it has none."""
    if plural == "podtemplates":
        template = obj.get("template")
    elif plural == "cronjobs":
        template = (((obj.get("spec") or {}).get("jobTemplate") or {}).get("spec") or {}).get("template")
    else:
        template = (obj.get("spec") or {}).get("template")
    if not isinstance(template, dict):
        return None
    return template.get("metadata") or {}, template.get("spec") or {}


def significant_pod_update(new: Obj, old: Obj) -> bool:
    """Upstream's isSignificantPodUpdate: containers added or removed, an image changed, an ephemeral container
    added or changed image; nothing else a Pod update may change matters to Pod Security."""
    spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
    for key in ("containers", "initContainers"):
        now, before = spec.get(key) or [], old_spec.get(key) or []
        if len(now) != len(before) or any(a.get("image") != b.get("image") for a, b in zip(now, before, strict=True)):
            return True
    before_ephemeral = {c.get("name"): c for c in old_spec.get("ephemeralContainers") or ()}
    for container in spec.get("ephemeralContainers") or ():
        previous = before_ephemeral.get(container.get("name"))
        if previous is None or previous.get("image") != container.get("image"):
            return True
    return False


class PodSecurity(AdmissionPlugin):
    """Validating admission for Pods, Pod-template workloads and Namespaces."""

    name = PLUGIN_NAME
    operations = ("CREATE", "UPDATE")

    def __init__(self, configuration: PodSecurityConfiguration, namespaces: NamespaceGetter,
                 pods: PodLister) -> None:
        self.configuration = configuration
        self.namespaces = namespaces
        self.pods = pods

    def handles(self, attrs: Attributes) -> bool:
        res = attrs.resource
        return attrs.operation in self.operations and isinstance(attrs.obj, dict) and (
            (res.group, res.plural) in POD_CONTROLLERS or (res.group == "" and res.plural in ("pods", "namespaces")))

    async def validate(self, attrs: Attributes) -> None:
        res = attrs.resource
        if res.group == "" and res.plural == "namespaces":
            decision = await self.validate_namespace(attrs)
        elif res.group == "" and res.plural == "pods":
            decision = self.validate_pod(attrs)
        else:
            decision = self.validate_controller(attrs)
        attrs.options.warnings.extend(decision.warnings)
        attrs.options.audit_annotations.update((LABEL_PREFIX + k, v) for k, v in decision.annotations.items())
        if decision.error is not None:
            raise decision.error

    # -- exemptions ------------------------------------------------------------------------------------------
    def exempt(self, attrs: Attributes) -> Decision | None:
        """The decision for an exempt namespace or user (None when neither is exempt)."""
        if attrs.namespace and attrs.namespace in self.configuration.exempt_namespaces:
            return Decision(annotations={EXEMPT: "namespace"})
        username = getattr(attrs.user, "name", "") or ""
        if username and username in self.configuration.exempt_usernames:
            return Decision(annotations={EXEMPT: "user"})
        return None

    def exempt_runtime_class(self, spec: Obj) -> bool:
        runtime_class = spec.get("runtimeClassName")
        return bool(runtime_class) and runtime_class in self.configuration.exempt_runtime_classes

    def namespace_policy(self, namespace: str) -> tuple[Policy, list[Any]] | None:
        obj = self.namespaces(namespace)
        if obj is None:
            return None
        return policy_to_evaluate((obj.get("metadata") or {}).get("labels"), self.configuration.defaults)

    # -- Pods and workloads ----------------------------------------------------------------------------------
    def validate_pod(self, attrs: Attributes) -> Decision:
        if attrs.subresource in IGNORED_POD_SUBRESOURCES:
            return Decision()
        exempt = self.exempt(attrs)
        if exempt is not None:
            return exempt
        found = self.namespace_policy(attrs.namespace or "")
        if found is None:
            message = f'failed to lookup namespace "{attrs.namespace}"'
            return Decision(annotations={"error": f"Internal error occurred: {message}"},
                            error=errors.internal_error(message))
        policy, label_errors = found
        if not label_errors and policy.fully_privileged:
            return Decision(annotations={ENFORCE_POLICY: str(PRIVILEGED_LATEST)})
        assert attrs.obj is not None
        if attrs.operation == "UPDATE" and attrs.old is not None and \
                not significant_pod_update(attrs.obj, attrs.old):
            return Decision()
        return self.evaluate_pod(policy, label_errors, attrs.obj.get("metadata") or {}, attrs.obj.get("spec") or {},
                                 attrs, enforce=True)

    def validate_controller(self, attrs: Attributes) -> Decision:
        if attrs.subresource:
            return Decision()
        exempt = self.exempt(attrs)
        if exempt is not None:
            return exempt
        found = self.namespace_policy(attrs.namespace or "")
        if found is None:
            return Decision(annotations={"error": f'failed to lookup namespace "{attrs.namespace}"'})
        policy, label_errors = found
        if not label_errors and policy.warn.level == PRIVILEGED and policy.audit.level == PRIVILEGED:
            return Decision()
        assert attrs.obj is not None
        template = pod_template(attrs.resource.group, attrs.resource.plural, attrs.obj)
        if template is None:
            return Decision()
        return self.evaluate_pod(policy, label_errors, *template, attrs, enforce=False)

    def evaluate_pod(self, policy: Policy, label_errors: list[Any], meta: Obj, spec: Obj, attrs: Attributes,
                     enforce: bool) -> Decision:
        """Upstream's EvaluatePod: enforce (when asked), then audit, then warn unless refused."""
        if self.exempt_runtime_class(spec):
            return Decision(annotations={EXEMPT: "runtimeClass"})
        decision = Decision()
        if label_errors:
            decision.annotations["error"] = "Failed to parse policy: " + _aggregate(
                [f"{e.field}: Invalid value: {errors.go_field_value(e.value)}: {e.message}" for e in label_errors])
        results: dict[LevelVersion, list[Any]] = {}

        def violations(level: LevelVersion) -> list[Any]:
            if level not in results:
                results[level] = evaluate(level, meta, spec)
            return results[level]

        if enforce:
            decision.annotations[ENFORCE_POLICY] = str(policy.enforce)
            found = violations(policy.enforce)
            if found:
                res = attrs.resource
                message = f'violates PodSecurity "{policy.enforce}": {forbidden_detail(found)}'
                prefix = f'{res.group_resource} "{attrs.name}"' if attrs.name else res.group_resource
                decision.error = errors.forbidden_error(f"{prefix} is forbidden: {message}", res.plural, attrs.name,
                                                        res.group)
        found = violations(policy.audit)
        if found:
            decision.annotations[AUDIT_VIOLATIONS] = \
                f'would violate PodSecurity "{policy.audit}": {forbidden_detail(found)}'
        if decision.error is None:
            found = violations(policy.warn)
            if found:
                decision.warnings.append(f'would violate PodSecurity "{policy.warn}": {forbidden_detail(found)}')
        return decision

    # -- Namespaces ------------------------------------------------------------------------------------------
    async def validate_namespace(self, attrs: Attributes) -> Decision:
        if attrs.subresource:
            return Decision()
        assert attrs.obj is not None
        name = attrs.name
        labels = (attrs.obj.get("metadata") or {}).get("labels") or {}
        policy, label_errors = policy_to_evaluate(labels, self.configuration.defaults)
        if attrs.operation == "CREATE":
            if label_errors:
                return Decision(error=_invalid_labels(name, label_errors))
            return Decision(warnings=self.exempt_namespace_warning(name, policy, labels))
        old_labels = ((attrs.old or {}).get("metadata") or {}).get("labels") or {}
        old_policy, old_errors = policy_to_evaluate(old_labels, self.configuration.defaults)
        if label_errors and (not old_errors or label_errors != old_errors):
            return Decision(error=_invalid_labels(name, label_errors))
        new, old = policy.enforce, old_policy.enforce
        if new == old or new.level == PRIVILEGED or \
                (new.version == old.version and compare_levels(new.level, old.level) < 1):
            return Decision()
        if name in self.configuration.exempt_namespaces:
            return Decision(warnings=self.exempt_namespace_warning(name, policy, labels))
        return Decision(warnings=await self.evaluate_pods_in_namespace(name, new))

    def exempt_namespace_warning(self, namespace: str, policy: Policy, labels: dict[str, str]) -> list[str]:
        """The warning for Pod Security labels on an exempt namespace (none when they change nothing)."""
        if namespace not in self.configuration.exempt_namespaces or policy.fully_privileged or \
                policy.equivalent(self.configuration.defaults):
            return []
        modes = {"enforce": policy.enforce, "audit": policy.audit, "warn": policy.warn}
        shown = [f"{mode}={modes[mode]}" for mode in MODES if modes[mode].level != PRIVILEGED and (
            LABEL_PREFIX + mode in labels or LABEL_PREFIX + mode + "-version" in labels)]
        return [f'namespace "{namespace}" is exempt from Pod Security, and the policy ({", ".join(shown)}) will be '
                "ignored"]

    async def evaluate_pods_in_namespace(self, namespace: str, enforce: LevelVersion) -> list[str]:
        """Upstream's dry run of a tightened enforce level over the namespace's Pods (within 1 s, 3000 Pods)."""
        deadline = time.monotonic() + POD_CHECK_SECONDS
        pods = self.prioritize(self.pods(namespace))
        total = len(pods)
        pods = pods[:MAX_PODS_TO_CHECK]
        checked = len(pods)
        counts: dict[str, list[Any]] = {}  # reason -> [lexically first Pod name, count]
        for i, pod in enumerate(pods):
            found = evaluate(enforce, pod.get("metadata") or {}, pod.get("spec") or {})
            if found:
                reason, pod_name = forbidden_reason(found), (pod.get("metadata") or {}).get("name", "")
                seen = counts.setdefault(reason, [pod_name, 0])
                seen[0], seen[1] = min(seen[0], pod_name), seen[1] + 1
            if time.monotonic() > deadline:
                checked = i + 1
                break
            if i % YIELD_EVERY == YIELD_EVERY - 1:
                await asyncio.sleep(0)
        warnings = []
        if checked < total:
            warnings.append(f"new PodSecurity enforce level only checked against the first {checked} of {total} "
                            "existing pods")
        if counts:
            warnings.append(f'existing pods in namespace "{namespace}" violate the new PodSecurity enforce level '
                            f'"{enforce}"')
        return warnings + sorted(f"{pod_name}{_others(count)}: {reason}" for reason, (pod_name, count)
                                 in counts.items())

    def prioritize(self, pods: list[Obj]) -> list[Obj]:
        """Pods to dry-run: no exempt runtime class; one per controller first, the other replicas after."""
        first, replicas, controllers = [], [], set()
        for pod in pods:
            if self.exempt_runtime_class(pod.get("spec") or {}):
                continue
            owner = next((r for r in (pod.get("metadata") or {}).get("ownerReferences") or ()
                          if isinstance(r, dict) and r.get("controller")), None)
            if owner is None:
                first.append(pod)
            elif owner.get("uid") in controllers:
                replicas.append(pod)
            else:
                controllers.add(owner.get("uid"))
                first.append(pod)
        return first + replicas


def _others(count: int) -> str:
    return "" if count == 1 else " (and 1 other pod)" if count == 2 else f" (and {count - 1} other pods)"


def _aggregate(messages: list[str]) -> str:
    return messages[0] if len(messages) == 1 else "[" + ", ".join(messages) + "]"


def _invalid_labels(name: str, label_errors: list[Any]) -> errors.StatusError:
    return errors.invalid_object("Namespace", "", name, [errors.invalid(e.field, e.value, e.message)
                                                        for e in label_errors])
