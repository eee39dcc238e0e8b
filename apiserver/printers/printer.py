"""One kind's Table printer: its column definitions, the function producing a row's cells, and whole
`meta.k8s.io` Tables of its objects (what a row's `printer` does for built-in kinds)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from mini_kube.apiserver.printers.columns import Column
from mini_kube.apiserver.printers.humanize import now_seconds

RowFn = Callable[[dict[str, Any], float], list]
PARTIAL_KIND = "PartialObjectMetadata"


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


@dataclass(slots=True)
class Printer:
    """Column definitions, the function producing a row's cells, and (for pods) row conditions."""

    columns: tuple[Column, ...]
    row: RowFn
    conditions: Callable[[dict[str, Any]], list | None] | None = None
    default: bool = False
    _dicts: list[dict] | None = field(default=None, repr=False)

    def column_dicts(self) -> list[dict]:
        """The definitions as JSON-ready dicts (fresh copies; descriptions resolved once)."""
        if self._dicts is None:
            self._dicts = [column.as_dict() for column in self.columns]
        return [dict(d) for d in self._dicts]

    def table(self, objs: Iterable[dict], now: datetime, include_object: str = "Metadata",
              list_meta: Mapping[str, Any] | None = None, headers: bool = True, version: str = "v1") -> dict:
        """A full Table for `objs`. `list_meta` carries resourceVersion/continue/remainingItemCount; for a single
        object pass its own resourceVersion. `headers=False` leaves columnDefinitions null (watch events after
        the first, or `?noHeaders`). `version` is the meta.k8s.io version asked for (`v1` or `v1beta1`)."""
        api_version = f"meta.k8s.io/{version}"
        seconds = now_seconds(now)
        row_fn, conditions_fn = self.row, self.conditions
        rows: list[dict] = []
        for obj in objs:
            row: dict[str, Any] = {"cells": row_fn(obj, seconds)}
            if conditions_fn is not None and (conditions := conditions_fn(obj)):
                row["conditions"] = [dict(condition) for condition in conditions]
            if include_object == "Metadata":
                row["object"] = {"kind": PARTIAL_KIND, "apiVersion": api_version,
                                 "metadata": obj.get("metadata") or {}}
            elif include_object == "Object":
                row["object"] = obj
            else:
                row["object"] = None
            rows.append(row)
        return {"kind": "Table", "apiVersion": api_version, "metadata": list_metadata(list_meta),
                "columnDefinitions": self.column_dicts() if headers else None,
                "rows": None if not rows and self.default else rows}  # the default convertor allocates no rows
