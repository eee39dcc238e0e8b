"""Status-like subresources (`status`, a Namespace's `finalize`, a Pod's `ephemeralcontainers`, a CSR's
`approval`), as upstream's StatusREST storages: reads are the object, writes go through the registry marked with
the subresource, so the row's strategy changes only what that subresource owns (and never creates)."""

from __future__ import annotations

from typing import Any

from ...resources import ResourceType
from ..cache import Entry
from ..generic import Registry, WriteOptions

SUBRESOURCES = ("status", "finalize", "ephemeralcontainers", "approval")


class StatusREST:
    """The status-like subresources of one server's resources."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry

    def get(self, res: ResourceType, namespace: str | None, name: str) -> Entry:
        return self.registry.get(res, namespace, name)

    async def update(self, res: ResourceType, namespace: str | None, name: str, obj: dict[str, Any],
                     opts: WriteOptions) -> dict[str, Any] | Entry:
        """Write `obj` through the subresource `opts.subresource` (a missing object is a 404, not a create)."""
        result, _ = await self.registry.update(res, namespace, name, obj, opts, allow_create=False)
        return result
