"""Priority admission (on by default upstream, plugin/pkg/admission/priority).

Mutating, on Pod creation: `spec.priorityClassName` is resolved to its PriorityClass's `value` (`spec.priority`)
and `preemptionPolicy`; a Pod naming none gets the global default class's (the lowest-valued one if several),
else priority 0 and PreemptLowerPriority. A class that does not exist is refused (403 `no PriorityClass with
name x was found`), and so is a `priority` or `preemptionPolicy` the Pod sets that differs from its class's. On
update, a Pod sent without them keeps its stored ones. Validating: a PriorityClass may be `globalDefault` only
when no other one is. PriorityClasses are read from the server's own cache.
"""

from __future__ import annotations

from typing import Any

from .. import errors
from .chain import AdmissionPlugin, Attributes

PREEMPT_LOWER = "PreemptLowerPriority"
NO_DEFAULT_PRIORITY = 0  # scheduling.DefaultPriorityWhenNoDefaultClassExists


def _is_pods(attrs: Attributes) -> bool:
    return attrs.resource.group == "" and attrs.resource.plural == "pods"


def _is_priority_classes(attrs: Attributes) -> bool:
    return attrs.resource.group == "scheduling.k8s.io" and attrs.resource.plural == "priorityclasses"


class PriorityAdmission(AdmissionPlugin):
    name = "Priority"
    operations = ("CREATE", "UPDATE")

    def handles(self, attrs: Attributes) -> bool:
        return attrs.operation in self.operations and not attrs.subresource and isinstance(attrs.obj, dict) and (
            _is_pods(attrs) or _is_priority_classes(attrs))

    @staticmethod
    def _classes(attrs: Attributes) -> list[dict[str, Any]]:
        registry = attrs.context.registry
        res = registry.resources.lookup("scheduling.k8s.io", "v1", "priorityclasses")
        return [entry.obj for entry in registry.cache.list(res.key_prefix)] if res is not None else []

    def _default_class(self, attrs: Attributes) -> dict[str, Any] | None:
        """The global default PriorityClass (the lowest-valued one, should a race have made several)."""
        defaults = [c for c in self._classes(attrs) if c.get("globalDefault")]
        return min(defaults, key=lambda c: int(c.get("value") or 0)) if defaults else None

    async def mutate(self, attrs: Attributes) -> None:
        if not _is_pods(attrs):
            return
        assert attrs.obj is not None
        spec = attrs.obj.setdefault("spec", {})
        if attrs.operation == "UPDATE":  # priority is set once, at creation; an update without it keeps it
            old = (attrs.old or {}).get("spec") or {}
            for key in ("priority", "preemptionPolicy"):
                if spec.get(key) is None and old.get(key) is not None:
                    spec[key] = old[key]
            return
        name = spec.get("priorityClassName") or ""
        if name:
            found = next((c for c in self._classes(attrs) if (c.get("metadata") or {}).get("name") == name), None)
            if found is None:
                raise _forbidden(attrs, f"no PriorityClass with name {name} was found")
            priority, policy = int(found.get("value") or 0), found.get("preemptionPolicy")
        else:
            default = self._default_class(attrs)
            if default is not None:
                spec["priorityClassName"] = default["metadata"]["name"]
                priority, policy = int(default.get("value") or 0), default.get("preemptionPolicy")
            else:
                priority, policy = NO_DEFAULT_PRIORITY, PREEMPT_LOWER
        if spec.get("priority") is not None and spec["priority"] != priority:
            raise _forbidden(attrs, f"the integer value of priority ({spec['priority']}) must not be provided in pod "
                                    f"spec; priority admission controller computed {priority} from the given "
                                    "PriorityClass name")
        spec["priority"] = priority
        if policy is not None:
            if spec.get("preemptionPolicy") is not None and spec["preemptionPolicy"] != policy:
                raise _forbidden(attrs, f"the string value of PreemptionPolicy ({spec['preemptionPolicy']}) must "
                                        f"not be provided in pod spec; priority admission controller computed "
                                        f"{policy} from the given PriorityClass name")
            spec["preemptionPolicy"] = policy

    async def validate(self, attrs: Attributes) -> None:
        if not _is_priority_classes(attrs):
            return
        assert attrs.obj is not None
        if not attrs.obj.get("globalDefault"):
            return
        default = self._default_class(attrs)
        if default is None:
            return
        name = default["metadata"]["name"]
        if attrs.operation == "CREATE" or name != attrs.name:
            raise _forbidden(attrs, f"PriorityClass {name} is already marked as default. Only one default can exist")


def _forbidden(attrs: Attributes, message: str) -> errors.StatusError:
    res = attrs.resource
    return errors.forbidden_error(f'{res.group_resource} "{attrs.name}" is forbidden: {message}', res.plural,
                                  attrs.name, res.group)
