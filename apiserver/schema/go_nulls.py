"""Read JSON `null`s and quantities the way Go's decoder does for built-in kinds.

Go leaves a field untouched when the JSON value is null (so it reads back absent, or as its zero value), and a
null element of a list decodes to the element type's zero value (`""`, `0`, `false`, `{}`, a zero Quantity).
A Quantity (string or number) decodes to the text apimachinery writes back: `0.5` and `"0.5"` become `"500m"`;
a Time to UTC to the second, a MicroTime to UTC to the microsecond.
Doing the same before validation means validators only ever see values of their declared types, and stored
objects read back as on a real cluster. Values must have passed `fields.type_errors` first.
"""

from __future__ import annotations

from typing import Any

from mini_kube.machinery.quantity import parse_quantity

from . import gotime
from .field_shapes import (
    BOOLEAN,
    INTEGER,
    LIST,
    MAP,
    MICROTIME,
    NUMBER,
    QUANTITY,
    STRING,
    STRUCT,
    TIME,
    Shape,
)

_ZERO = {STRING: "", INTEGER: 0, NUMBER: 0, BOOLEAN: False, QUANTITY: "0"}


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
    if shape.kind == QUANTITY:
        quantity = parse_quantity(value) if value is not None else None
        return value if quantity is None else str(quantity)
    if shape.kind in (TIME, MICROTIME) and isinstance(value, str):
        try:
            return gotime.written(value, micro=shape.kind == MICROTIME)
        except gotime.TimeError:
            return value  # type_errors has reported it
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
