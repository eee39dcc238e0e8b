"""Read JSON `null`s the way Go's decoder does for built-in kinds.

Go leaves a field untouched when the JSON value is null (so it reads back absent, or as its zero value), and a
null element of a list decodes to the element type's zero value (`""`, `0`, `false`, `{}`). Doing the same
before validation means validators only ever see values of their declared types.
"""

from __future__ import annotations

from typing import Any

from .field_shapes import BOOLEAN, INTEGER, LIST, MAP, NUMBER, STRING, STRUCT, Shape

_ZERO = {STRING: "", INTEGER: 0, NUMBER: 0, BOOLEAN: False}


def _zero(shape: Shape | None) -> Any:
    if shape is None:
        return None
    if shape.kind in _ZERO:
        return _ZERO[shape.kind]
    if shape.kind == STRUCT:
        return {}
    return None


def drop_go_nulls(shape: Shape | None, value: Any) -> Any:
    """`value` with nulls read as Go reads them for `shape` (objects are changed in place)."""
    if shape is None:
        return value
    if shape.kind == STRUCT and isinstance(value, dict):
        for key in [k for k, v in value.items() if v is None and (k in shape.props or not shape.open)]:
            del value[key]
        for key, child in value.items():
            sub = shape.props.get(key)
            if sub is not None:
                value[key] = drop_go_nulls(sub, child)
    elif shape.kind == MAP and isinstance(value, dict):
        for key, child in value.items():
            value[key] = _zero(shape.item) if child is None and shape.item is not None and shape.item.kind in _ZERO \
                else drop_go_nulls(shape.item, child)
    elif shape.kind == LIST and isinstance(value, list):
        for i, child in enumerate(value):
            value[i] = _zero(shape.item) if child is None else drop_go_nulls(shape.item, child)
    return value
