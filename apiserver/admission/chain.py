"""The admission chain: every mutating plugin in order, then (after the strategy) every validating one.

Mirrors k8s.io/apiserver/pkg/admission: a plugin says which operations it handles and implements
`mutate` and/or `validate`; either may raise a StatusError to refuse the request. A plugin that changed the
object in a way earlier plugins may care about sets `attrs.reinvoke`; the chain then runs the mutating
plugins once more with `attrs.reinvocation` set (upstream's reinvocation round).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..registry.generic import WriteOptions
from ..registry.strategy import WriteContext
from ..resources import ResourceType

SCALE_KIND = ("autoscaling", "v1", "Scale")


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
    reinvoke: bool = False  # a plugin asks for a reinvocation round
    reinvocation: bool = False  # this is the reinvocation round
    state: dict[str, Any] = field(default_factory=dict)  # per-request plugin state (both rounds)

    @property
    def kind(self) -> tuple[str, str, str]:
        """(group, version, kind) of the object admission sees (autoscaling/v1 Scale for `scale`)."""
        if self.subresource == "scale":
            return SCALE_KIND
        res = self.resource
        sub = res.subresource(self.subresource) if self.subresource else None
        if sub is not None and sub.group:  # another group's kind (pods/eviction: policy/v1 Eviction)
            return sub.group, sub.version, sub.kind
        return res.group, res.version, res.kind

    @property
    def request_namespace(self) -> str:
        """The request's namespace as upstream reports it: a Namespace's own name except on create."""
        res = self.resource
        if res.group == "" and res.plural == "namespaces" and self.operation != "CREATE":
            return self.name
        return self.namespace or ""


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
        if attrs.reinvoke:
            attrs.reinvocation, attrs.reinvoke = True, False
            for plugin in self.plugins:
                if plugin.handles(attrs):
                    await plugin.mutate(attrs)

    async def connect(self, ctx: WriteContext, name: str, options: dict[str, Any], opts: WriteOptions) -> None:
        """Admit a CONNECT (pods/exec, attach, portforward, proxy): the object is the request's options object
        (PodAttachOptions...), `name` the object connected to; the mutating plugins, then the validating ones."""
        attrs = Attributes("CONNECT", ctx.resource, ctx.namespace, name, ctx.subresource, options, None,
                           opts.dry_run, opts.user, opts, ctx)
        for plugin in self.plugins:
            if plugin.handles(attrs):
                await plugin.mutate(attrs)
        for plugin in self.plugins:
            if plugin.handles(attrs):
                await plugin.validate(attrs)

    async def validate(self, operation: str, ctx: WriteContext, obj: dict[str, Any] | None,
                       old: dict[str, Any] | None, opts: WriteOptions) -> None:
        attrs = self._attrs(operation, ctx, obj, old, opts)
        for plugin in self.plugins:
            if plugin.handles(attrs):
                await plugin.validate(attrs)
