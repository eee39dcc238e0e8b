"""RuntimeClass admission (on by default upstream, plugin/pkg/admission/runtimeclass), on Pod creation.

Mutating: a Pod naming a RuntimeClass that does not exist is refused (403 `pod rejected: RuntimeClass "x" not
found`); the class's `overhead.podFixed` becomes the Pod's `spec.overhead` (a different one already set is refused),
its `scheduling.nodeSelector` is merged into the Pod's (a conflicting value is refused) and its tolerations
merged with the Pod's, redundant ones dropped as upstream's MergeTolerations. Validating: the Pod's overhead is
the class's, and a Pod without a class overhead has none. RuntimeClasses are read from the server's own cache.
"""

from __future__ import annotations

from typing import Any

from mini_kube.machinery.quantity import decimal_value

from .. import errors
from .chain import AdmissionPlugin, Attributes

Obj = dict[str, Any]
MISMATCH = "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"
UNDEFINED = "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead"


def _same_resources(first: Obj | None, second: Obj | None) -> bool:
    """Semantic equality of two ResourceLists (quantities compared by value)."""
    first, second = first or {}, second or {}
    return first.keys() == second.keys() and all(
        decimal_value(first[k]) == decimal_value(second[k]) for k in first)


def _is_superset(wider: Obj, toleration: Obj) -> bool:
    """isSuperset: `wider` tolerates everything `toleration` does."""
    if wider == toleration:
        return True
    key, wider_key = toleration.get("key", ""), wider.get("key", "")
    if key != wider_key and (wider_key or wider.get("operator") != "Exists"):
        return False
    if toleration.get("effect", "") != wider.get("effect", "") and wider.get("effect"):
        return False
    if wider.get("effect") == "NoExecute" and wider.get("tolerationSeconds") is not None:
        seconds = toleration.get("tolerationSeconds")
        if seconds is None or seconds > wider["tolerationSeconds"]:
            return False
    operator = wider.get("operator") or "Equal"
    if operator == "Equal":
        return (toleration.get("operator") or "Equal") == "Equal" and toleration.get("value", "") == wider.get(
            "value", "")
    return operator == "Exists"


def merge_tolerations(first: list[Obj], second: list[Obj]) -> list[Obj]:
    """MergeTolerations: both lists, without those another one already covers."""
    every = [*first, *second]
    merged: list[Obj] = []
    for i, toleration in enumerate(every):
        if any(_is_superset(kept, toleration) for kept in merged):
            continue
        if any(later != toleration and _is_superset(later, toleration) for later in every[i + 1:]):
            continue
        merged.append(toleration)
    return merged


class RuntimeClassAdmission(AdmissionPlugin):
    name = "RuntimeClass"
    operations = ("CREATE",)

    def handles(self, attrs: Attributes) -> bool:
        res = attrs.resource
        return (attrs.operation == "CREATE" and res.group == "" and res.plural == "pods" and not attrs.subresource
                and isinstance(attrs.obj, dict))

    @staticmethod
    def _runtime_class(attrs: Attributes) -> Obj | None:
        """The Pod's RuntimeClass (None when it names none); 403 when it names one that does not exist."""
        assert attrs.obj is not None
        name = (attrs.obj.get("spec") or {}).get("runtimeClassName")
        if name is None:
            return None
        registry = attrs.context.registry
        classes = registry.resources.lookup("node.k8s.io", "v1", "runtimeclasses")
        entry = registry.find(classes, None, name) if classes is not None else None
        if entry is None:
            raise _forbidden(attrs, f'pod rejected: RuntimeClass "{name}" not found')
        return entry.obj

    async def mutate(self, attrs: Attributes) -> None:
        assert attrs.obj is not None
        runtime_class = self._runtime_class(attrs)
        if runtime_class is None:
            return
        spec = attrs.obj.setdefault("spec", {})
        fixed = (runtime_class.get("overhead") or {}).get("podFixed")
        if fixed is not None:
            if spec.get("overhead") and not _same_resources(spec["overhead"], fixed):
                raise _forbidden(attrs, MISMATCH)
            spec["overhead"] = dict(fixed)
        scheduling = runtime_class.get("scheduling")
        if scheduling is None:
            return
        wanted = scheduling.get("nodeSelector") or {}
        selector = spec.get("nodeSelector")
        if selector is None:
            selector = dict(wanted) if wanted else None
        else:
            for key, value in wanted.items():
                if key in selector and selector[key] != value:
                    raise _forbidden(attrs, f"conflict: runtimeClass.scheduling.nodeSelector[{key}] = {value}; "
                                            f"pod.spec.nodeSelector[{key}] = {selector[key]}")
                selector[key] = value
        if selector is not None:
            spec["nodeSelector"] = selector
        tolerations = merge_tolerations(list(spec.get("tolerations") or ()), list(scheduling.get("tolerations") or ()))
        if tolerations:
            spec["tolerations"] = tolerations

    async def validate(self, attrs: Attributes) -> None:
        assert attrs.obj is not None
        runtime_class = self._runtime_class(attrs)
        overhead = (attrs.obj.get("spec") or {}).get("overhead")
        fixed = ((runtime_class or {}).get("overhead") or {}).get("podFixed")
        if fixed is not None:
            if not _same_resources(fixed, overhead):
                raise _forbidden(attrs, MISMATCH)
        elif overhead is not None:
            raise _forbidden(attrs, UNDEFINED)


def _forbidden(attrs: Attributes, message: str) -> errors.StatusError:
    return errors.forbidden_error(f'pods "{attrs.name}" is forbidden: {message}', "pods", attrs.name, "")
