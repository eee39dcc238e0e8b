"""Go's zero values for fields without `omitempty`: what upstream serializes even when nothing set them.

A new ReplicaSet is served as `status: {replicas: 0}`, not `status: {}`: Go writes every struct field that lacks
`omitempty`, and clients generated from the OpenAPI (the official Python client) refuse objects whose required
fields are missing. The upstream definitions mark those fields `required`; a few optional ones are written all
the same (go_shapes.ZERO_FIELDS). Scalars get their zero value wherever their enclosing object is present.
"""

from __future__ import annotations

import functools
from typing import Any

from .definitions import REF_PREFIX, definitions
from .go_shapes import STRUCT_FIELDS, ZERO_FIELDS

ZERO: dict[str | None, Any] = {"integer": 0, "number": 0, "boolean": False, "string": ""}  # by _type


def _ref(schema: dict[str, Any]) -> str | None:
    ref = schema.get("$ref") or next((s.get("$ref") for s in schema.get("allOf") or () if "$ref" in s), None)
    return ref[len(REF_PREFIX):] if ref and ref.startswith(REF_PREFIX) else None


def _type(schema: dict[str, Any]) -> str | None:
    value = schema.get("type")
    if isinstance(value, list):
        value = next((t for t in value if t != "null"), None)
    return value


def _fillable(schema: dict[str, Any] | None) -> bool:
    """A scalar with a zero value Go writes (a zero time is written as null: left out here)."""
    return schema is not None and _ref(schema) is None and _type(schema) in ZERO and \
        schema.get("format") != "date-time"


def _structs(name: str) -> tuple[str, ...]:
    """Struct-valued (non-pointer) fields of `name`: Go writes them as `{}` and their own zero fields."""
    props = (definitions().get(name) or {}).get("properties") or {}
    return tuple(p for p in STRUCT_FIELDS.get(name, ()) if p in props and _is_struct(props[p]))


def _is_struct(schema: dict[str, Any]) -> bool:
    """A reference to a struct definition (times are written as strings)."""
    ref = _ref(schema)
    return ref is not None and not ref.endswith((".Time", ".MicroTime"))


@functools.cache
def _plan(name: str) -> tuple[tuple[tuple[str, Any], ...], tuple[tuple[str, str, bool], ...]]:
    """(fields to fill, children to descend: (field, definition, is_list)) for one definition."""
    schema = definitions().get(name) or {}
    props = schema.get("properties") or {}
    wanted = set(schema.get("required") or ()) - set(ZERO_FIELDS.get(name, {}))
    scalars = tuple((p, ZERO[_type(props[p])]) for p in sorted(wanted) if _fillable(props.get(p))) + \
        tuple(ZERO_FIELDS.get(name, {}).items()) + tuple((p, None) for p in _structs(name))
    children = []
    for prop, sub in props.items():
        target, is_list = _ref(sub), False
        if target is None and _type(sub) == "array":
            target, is_list = _ref(sub.get("items") or {}), True
        if target is not None and _has_work(target, frozenset({name})):
            children.append((prop, target, is_list))
    return scalars, tuple(children)


def _has_work(name: str, seen: frozenset[str]) -> bool:
    if name in seen:
        return False
    schema = definitions().get(name) or {}
    props = schema.get("properties") or {}
    wanted = set(schema.get("required") or ())
    if any(_fillable(props.get(p)) for p in wanted) or _structs(name) or name in ZERO_FIELDS:
        return True
    for sub in props.values():
        target = _ref(sub) or (_ref(sub.get("items") or {}) if _type(sub) == "array" else None)
        if target is not None and _has_work(target, seen | {name}):
            return True
    return False


def fill_zero_values(definition: str, obj: Any) -> None:
    """Set missing non-omitempty scalar fields to Go's zero value, in place, throughout `obj`."""
    if not isinstance(obj, dict):
        return
    scalars, children = _plan(definition)
    for prop, zero in scalars:
        if prop not in obj:
            obj[prop] = {} if zero is None else zero
    for prop, child, is_list in children:
        value = obj.get(prop)
        if is_list and isinstance(value, list):
            for item in value:
                fill_zero_values(child, item)
        elif isinstance(value, dict):
            fill_zero_values(child, value)
