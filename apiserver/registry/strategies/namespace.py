"""Namespaces: the `kubernetes` finalizer, the metadata.name label, phase Active/Terminating; a DELETE marks the
Namespace Terminating and the namespace controller finalizes it (upstream's namespace REST and its
ShouldDeleteDuringUpdate: the object goes once spec.finalizers is empty too)."""

from __future__ import annotations

from typing import Any

from ...resources import ResourceType
from ..strategy import STATUS_METADATA, Strategy, WriteContext, take_metadata

NAME_LABEL = "kubernetes.io/metadata.name"


class NamespaceStrategy(Strategy):
    def initial_status(self, resource: ResourceType, obj: dict[str, Any]) -> dict[str, Any] | None:
        return {"phase": "Active"}

    def default(self, ctx: WriteContext, obj: dict[str, Any]) -> None:
        super().default(ctx, obj)
        meta = obj["metadata"]
        if meta.get("name"):
            meta.setdefault("labels", {})[NAME_LABEL] = meta["name"]
        spec = obj.setdefault("spec", {})
        if ctx.subresource != "finalize" and "finalizers" not in spec:
            spec["finalizers"] = ["kubernetes"]

    def prepare_for_create(self, ctx: WriteContext, obj: dict[str, Any]) -> None:
        super().prepare_for_create(ctx, obj)
        obj["spec"] = {**obj.get("spec", {}), "finalizers": ["kubernetes"]}

    def prepare_for_update(self, ctx: WriteContext, new: dict[str, Any], old: dict[str, Any]) -> None:
        if ctx.subresource == "finalize":  # spec.finalizers and metadata; the status stays
            finalizers = (new.get("spec") or {}).get("finalizers") or []
            given = new.get("metadata") or {}
            new.clear()
            new.update({**old, "spec": {**old.get("spec", {}), "finalizers": finalizers}})
            new["metadata"] = take_metadata(old["metadata"], given, STATUS_METADATA)
            if given.get("managedFields") is not None:
                new["metadata"]["managedFields"] = given["managedFields"]
            if not finalizers:
                new["spec"].pop("finalizers", None)
        else:
            if ctx.subresource != "status":
                new["spec"] = old.get("spec", {})  # spec.finalizers changes only through /finalize
            super().prepare_for_update(ctx, new, old)
        # the name label is a default every decoded Namespace gets, whatever endpoint it came through
        meta = new["metadata"]
        meta["labels"] = {**(meta.get("labels") or {}), NAME_LABEL: meta["name"]}

    def waits_for_finalization(self, obj: dict[str, Any]) -> bool:
        return True

    def finalized(self, obj: dict[str, Any]) -> bool:
        return not (obj.get("spec") or {}).get("finalizers")

    def mark_deleting(self, obj: dict[str, Any]) -> None:
        obj.setdefault("status", {})["phase"] = "Terminating"
