"""Whole `meta.k8s.io/v1` Table responses: column definitions, rows with cells and the embedded object."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any, Literal

from mini_kube.apiserver.printers.humanize import now_seconds
from mini_kube.apiserver.printers.printer import PARTIAL_KIND, list_metadata
from mini_kube.apiserver.printers.registry import builtin_printer_for, printer_for
from mini_kube.apiserver.resources import ResourceType

IncludeObject = Literal["Metadata", "Object", "None"]
META_API_VERSION = "meta.k8s.io/v1"
__all__ = ["cells", "columns", "list_metadata", "partial_metadata", "table"]


def columns(resource: ResourceType) -> list[dict]:
    """The Table column definitions of a resource, all priorities included."""
    return builtin_printer_for(resource).column_dicts()


def cells(resource: ResourceType, obj: dict, now: datetime) -> list:
    """The cells of one object's row, in column order (the server always prints wide)."""
    return builtin_printer_for(resource).row(obj, now_seconds(now))


def partial_metadata(obj: Mapping[str, Any]) -> dict:
    """The object as PartialObjectMetadata (what `includeObject=Metadata` embeds in each row)."""
    return {"kind": PARTIAL_KIND, "apiVersion": META_API_VERSION, "metadata": obj.get("metadata") or {}}


def table(resource: ResourceType, objs: Iterable[dict], now: datetime, include_object: IncludeObject = "Metadata",
          list_meta: Mapping[str, Any] | None = None, headers: bool = True, version: str = "v1") -> dict:
    """A full Table for `objs` through the resource's printer (see `Printer.table`)."""
    return printer_for(resource).table(objs, now, include_object, list_meta, headers=headers, version=version)
