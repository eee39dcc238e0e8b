"""Columns of custom resources, from the CRD's additionalPrinterColumns (simple JSONPath, typed cells)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import orjson
from mini_kube.apiserver.printers.columns import NAME, Column
from mini_kube.apiserver.printers.docs import AGE_DOC
from mini_kube.apiserver.printers.humanize import UNKNOWN, epoch, since

_TOKEN = re.compile(r"\.([^.\[\]]+)|\[(\d+)\]|\['([^']*)'\]|\[\"([^\"]*)\"\]")
_MISSING = object()
DEFAULT_COLUMNS: tuple[dict[str, Any], ...] = (
    {"name": "Age", "type": "date", "description": AGE_DOC, "jsonPath": ".metadata.creationTimestamp"},)


def parse_path(path: str) -> list[str | int] | None:
    """Split a simple JSONPath (`.spec.items[0].name`, `.metadata['a.b']`) into steps; None if not simple."""
    path = path.strip()
    if path.startswith("{") and path.endswith("}"):
        path = path[1:-1]
    steps: list[str | int] = []
    position = 0
    while position < len(path):
        match = _TOKEN.match(path, position)
        if not match:
            return None
        name, index, quoted, double = match.groups()
        steps.append(int(index) if index is not None else next(s for s in (name, quoted, double) if s is not None))
        position = match.end()
    return steps


def _lookup(obj: Any, steps: list[str | int]) -> Any:
    for step in steps:
        if isinstance(step, int):
            if not isinstance(obj, list) or step >= len(obj):
                return _MISSING
            obj = obj[step]
        else:
            if not isinstance(obj, dict) or step not in obj:
                return _MISSING
            obj = obj[step]
    return obj


def _text(value: Any) -> str | None:
    """How jsonpath prints one result: JSON for maps and lists, plain text for scalars."""
    if value is None:
        return None
    if isinstance(value, dict | list):
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _typed(kind: str, value: Any, now: float) -> Any:
    """A cell for a non-string column (cellForJSONValue)."""
    if value is None:
        return None
    if kind == "integer" and isinstance(value, int | float) and not isinstance(value, bool):
        return int(value)
    if kind == "number" and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if kind == "boolean" and isinstance(value, bool):
        return value
    if kind == "date" and isinstance(value, str):
        if not value or value == "null":
            return UNKNOWN
        return since(value, now) if epoch(value) is not None else "<invalid>"
    return None


def _cell_fn(kind: str, steps: list[str | int] | None) -> Callable[[dict, float], Any]:
    def cell(obj: dict, now: float) -> Any:
        if steps is None:
            return None
        value = _lookup(obj, steps)
        if value is _MISSING:
            return None
        return _text(value) if kind == "string" else _typed(kind, value, now)

    return cell


def custom_columns(specs: tuple[dict[str, Any], ...]) -> tuple[tuple[Column, ...], list[Callable]]:
    """Column definitions and per-column cell functions for a CRD version's printer columns."""
    columns = [NAME]
    cells: list[Callable] = []
    for spec in specs or DEFAULT_COLUMNS:
        path = spec.get("jsonPath", "")
        description = spec.get("description") or f"Custom resource definition column (in JSONPath format): {path}"
        columns.append(Column(spec.get("name", ""), spec.get("type", "string"), description,
                              spec.get("priority") or 0, spec.get("format") or ""))
        cells.append(_cell_fn(spec.get("type", "string"), parse_path(path)))
    return tuple(columns), cells
