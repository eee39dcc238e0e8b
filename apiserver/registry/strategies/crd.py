"""CustomResourceDefinitions: defaults, validation, status (names accepted, established) and deletion.

The status the naming and establishing controllers would write is computed on every write, after
validation (so a valid CRD is Established as soon as it is stored). Deleting a CRD adds the instance
cleanup finalizer; `apiserver/crd_controller.py` deletes the custom resources and then the CRD.
"""

from __future__ import annotations

from typing import Any

from ...crd import crd_defaults, crd_status, lifecycle, validate_crd
from ...crd.validation import stored_versions_errors
from ...errors import FieldError
from ..strategy import Strategy, WriteContext


class CrdStrategy(Strategy):
    def default(self, ctx: WriteContext, obj: dict[str, Any]) -> None:
        super().default(ctx, obj)
        crd_defaults(obj)

    def validate(self, ctx: WriteContext, obj: dict[str, Any]) -> list[FieldError]:
        return super().validate(ctx, obj) + validate_crd(obj, None, metadata=False)

    def validate_update(self, ctx: WriteContext, new: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
        errs = super().validate_update(ctx, new, old)
        if ctx.subresource == "status":
            stored = (new.get("status") or {}).get("storedVersions")
            return errs + stored_versions_errors(stored, (new.get("spec") or {}).get("versions") or [])
        return errs + validate_crd(new, old, metadata=False)

    async def before_write(self, ctx: WriteContext, new: dict[str, Any], old: dict[str, Any] | None) -> None:
        name = (new.get("metadata") or {}).get("name")
        others = [e.obj for e in ctx.registry.cache.list(ctx.resource.key_prefix)
                  if e.obj.get("metadata", {}).get("name") != name]
        new["status"] = crd_status(new, others)

    def deletion_finalizers(self, obj: dict[str, Any]) -> tuple[str, ...]:
        if (obj.get("metadata") or {}).get("deletionTimestamp"):
            return ()
        return (lifecycle.CLEANUP_FINALIZER,)

    def mark_deleting(self, obj: dict[str, Any]) -> None:
        finalizers = (obj.get("metadata") or {}).get("finalizers") or ()
        conditions = (obj.get("status") or {}).get("conditions") or ()
        terminating = any(c.get("type") == "Terminating" for c in conditions)
        if lifecycle.CLEANUP_FINALIZER in finalizers and not terminating:
            lifecycle.mark_for_deletion(obj)
