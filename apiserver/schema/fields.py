"""Strict field validation: unknown fields, duplicate fields and wrongly typed values.

What the apiserver's strict JSON decoder (sigs.k8s.io/json) reports, with its paths:
`unknown field "spec.template.spec.containers[0].imagez"`, `duplicate field "metadata.name"`, and the
first type error `json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of
type int32`. Messages for whole requests are built in `messages.py`.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

import orjson
from mini_kube.apiserver.gofmt import json_kind
from mini_kube.apiserver.schema import field_shapes as fs
from mini_kube.apiserver.schema import gotime
from mini_kube.apiserver.schema.field_shapes import Shape
from mini_kube.machinery import quantity


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def shape_of(definition_or_shape: str | Shape) -> Shape:
    if isinstance(definition_or_shape, Shape):
        return definition_or_shape
    return fs.definition_shape(definition_or_shape)


# --- unknown fields ---------------------------------------------------------------------------

def unknown_fields(definition: str | Shape, obj: Any) -> list[str]:
    """Paths of fields the schema does not know, in document order (`spec.replicaz`, `bogus`)."""
    out: list[str] = []
    _unknown(shape_of(definition), obj, "", out)
    return out


def _unknown(shape: Shape, value: Any, path: str, out: list[str]) -> None:
    kind = shape.kind
    if kind == fs.STRUCT:
        if not isinstance(value, dict):
            return
        props = shape.props
        for key, sub in value.items():
            child = props.get(key)
            if child is None:
                if not shape.open:
                    out.append(_join(path, key))
            elif child.kind in _CONTAINERS and sub is not None:
                _unknown(child, sub, _join(path, key), out)
    elif (item := shape.item) is None or item.kind not in _CONTAINERS:
        return  # scalars, and lists or maps of them, have no fields
    elif kind == fs.LIST:
        if isinstance(value, list):
            for i, sub in enumerate(value):
                _unknown(item, sub, f"{path}[{i}]", out)
    elif kind == fs.MAP and isinstance(value, dict):
        for key, sub in value.items():
            _unknown(item, sub, _join(path, key), out)


_CONTAINERS = (fs.STRUCT, fs.LIST, fs.MAP)


def drop_unknown(definition: str | Shape, obj: Any) -> None:
    """Remove, in place, the fields `unknown_fields` reports (decoding into the Go type drops them)."""
    _drop(shape_of(definition), obj)


def _drop(shape: Shape, value: Any) -> None:
    kind = shape.kind
    if kind == fs.STRUCT:
        if not isinstance(value, dict):
            return
        for key in list(value):
            child = shape.props.get(key)
            if child is None:
                if not shape.open:
                    del value[key]
            elif child.kind in _CONTAINERS and value[key] is not None:
                _drop(child, value[key])
    elif (item := shape.item) is None or item.kind not in _CONTAINERS:
        return  # scalars, and lists or maps of them, have no fields
    elif kind == fs.LIST:
        if isinstance(value, list):
            for sub in value:
                _drop(item, sub)
    elif kind == fs.MAP and isinstance(value, dict):
        for sub in value.values():
            _drop(item, sub)


# --- duplicate fields -------------------------------------------------------------------------

class _Pairs(list):
    """A JSON object as its (key, value) pairs, repeated keys kept."""


_SPACED_COLON = re.compile(rb'"\s+:')


def _key_ends(data: bytes) -> int:
    """Quote-colon pairs not preceded by a backslash: one per key, none inside strings."""
    return data.count(b'":') - data.count(b'\\":')


def may_have_duplicates(raw_json: bytes, parsed: Any) -> bool:
    """Cheap test: False means `raw_json` (already parsed as `parsed`) repeats no key.

    Every key ends with an unescaped quote and a colon, and quotes inside strings are escaped, so
    the text has as many key ends as it has keys. Re-serializing the parsed value (where repeats are
    gone) gives the count without them; any difference means a repeat. Text this count cannot read
    (a key ending in a backslash, space before a colon) goes to the exact check.
    """
    if b'\\\\"' in raw_json or _SPACED_COLON.search(raw_json):
        return True
    try:
        canonical = orjson.dumps(parsed)
    except TypeError:
        return True
    return _key_ends(raw_json) != _key_ends(canonical)


def parse_pairs(raw_json: bytes | str) -> Any:
    """Parse JSON keeping repeated keys (objects become lists of pairs)."""
    return json.loads(raw_json, object_pairs_hook=_Pairs)


def duplicate_fields(raw_json: bytes, parsed: Any = None) -> list[str]:
    """Paths of repeated keys in a JSON document, in document order (`metadata.name`).

    `parsed` (the document as already decoded) saves a parse for the cheap pre-check; without it the
    body is decoded once more with orjson, still far cheaper than the exact, pair-keeping parse.
    """
    if parsed is None:
        try:
            parsed = orjson.loads(raw_json)
        except orjson.JSONDecodeError:
            return []
    if not may_have_duplicates(raw_json, parsed):
        return []
    out: list[str] = []
    _duplicates(parse_pairs(raw_json), "", out)
    return out


def _duplicates(node: Any, path: str, out: list[str]) -> None:
    if isinstance(node, _Pairs):
        seen: set[str] = set()
        for key, value in node:
            child = _join(path, key)
            if key in seen:
                out.append(child)
            seen.add(key)
            _duplicates(value, child, out)
    elif isinstance(node, list):
        for i, value in enumerate(node):
            _duplicates(value, f"{path}[{i}]", out)


def strict_problems(definition: str | Shape, raw_json: bytes, parsed: Any) -> list[str]:
    """`duplicate field "..."` and `unknown field "..."` messages in the order the apiserver gives them.

    A field both unknown and repeated is reported once, as unknown. Values the schema leaves opaque
    (RawExtension) are not looked into; schema-free custom data is checked for repeats.
    """
    shape = shape_of(definition)
    if not may_have_duplicates(raw_json, parsed):
        return [f'unknown field "{path}"' for path in unknown_fields(shape, parsed)]
    out: list[str] = []
    _strict(shape, parse_pairs(raw_json), "", out, set())
    return out


def _strict(shape: Shape | None, node: Any, path: str, out: list[str], unknown: set[str]) -> None:
    if shape is not None and shape.kind == fs.ANY and shape.go != fs.ANY_SHAPE.go:
        return  # opaque typed value (RawExtension, FieldsV1): decoded as raw bytes
    if isinstance(node, _Pairs):
        seen: set[str] = set()
        for key, value in node:
            child_path = _join(path, key)
            child = _child(shape, key)
            if child is False:
                if child_path not in unknown:
                    unknown.add(child_path)
                    out.append(f'unknown field "{child_path}"')
                continue
            if key in seen:
                out.append(f'duplicate field "{child_path}"')
            seen.add(key)
            _strict(child, value, child_path, out, unknown)
    elif isinstance(node, list):
        item = shape.item if shape is not None and shape.kind == fs.LIST else None
        for i, value in enumerate(node):
            _strict(item, value, f"{path}[{i}]", out, unknown)


def _child(shape: Shape | None, key: str) -> Shape | None | Literal[False]:
    """The shape of a key's value; None when unconstrained; False when the key is unknown."""
    if shape is None or shape.kind == fs.ANY:
        return None
    if shape.kind == fs.MAP:
        return shape.item
    if shape.kind == fs.STRUCT:
        child = shape.props.get(key)
        if child is None:
            return None if shape.open else False
        return child
    return None


# --- type errors ------------------------------------------------------------------------------

_INT_RANGE = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}


def type_errors(definition: str | Shape, obj: Any) -> str | None:
    """The decode error for the first value of the wrong JSON type, worded like the apiserver's."""
    shape = shape_of(definition)
    if not isinstance(obj, dict):
        return f"json: cannot unmarshal {json_kind(obj, null='object')} into Go value of type {shape.go}"
    return _type_error(shape, obj, shape.struct, "")


def _number_text(value: int | float) -> str:
    return repr(value) if isinstance(value, float) else str(value)


def _mismatch(value: Any, struct: str, path: str, go: str) -> str:
    return f"json: cannot unmarshal {value} into Go struct field {struct}.{path} of type {go}"


def _quantity_error(value: Any) -> str | None:
    try:
        quantity.parse_json(value)
    except quantity.QuantityError as exc:
        return str(exc)
    return None


def _type_error(shape: Shape, value: Any, struct: str, path: str) -> str | None:
    if value is None:
        return None
    kind = shape.kind
    if kind == fs.STRUCT:
        if not isinstance(value, dict):
            return _mismatch(json_kind(value), struct, path, shape.go)
        for key, sub in value.items():
            child = shape.props.get(key)
            if child is not None and child.kind != fs.ANY:
                error = _type_error(child, sub, shape.struct, _join(path, key))
                if error:
                    return error
        return None
    if kind in (fs.MAP, fs.LIST):
        expected = dict if kind == fs.MAP else list
        if not isinstance(value, expected):
            return _mismatch(json_kind(value), struct, path, shape.go)
        if shape.item is None:  # items of any type
            return None
        items = value.values() if isinstance(value, dict) else value
        for sub in items:
            error = _type_error(shape.item, sub, struct, path)
            if error:
                return error
        return None
    if kind == fs.STRING:
        return None if isinstance(value, str) else _mismatch(json_kind(value), struct, path, shape.go)
    if kind == fs.BOOLEAN:
        return None if isinstance(value, bool) else _mismatch(json_kind(value), struct, path, shape.go)
    if kind == fs.NUMBER:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        return None if ok else _mismatch(json_kind(value), struct, path, shape.go)
    if kind in (fs.INTEGER, fs.INT_OR_STRING):
        if kind == fs.INT_OR_STRING and isinstance(value, str):
            return None
        go = shape.go if kind == fs.INTEGER else "int32"
        if isinstance(value, bool) or not isinstance(value, int | float):
            return _mismatch(json_kind(value), struct, path, go)
        low, high = _INT_RANGE.get(go, _INT_RANGE["int64"])
        if isinstance(value, float) or not low <= value <= high:
            return _mismatch("number " + _number_text(value), struct, path, go)
        return None
    if kind == fs.QUANTITY:
        return _quantity_error(value)
    if kind in (fs.TIME, fs.MICROTIME):
        if not isinstance(value, str):
            return _mismatch(json_kind(value), struct, path, shape.go)
        try:
            gotime.parse(value, micro=kind == fs.MICROTIME)
        except gotime.TimeError as exc:
            return str(exc)
    return None
