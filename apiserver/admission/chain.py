"""The admission chain: every mutating plugin in order, then (after the strategy) every validating one.

Mirrors k8s.io/apiserver/pkg/admission: a plugin says which operations it handles and implements
`mutate` and/or `validate`; either may raise a StatusError to refuse the request.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..registry.generic import WriteOptions
from ..registry.strategy import WriteContext
from ..resources import ResourceType


@dataclass(slots=True)
class Attributes:
    """What admission sees about one write."""

    operation: str  # CREATE, UPDATE, DELETE, CONNECT
    resource: ResourceType
    namespace: str | None
    name: str
    subresource: str
    obj: dict[str, Any] | None
    old: dict[str, Any] | None
    dry_run: bool
    user: Any
    options: WriteOptions
    context: WriteContext


class AdmissionPlugin:
    """Base class: override `mutate` and/or `validate`; `handles` filters operations."""

    name = "Plugin"
    operations: tuple[str, ...] = ("CREATE", "UPDATE", "DELETE", "CONNECT")

    def handles(self, attrs: Attributes) -> bool:
        return attrs.operation in self.operations

    async def mutate(self, attrs: Attributes) -> None:
        """Change attrs.obj in place."""

    async def validate(self, attrs: Attributes) -> None:
        """Raise a StatusError to refuse."""


class AdmissionChain:
    """Runs plugins in order; the registry calls `admit` before and `validate` after its strategy."""

    def __init__(self, plugins: list[AdmissionPlugin]) -> None:
        self.plugins = plugins

    def _attrs(self, operation: str, ctx: WriteContext, obj: dict[str, Any] | None, old: dict[str, Any] | None,
               opts: WriteOptions) -> Attributes:
        source = obj if obj is not None else old or {}
        name = (source.get("metadata") or {}).get("name", "")
        return Attributes(operation, ctx.resource, ctx.namespace, name, ctx.subresource, obj, old, opts.dry_run,
                          opts.user, opts, ctx)

    async def admit(self, operation: str, ctx: WriteContext, obj: dict[str, Any] | None,
                    old: dict[str, Any] | None, opts: WriteOptions) -> None:
        attrs = self._attrs(operation, ctx, obj, old, opts)
        for plugin in self.plugins:
            if plugin.handles(attrs):
                await plugin.mutate(attrs)

    async def validate(self, operation: str, ctx: WriteContext, obj: dict[str, Any] | None,
                       old: dict[str, Any] | None, opts: WriteOptions) -> None:
        attrs = self._attrs(operation, ctx, obj, old, opts)
        for plugin in self.plugins:
            if plugin.handles(attrs):
                await plugin.validate(attrs)
