"""DefaultTolerationSeconds admission (on by default upstream): every Pod tolerates the NoExecute taints
`node.kubernetes.io/not-ready` and `node.kubernetes.io/unreachable` for 300 s unless it already tolerates them
(a toleration with that key, or no key, and effect NoExecute or none). Mirrors
plugin/pkg/admission/defaulttolerationseconds, so Pods read back as on a real cluster."""

from __future__ import annotations

from typing import Any

from .chain import AdmissionPlugin, Attributes

NOT_READY = "node.kubernetes.io/not-ready"
UNREACHABLE = "node.kubernetes.io/unreachable"
DEFAULT_SECONDS = 300


def _tolerates(tolerations: list[dict[str, Any]], key: str) -> bool:
    return any(t.get("key") in (key, None, "") and t.get("effect") in ("NoExecute", None, "") for t in tolerations)


class DefaultTolerationSeconds(AdmissionPlugin):
    name = "DefaultTolerationSeconds"
    operations = ("CREATE", "UPDATE")

    def __init__(self, seconds: int = DEFAULT_SECONDS) -> None:
        self.seconds = seconds

    def handles(self, attrs: Attributes) -> bool:
        res = attrs.resource
        return (attrs.operation in self.operations and res.group == "" and res.plural == "pods"
                and not attrs.subresource and isinstance(attrs.obj, dict))

    async def mutate(self, attrs: Attributes) -> None:
        assert attrs.obj is not None
        spec = attrs.obj.setdefault("spec", {})
        tolerations = list(spec.get("tolerations") or ())
        added = [{"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": self.seconds}
                 for key in (NOT_READY, UNREACHABLE) if not _tolerates(tolerations, key)]
        if added:
            spec["tolerations"] = tolerations + added
