"""Table output (`as=Table`): column definitions and rows for built-in kinds and custom resources."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ..resources import ResourceType

DEFAULT_COLUMNS = [
    {"name": "Name", "type": "string", "format": "name", "description": "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names", "priority": 0},
    {"name": "Created At", "type": "date", "format": "", "description": "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata", "priority": 0},
]


def build_table(res: ResourceType, objs: list[dict[str, Any]], now: datetime, include_object: str,
                list_meta: dict[str, Any], version: str = "v1") -> dict[str, Any]:
    """A meta.k8s.io Table for these objects."""
    if res.crd is not None:
        from ..crd.printers import table as crd_table

        return crd_table(res, objs, now, include_object, list_meta)
    try:
        from ..printers import table
    except ImportError:  # pragma: no cover - until the printers package lands
        return _default_table(objs, include_object, list_meta, version)
    return table(res, objs, now, include_object, list_meta)


def _default_table(objs: list[dict[str, Any]], include_object: str, list_meta: dict[str, Any],
                   version: str) -> dict[str, Any]:
    rows = []
    for obj in objs:
        meta = obj.get("metadata", {})
        row: dict[str, Any] = {"cells": [meta.get("name", ""), meta.get("creationTimestamp")]}
        if include_object == "Object":
            row["object"] = obj
        elif include_object != "None":
            row["object"] = {"kind": "PartialObjectMetadata", "apiVersion": f"meta.k8s.io/{version}",
                             "metadata": meta}
        rows.append(row)
    return {"kind": "Table", "apiVersion": f"meta.k8s.io/{version}", "metadata": list_meta,
            "columnDefinitions": DEFAULT_COLUMNS, "rows": rows}
