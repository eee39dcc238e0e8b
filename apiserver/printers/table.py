"""Whole `meta.k8s.io/v1` Table responses: column definitions, rows with cells and the embedded object."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any, Literal

from mini_kube.apiserver.printers.humanize import now_seconds
from mini_kube.apiserver.printers.registry import printer_for
from mini_kube.apiserver.resources import ResourceType

IncludeObject = Literal["Metadata", "Object", "None"]
PARTIAL_KIND = "PartialObjectMetadata"
META_API_VERSION = "meta.k8s.io/v1"


def columns(resource: ResourceType) -> list[dict]:
    """The Table column definitions of a resource, all priorities included."""
    return printer_for(resource).column_dicts()


def cells(resource: ResourceType, obj: dict, now: datetime) -> list:
    """The cells of one object's row, in column order (the server always prints wide)."""
    return printer_for(resource).row(obj, now_seconds(now))


def partial_metadata(obj: Mapping[str, Any]) -> dict:
    """The object as PartialObjectMetadata (what `includeObject=Metadata` embeds in each row)."""
    return {"kind": PARTIAL_KIND, "apiVersion": META_API_VERSION, "metadata": obj.get("metadata") or {}}


def list_metadata(list_meta: Mapping[str, Any] | None) -> dict:
    """ListMeta with empty fields left out, as Go's omitempty does."""
    meta: dict[str, Any] = {}
    if not list_meta:
        return meta
    for key in ("resourceVersion", "continue"):
        if list_meta.get(key):
            meta[key] = list_meta[key]
    if list_meta.get("remainingItemCount") is not None:
        meta["remainingItemCount"] = list_meta["remainingItemCount"]
    return meta


def table(resource: ResourceType, objs: Iterable[dict], now: datetime, include_object: IncludeObject = "Metadata",
          list_meta: Mapping[str, Any] | None = None, headers: bool = True, version: str = "v1") -> dict:
    """A full Table for `objs`. `list_meta` carries resourceVersion/continue/remainingItemCount; for a single
    object pass its own resourceVersion. `headers=False` leaves columnDefinitions null (watch events after the
    first, or `?noHeaders`). `version` is the meta.k8s.io version asked for (`v1` or `v1beta1`)."""
    api_version = f"meta.k8s.io/{version}"
    printer = printer_for(resource)
    seconds = now_seconds(now)
    row_fn, conditions_fn = printer.row, printer.conditions
    rows: list[dict] | None = []
    for obj in objs:
        row: dict[str, Any] = {"cells": row_fn(obj, seconds)}
        if conditions_fn is not None and (conditions := conditions_fn(obj)):
            row["conditions"] = [dict(condition) for condition in conditions]
        if include_object == "Metadata":
            row["object"] = {"kind": PARTIAL_KIND, "apiVersion": api_version, "metadata": obj.get("metadata") or {}}
        elif include_object == "Object":
            row["object"] = obj
        else:
            row["object"] = None
        rows.append(row)
    if not rows and printer.default:
        rows = None  # the default convertor never allocates rows for an empty list
    return {"kind": "Table", "apiVersion": api_version, "metadata": list_metadata(list_meta),
            "columnDefinitions": printer.column_dicts() if headers else None, "rows": rows}
