"""Table output of custom resources from a CRD version's `additionalPrinterColumns`.

As the apiserver's CR table convertor: a `Name` column first, then one column per printer column (or
a default `Age` column when there are none). Cells: `string` columns print the first JSONPath result as
text (JSON for maps and lists), `integer`/`number`/`boolean` pass typed values, `date` columns are
turned into an age (`5m`, `3d`) by the server; a missing value is `None`. `priority` goes to the column
definition (kubectl hides priority > 0 unless `-o wide`).
"""

from __future__ import annotations

import datetime
import functools
from collections.abc import Mapping
from typing import Any

import orjson
from mini_kube.apiserver.crd import gofmt
from mini_kube.apiserver.crd.jsonpath import JSONPath, JSONPathError, compile_path
from mini_kube.machinery.duration import human_duration
from mini_kube.machinery.times import now as utc_now
from mini_kube.machinery.times import try_parse_time


@functools.cache
def _meta_doc(field: str) -> str:
    from mini_kube.apiserver.schema.definitions import definitions
    props = definitions()["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"]["properties"]
    return props[field]["description"]


def default_columns() -> list[dict[str, Any]]:
    """The columns served when a version has no additionalPrinterColumns."""
    return [{"name": "Age", "type": "date", "description": _meta_doc("creationTimestamp"),
             "jsonPath": ".metadata.creationTimestamp"}]


def scale_columns(scale: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The columns of a Table of the scale subresource."""
    cols = []
    if scale and scale.get("specReplicasPath"):
        cols.append({"name": "Desired", "type": "integer", "description": "Number of desired replicas",
                     "jsonPath": ".spec.replicas"})
    if scale and scale.get("statusReplicasPath"):
        cols.append({"name": "Available", "type": "integer", "description": "Number of actual replicas",
                     "jsonPath": ".status.replicas"})
    return cols + default_columns()


def age(text: str, now: datetime.datetime | None = None) -> str:
    """The cell of a `date` column: `<unknown>` for null, `<invalid>` when unparseable, else the age."""
    if text in ("", "null"):
        return "<unknown>"
    when = try_parse_time(text)
    if when is None:
        return "<invalid>"
    now = now or utc_now()
    return human_duration((now - when).total_seconds())


def _text(value: Any) -> str:
    """How jsonpath prints one value: JSON for maps and lists, Go's `%v` for scalars."""
    if isinstance(value, dict | list):
        return orjson.dumps(value).decode()
    if isinstance(value, str):
        return value
    return gofmt.go_number(value) if isinstance(value, bool | int | float) else str(value)


def cell(kind: str, value: Any, now: datetime.datetime | None = None) -> Any:
    """cellForJSONValue: the typed cell of one non-missing value."""
    if value is None:
        return None
    numeric = isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "string":
        return _text(value)
    if kind == "integer" and numeric:
        return int(value)
    if kind == "number" and numeric:
        return float(value)
    if kind == "boolean" and isinstance(value, bool):
        return value
    if kind == "date" and isinstance(value, str):
        return age(value, now)
    return None


class TablePrinter:
    """Column definitions and row cells for one CRD version (compile once, reuse per request)."""

    def __init__(self, printer_columns: list[dict[str, Any]] | tuple[dict[str, Any], ...] | None) -> None:
        columns = list(printer_columns or ()) or default_columns()
        self.definitions: list[dict[str, Any]] = [{
            "name": "Name", "type": "string", "format": "name", "description": _meta_doc("name"), "priority": 0}]
        self.paths: list[tuple[str, JSONPath | None]] = []
        for col in columns:
            path = col.get("jsonPath", "")
            try:
                compiled: JSONPath | None = compile_path(path)
            except JSONPathError:
                compiled = None
            self.paths.append((col.get("type", "string"), compiled))
            self.definitions.append({
                "name": col.get("name", ""), "type": col.get("type", ""), "format": col.get("format") or "",
                "description": col.get("description") or f"Custom resource definition column (in JSONPath format): "
                                                          f"{path}",
                "priority": col.get("priority") or 0,
            })

    def cells(self, obj: dict[str, Any], now: datetime.datetime | None = None) -> list[Any]:
        """The cells of one object's row: its name, then one cell per column."""
        row: list[Any] = [(obj.get("metadata") or {}).get("name", "")]
        for kind, path in self.paths:
            found = path.find(obj) if path is not None else []
            row.append(cell(kind, found[0], now) if found else None)
        return row

    def row(self, obj: dict[str, Any], now: datetime.datetime | None = None) -> dict[str, Any]:
        """A Table row without the object (the caller adds `object` per includeObject)."""
        return {"cells": self.cells(obj, now)}

    def table(self, objs: Any, now: datetime.datetime, include_object: str = "Metadata",
              list_meta: Mapping[str, Any] | None = None, headers: bool = True, version: str = "v1"
              ) -> dict[str, Any]:
        """A whole meta.k8s.io/v1 Table of these custom resources (always v1, whatever `version` asks)."""
        rows = []
        for obj in objs:
            row = self.row(obj, now)
            if include_object == "Object":
                row["object"] = obj
            elif include_object == "None":
                row["object"] = None
            else:
                row["object"] = {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                                 "metadata": obj.get("metadata") or {}}
            rows.append(row)
        meta = {k: v for k, v in (list_meta or {}).items()
                if k in ("resourceVersion", "continue", "remainingItemCount") and v not in (None, "")}
        return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": meta,
                "columnDefinitions": self.definitions if headers else None, "rows": rows}


def table(resource: Any, objs: Any, now: datetime.datetime, include_object: str = "Metadata",
          list_meta: dict[str, Any] | None = None, headers: bool = True) -> dict[str, Any]:
    """A whole meta.k8s.io/v1 Table of custom resources of `resource` (a CRD `ResourceType` row)."""
    printer = resource.printer if isinstance(resource.printer, TablePrinter) else TablePrinter(resource.printer_columns)
    return printer.table(objs, now, include_object, list_meta, headers)
