"""Where a resource lives in the REST API: group, version, plural and scope (no HTTP stack imported, so that
light tools such as kubectl-lite share it)."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote


@dataclass(frozen=True, slots=True)
class ResourceRef:
    """Where a resource lives: group, version, plural and scope."""

    group: str
    version: str
    plural: str
    namespaced: bool = True

    def path(self, namespace: str | None = None, name: str | None = None, subresource: str = "") -> str:
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if self.namespaced and namespace:
            base += f"/namespaces/{quote(namespace, safe='')}"
        base += f"/{self.plural}"
        if name:
            base += f"/{quote(name, safe='')}"
        if subresource:
            base += f"/{subresource}"
        return base
