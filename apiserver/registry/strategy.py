"""Per-resource strategies: defaulting, preparation, validation and status rules (registry/rest in upstream).

`Strategy` is the generic behaviour every kind gets; kinds with extra rules subclass it in
`apiserver/registry/strategies/`. A strategy sees plain dicts and raises or returns `FieldError`s.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import FieldError
from .approval import prepare_approval_update

if TYPE_CHECKING:
    from mini_kube.store import Store

    from ..resources import ResourceRegistry, ResourceType
    from .cache import Entry, ObjectCache


class RegistryView(Protocol):
    """What a strategy (or an admission plugin) reads and reserves through during a write: the registry's
    store, cache and resource table (the registry itself, without its import)."""

    store: Store
    cache: ObjectCache
    resources: ResourceRegistry

    def find(self, res: ResourceType, namespace: str | None, name: str) -> Entry | None: ...

# Kinds whose metadata.generation tracks spec changes (the upstream strategies that set it).
GENERATION_KINDS = {
    "Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "CronJob", "ReplicationController",
    "PodDisruptionBudget", "Ingress", "NetworkPolicy", "CustomResourceDefinition", "EndpointSlice",
    "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration", "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding", "HorizontalPodAutoscaler", "FlowSchema", "PriorityLevelConfiguration",
    "IngressClass", "PriorityClass",
}

# Kinds whose status endpoint writes annotations too: upstream's apps status strategies reset only the spec (and
# a Deployment's labels), and the deployment controller records `deployment.kubernetes.io/revision` that way.
STATUS_WRITES_ANNOTATIONS = {"Deployment", "ReplicaSet", "StatefulSet", "DaemonSet"}


@dataclass(slots=True)
class WriteContext:
    """What a strategy may need to know about the write in progress."""

    registry: RegistryView
    resource: ResourceType
    namespace: str | None
    dry_run: bool = False
    subresource: str = ""
    user: Any = None
    release: list[Any] = field(default_factory=list)  # in-flight reservations, dropped after the write


def spec_changed(new: dict[str, Any], old: dict[str, Any]) -> bool:
    """Whatever is not metadata or status counts as spec (upstream compares spec; CRs compare all but those)."""
    keys = (set(new) | set(old)) - {"metadata", "status", "apiVersion", "kind"}
    return any(new.get(k) != old.get(k) for k in keys)


class Strategy:
    """Generic rules for one resource."""

    def tracks_generation(self, resource: ResourceType) -> bool:
        return resource.kind in GENERATION_KINDS or resource.crd is not None

    def initial_status(self, resource: ResourceType, obj: dict[str, Any]) -> dict[str, Any] | None:
        """Status a new object starts with when the kind has a status subresource (None keeps it absent)."""
        return {}

    def read(self, res: ResourceType, obj: dict[str, Any]) -> dict[str, Any]:
        """The stored object as the request's version sees it (updates compare and patch against this)."""
        return obj

    def default(self, ctx: WriteContext, obj: dict[str, Any]) -> None:
        """Apply schema defaults (built-in kinds: upstream definitions; custom resources: their schema)."""
        from .defaulting import default_object

        default_object(ctx.resource, obj)

    def prepare_for_create(self, ctx: WriteContext, obj: dict[str, Any]) -> None:
        res = ctx.resource
        if res.has_status:
            status = self.initial_status(res, obj)
            if status is None:
                obj.pop("status", None)
            else:
                obj["status"] = status
        if self.tracks_generation(res):
            obj["metadata"]["generation"] = 1

    def prepare_for_update(self, ctx: WriteContext, new: dict[str, Any], old: dict[str, Any]) -> None:
        res = ctx.resource
        if ctx.subresource == "approval":
            prepare_approval_update(new, old)
            return
        if ctx.subresource == "status":
            # the status endpoint changes status only (and records who changed it; apps kinds: annotations too)
            status = new.get("status")
            new_meta = new.get("metadata")
            managed = (new_meta or {}).get("managedFields")
            new.clear()
            new.update({k: v for k, v in old.items() if k != "status"})
            annotations = (new_meta or {}).get("annotations")
            new["metadata"] = dict(old["metadata"])
            if res.group == "apps" and res.kind in STATUS_WRITES_ANNOTATIONS:
                if annotations:
                    new["metadata"]["annotations"] = annotations
                else:
                    new["metadata"].pop("annotations", None)
            if managed is not None:
                new["metadata"]["managedFields"] = managed
            if status is not None:
                new["status"] = status
            return
        if res.has_status:
            if "status" in old:
                new["status"] = old["status"]
            else:
                new.pop("status", None)
        meta = new["metadata"]
        old_gen = old["metadata"].get("generation")
        if self.tracks_generation(res):
            meta["generation"] = (old_gen or 0) + 1 if spec_changed(new, old) else (old_gen or 1)
        elif old_gen is not None:
            meta["generation"] = old_gen

    def validate(self, ctx: WriteContext, obj: dict[str, Any]) -> list[FieldError]:
        from .validating import validate_object

        return validate_object(ctx.resource, obj, None)

    def validate_update(self, ctx: WriteContext, new: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
        from .validating import validate_object

        return validate_object(ctx.resource, new, old)

    async def before_write(self, ctx: WriteContext, new: dict[str, Any], old: dict[str, Any] | None) -> None:
        """Last step before storing (allocations); register in-flight reservations on `ctx.release`."""

    async def after_delete(self, ctx: WriteContext, obj: dict[str, Any]) -> None:
        """After the object left the store (release allocations)."""

    def deletion_finalizers(self, obj: dict[str, Any]) -> tuple[str, ...]:
        """Finalizers the server adds when the object is first deleted (CRDs: instance cleanup)."""
        return ()

    def mark_deleting(self, obj: dict[str, Any]) -> None:
        """Changes besides deletionTimestamp/finalizers when a delete starts (conditions, phases)."""

    def grace_period(self, obj: dict[str, Any], requested: int | None) -> int | None:
        """Upstream's CheckGracefulDelete: the grace period a first DELETE gives `obj` (`requested` is the
        DeleteOptions' gracePeriodSeconds), or None for kinds deleted at once (all but Pods)."""
        return None

