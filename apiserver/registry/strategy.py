"""Per-resource strategies: defaulting, preparation, validation and status rules (registry/rest in upstream).

`Strategy` is the generic behaviour every kind gets, its flags say what upstream's strategy of the kind does
(generation, status writes, what a DELETE answers); kinds with extra rules subclass it in
`apiserver/registry/strategies/`. Each row of the resource table carries its own (`registry/kinds.py`). A strategy
sees plain dicts and raises or returns `FieldError`s; validation is the row's validator.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ..errors import FieldError
from .defaulting import default_object
from .generic import WriteContext
from .validating import validate_object

if TYPE_CHECKING:
    from ..resources import ResourceType

__all__ = ["Strategy", "WriteContext", "spec_changed", "STATUS_METADATA"]

# The metadata a status write takes from the request: upstream's status strategies reset only the spec (and the
# generic update keeps the identity fields), so labels, annotations, finalizers and owner references change
# there too, unless the kind's strategy resets them (ResetObjectMetaForStatus and friends).
STATUS_METADATA = ("labels", "annotations", "ownerReferences", "finalizers")


def spec_changed(new: dict[str, Any], old: dict[str, Any]) -> bool:
    """Whatever is not metadata or status counts as spec (upstream compares spec; CRs compare all but those)."""
    keys = (set(new) | set(old)) - {"metadata", "status", "apiVersion", "kind"}
    return any(new.get(k) != old.get(k) for k in keys)


def take_metadata(old: dict[str, Any], given: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    """`old` metadata with `keys` as the request gave them (a key the request left out is dropped, as Go's
    assignment of an empty field)."""
    meta = dict(old)
    for key in keys:
        if given.get(key) is not None:
            meta[key] = given[key]
        else:
            meta.pop(key, None)
    return meta


class Strategy:
    """Generic rules for one resource.

    `generation`: metadata.generation tracks spec changes (the upstream strategies that set it).
    `status_metadata`: the metadata fields a status write takes from the request (the rest stays as stored):
    all of STATUS_METADATA for most kinds; Deployments keep their labels, Pods their owner references, the kinds
    whose status strategy calls ResetObjectMetaForStatus (or copies the old ObjectMeta) keep all of them.
    `unconditional_update`: a PUT without metadata.resourceVersion overwrites whatever is stored (upstream's
    AllowUnconditionalUpdate; true for almost all kinds), else it is 422 `must be specified for an update`.
    `returns_deleted_object`: a completed DELETE answers the object, not a Status (upstream's ReturnDeletedObject).
    `default_gc_policy`: the propagation of a DELETE that names none ("Orphan": core/v1 ReplicationControllers,
    upstream's DefaultGarbageCollectionPolicy; "": background).
    """

    def __init__(self, *, generation: bool = False, status_metadata: tuple[str, ...] = STATUS_METADATA,
                 unconditional_update: bool = True, returns_deleted_object: bool = False,
                 default_gc_policy: str = "") -> None:
        self.generation = generation
        self.default_gc_policy = default_gc_policy
        self.status_metadata = status_metadata
        self.unconditional_update = unconditional_update
        self.returns_deleted_object = returns_deleted_object

    def tracks_generation(self, resource: ResourceType) -> bool:
        return self.generation

    def initial_status(self, resource: ResourceType, obj: dict[str, Any]) -> dict[str, Any] | None:
        """Status a new object starts with when the kind has a status subresource (None keeps it absent)."""
        return {}

    converts_on_read = False  # `read` needs `prepare_reads` awaited first (paths skip the await otherwise)

    def read(self, res: ResourceType, obj: dict[str, Any]) -> dict[str, Any]:
        """The stored object as the request's version sees it (updates compare and patch against this)."""
        return obj

    async def prepare_reads(self, res: ResourceType, objs: Iterable[dict[str, Any]]) -> None:
        """Whatever `read` needs done first for these stored objects that cannot be done synchronously (custom
        resources converted by webhook); every path that reads stored objects through `read` awaits it."""

    def default(self, ctx: WriteContext, obj: dict[str, Any]) -> None:
        """Apply schema defaults (the upstream definitions of built-in kinds)."""
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
        if ctx.subresource == "status":
            # the status endpoint changes status and the metadata the kind lets it (and records who changed it)
            status = new.get("status")
            given = new.get("metadata") or {}
            new.clear()
            new.update({k: v for k, v in old.items() if k != "status"})
            new["metadata"] = take_metadata(old["metadata"], given, self.status_metadata)
            if given.get("managedFields") is not None:
                new["metadata"]["managedFields"] = given["managedFields"]
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
        return validate_object(ctx.resource, obj, None)

    def validate_update(self, ctx: WriteContext, new: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
        return validate_object(ctx.resource, new, old)

    async def before_write(self, ctx: WriteContext, new: dict[str, Any], old: dict[str, Any] | None) -> None:
        """Last step before storing (allocations); register in-flight reservations on `ctx.release`."""

    async def after_delete(self, ctx: WriteContext, obj: dict[str, Any]) -> None:
        """After the object left the store (release allocations)."""

    def deletion_finalizers(self, obj: dict[str, Any]) -> tuple[str, ...]:
        """Finalizers the server adds when the object is first deleted (CRDs: instance cleanup)."""
        return ()

    def waits_for_finalization(self, obj: dict[str, Any]) -> bool:
        """A DELETE only marks the object, even with no finalizers: a controller finalizes it (Namespaces)."""
        return False

    def finalized(self, obj: dict[str, Any]) -> bool:
        """Whether a terminating object without finalizers may go on an update (upstream's
        ShouldDeleteDuringUpdate; a Namespace waits for its spec.finalizers too)."""
        return True

    def mark_deleting(self, obj: dict[str, Any]) -> None:
        """Changes besides deletionTimestamp/finalizers when a delete starts (conditions, phases)."""

    def grace_period(self, obj: dict[str, Any], requested: int | None) -> int | None:
        """Upstream's CheckGracefulDelete: the grace period a first DELETE gives `obj` (`requested` is the
        DeleteOptions' gracePeriodSeconds), or None for kinds deleted at once (all but Pods)."""
        return None

