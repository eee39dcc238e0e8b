"""Table output (`as=Table`): column definitions and rows for built-in kinds and custom resources."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ..resources import ResourceType


def build_table(res: ResourceType, objs: list[dict[str, Any]], now: datetime, include_object: str,
                list_meta: dict[str, Any], version: str = "v1", headers: bool = True) -> dict[str, Any]:
    """A meta.k8s.io Table for these objects through the row's printer (`headers=False`: no column definitions,
    as in later watch events)."""
    printer = res.printer
    if printer is None:  # a row built without its parts
        from ..printers import printer_for  # imported on first use: most requests never ask for a Table

        printer = printer_for(res)
    return printer.table(objs, now, include_object, list_meta, headers=headers, version=version)
