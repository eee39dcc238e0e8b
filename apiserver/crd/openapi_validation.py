"""Validate a JSON value against a compiled schema as kube-openapi does, worded as the apiserver words it.

kube-openapi reports `spec.replicas in body should be greater than or equal to 1`; the apiserver turns
each result into a field error (`Required value`, `Unsupported value`, `Too long`, `Too many`, `Invalid
value`). On update, errors inside values equal to their old counterpart are dropped (ratcheting).
"""

from __future__ import annotations

import math
from typing import Any

import orjson
from mini_kube.apiserver.crd import formats, gofmt
from mini_kube.apiserver.crd.listtype import map_key, map_list_index
from mini_kube.apiserver.crd.structural import MISSING, Node
from mini_kube.apiserver.errors import FieldError

_JSON_TYPES = {bool: "boolean", str: "string", int: "integer", float: "number", list: "array", dict: "object",
               type(None): "null"}


def _go_format_of(value: Any) -> str:
    """The Go format name kube-openapi infers for a decoded number (int64 / float64)."""
    if isinstance(value, bool):
        return ""
    if isinstance(value, int):
        return "int64"
    if isinstance(value, float):
        return "float64"
    return ""


def strict_equal(a: Any, b: Any) -> bool:
    """Go's reflect.DeepEqual on JSON values: 1, 1.0 and true differ."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(strict_equal(v, b[k]) for k, v in a.items())
    if isinstance(a, list):
        return len(a) == len(b) and all(strict_equal(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def _is_integral(f: float) -> bool:
    if math.isnan(f) or math.isinf(f):
        return False
    if f == int(f):
        return True
    g = float(int(f))
    return abs(f - g) / max(abs(f) + abs(g), 1e-300) < 1e-9


class _Ctx:
    """Where errors go and how kube-openapi paths become field paths."""

    __slots__ = ("errs", "root")

    def __init__(self, root: str | None) -> None:
        self.errs: list[FieldError] = []
        self.root = root

    def field(self, name: str) -> str:
        if name and name != ".":
            name = name.removeprefix(".")
            return f"{self.root}.{name}" if self.root else name
        return self.root if self.root is not None else "<nil>"

    def composite(self, message: str) -> None:
        """A non-field kube-openapi error: reported on the validation root with an empty value."""
        if not any(e.detail.endswith(message) for e in self.errs):
            self.errs.append(gofmt.invalid(self.root if self.root is not None else "<nil>", "", message))


def _in(name: str) -> str:
    return f"{name} in body"


class OpenAPIValidator:
    """A reusable validator for one compiled schema."""

    def __init__(self, node: Node, root: str | None = None) -> None:
        self.node = node
        self.root = root

    def validate(self, value: Any, old: Any = MISSING) -> list[FieldError]:
        """Field errors of `value`; with `old`, errors in parts equal to their old value are dropped."""
        ctx = _Ctx(self.root)
        _validate(self.node, value, "", ctx, old)
        return ctx.errs


def _validate(node: Node, data: Any, path: str, ctx: _Ctx, old: Any) -> None:
    start = len(ctx.errs)
    if data is None:
        if node.types and not node.nullable:
            _type_error(ctx, path, ",".join(node.types), "null")
        if node.enum is not None:
            _enum_error(ctx, path, data, node.enum)
    else:
        _validate_value(node, data, path, ctx, old)
    if old is not MISSING and len(ctx.errs) > start and strict_equal(data, old):
        del ctx.errs[start:]


def _type_error(ctx: _Ctx, path: str, type_name: str, actual: str) -> None:
    ctx.errs.append(gofmt.type_invalid(ctx.field(path), actual,
                                       f"{_in(path)} must be of type {type_name}: {gofmt.go_quote(actual)}"))


def _enum_error(ctx: _Ctx, path: str, data: Any, enum: tuple[Any, ...]) -> None:
    values = [v if isinstance(v, str) else orjson.dumps(v).decode() for v in enum]
    ctx.errs.append(gofmt.not_supported(ctx.field(path), data, values))


def _validate_value(node: Node, data: Any, path: str, ctx: _Ctx, old: Any) -> None:
    kind = _JSON_TYPES.get(type(data), "")
    if node.format or (node.types and kind not in node.types):
        _check_type(node, data, kind, path, ctx)
    if node.all_of or node.any_of or node.one_of or node.not_ is not None:
        _schema_props(node, data, path, ctx)
    if kind == "string":
        if node.max_length is not None or node.min_length is not None or node.pattern:
            _string(node, data, path, ctx)
        if node.format and node.format.replace("-", "") in formats.CHECKS and not formats.check(node.format, data):
            ctx.errs.append(gofmt.type_invalid(
                ctx.field(path), data, f"{_in(path)} must be of type {node.format}: {gofmt.go_quote(data)}"))
    elif kind == "integer" or kind == "number":
        if node.multiple_of is not None or node.minimum is not None or node.maximum is not None:
            _number(node, data, path, ctx)
    elif kind == "array":
        _array(node, data, path, ctx, old)
    if node.enum is not None and not _in_enum(data, node.enum):
        _enum_error(ctx, path, data, node.enum)
    if kind == "object":
        _object(node, data, path, ctx, old)


def _check_type(node: Node, data: Any, kind: str, path: str, ctx: _Ctx) -> None:
    """The type validator (with its format quirks: a string-format schema accepts strings and lists)."""
    types = node.types
    go_format = _go_format_of(data)
    float_int = kind == "number" and "integer" in types and _is_integral(data)
    int_float = kind == "integer" and "number" in types
    if kind not in ("string", "array") and node.format and not (
            kind in types or go_format == node.format or float_int or int_float):
        _type_error(ctx, path, node.format, go_format)
        return
    if not ("number" in types or "integer" in types) and node.format and kind in ("string", "array"):
        return
    if types and not (kind in types or float_int or int_float):
        _type_error(ctx, path, ",".join(types), kind)


def _in_enum(data: Any, enum: tuple[Any, ...]) -> bool:
    for candidate in enum:
        if strict_equal(data, candidate):
            return True
        if isinstance(candidate, float) and isinstance(data, int) and not isinstance(data, bool) \
                and float(data) == candidate:
            return True
        if isinstance(candidate, int) and not isinstance(candidate, bool) and isinstance(data, float) \
                and int(data) == candidate:
            return True
    return False


def _string(node: Node, data: str, path: str, ctx: _Ctx) -> None:
    if node.max_length is not None and len(data) > node.max_length:
        ctx.errs.append(gofmt.too_long(ctx.field(path), node.max_length))
        return
    if node.min_length is not None and len(data) < node.min_length:
        ctx.errs.append(gofmt.invalid(ctx.field(path), data,
                                      f"{_in(path)} should be at least {node.min_length} chars long"))
        return
    if node.pattern:
        if node.regexp is None:
            ctx.errs.append(gofmt.invalid(ctx.field(path), data,
                                          f"{_in(path)} should match '{node.pattern}, but pattern is invalid: "
                                          "error parsing regexp'"))
        elif not node.regexp.search(data):
            ctx.errs.append(gofmt.invalid(ctx.field(path), data, f"{_in(path)} should match '{node.pattern}'"))


def _bound(value: float, is_int: bool) -> str:
    """A bound as kube-openapi prints it: truncated to int64 for integer data, else float64 `%v`."""
    return str(int(value)) if is_int else gofmt.go_float(float(value))


def _number(node: Node, data: int | float, path: str, ctx: _Ctx) -> None:
    is_int = isinstance(data, int)
    field = ctx.field(path)
    if node.multiple_of is not None:
        factor = node.multiple_of
        if is_int:
            f = int(factor)
            if f <= 0:
                ctx.errs.append(gofmt.invalid(field, f, f"factor MultipleOf declared for {path} must be positive: {f}"))
            elif data % f:
                ctx.errs.append(gofmt.invalid(field, data, f"{_in(path)} should be a multiple of {f}"))
        elif factor <= 0:
            ctx.errs.append(gofmt.invalid(field, factor, f"factor MultipleOf declared for {path} must be positive: "
                                                         f"{gofmt.go_float(float(factor))}"))
        else:
            mult = (1 / factor * data) if factor < 1 else data / factor
            if not _is_integral(mult):
                ctx.errs.append(gofmt.invalid(
                    field, data, f"{_in(path)} should be a multiple of {gofmt.go_float(float(factor))}"))
    if node.minimum is not None:
        low = int(node.minimum) if is_int else node.minimum
        if data < low or (node.exclusive_minimum and data == low):
            word = "greater than" if node.exclusive_minimum else "greater than or equal to"
            ctx.errs.append(gofmt.invalid(field, data, f"{_in(path)} should be {word} {_bound(node.minimum, is_int)}"))
    if node.maximum is not None:
        high = int(node.maximum) if is_int else node.maximum
        if data > high or (node.exclusive_maximum and data == high):
            word = "less than" if node.exclusive_maximum else "less than or equal to"
            ctx.errs.append(gofmt.invalid(field, data, f"{_in(path)} should be {word} {_bound(node.maximum, is_int)}"))


def _array(node: Node, data: list[Any], path: str, ctx: _Ctx, old: Any) -> None:
    items = node.items
    if items is not None:
        old_index = None
        if node.list_type == "map" and isinstance(old, list):
            old_index = map_list_index(node, old)
        for i, item in enumerate(data):
            old_item = MISSING
            if old_index is not None:
                old_item = old_index.get(map_key(node, item), MISSING)
            _validate(items, item, f"{path}[{i}]", ctx, old_item)
    size = len(data)
    if node.min_items is not None and size < node.min_items:
        ctx.errs.append(gofmt.invalid(ctx.field(path), size,
                                      f"{_in(path)} should have at least {node.min_items} items"))
    if node.max_items is not None and size > node.max_items:
        ctx.errs.append(gofmt.too_many(ctx.field(path), size, node.max_items))
    if node.unique_items:
        seen: list[Any] = []
        for item in data:
            if any(strict_equal(item, s) for s in seen):
                ctx.errs.append(gofmt.invalid(ctx.field(path), "", f"{_in(path)} shouldn't contain duplicates"))
                break
            seen.append(item)


def _object(node: Node, data: dict[str, Any], path: str, ctx: _Ctx, old: Any) -> None:
    field = ctx.field(path)
    size = len(data)
    if node.min_properties is not None and size < node.min_properties:
        ctx.errs.append(gofmt.invalid(field, size,
                                      f"{_in(path)} should have at least {node.min_properties} properties"))
    if node.max_properties is not None and size > node.max_properties:
        ctx.errs.append(gofmt.too_many(field, size, node.max_properties))
    old_map = old if isinstance(old, dict) else None
    props = node.properties
    if not node.additional_allowed:
        for k in data:
            if k not in props:
                ctx.errs.append(gofmt.invalid(field, k, f"{path}.{k} in body is a forbidden property"))
    elif node.additional is not None:
        for k, v in data.items():
            if k not in props:
                old_v = old_map.get(k, MISSING) if old_map is not None else MISSING
                _validate(node.additional, v, f"{path}.{k}", ctx, old_v)
    for k, sub in props.items():
        if k in data:
            old_v = MISSING
            if old_map is not None and (path or k not in ("apiVersion", "kind")):
                old_v = old_map.get(k, MISSING)
            _validate(sub, data[k], f"{path}.{k}" if path else k, ctx, old_v)
    for k in node.required:
        if k not in data:
            ctx.errs.append(gofmt.required(ctx.field(f"{path}.{k}")))


def _schema_props(node: Node, data: Any, path: str, ctx: _Ctx) -> None:
    """allOf / anyOf / oneOf / not, with kube-openapi's composite messages."""
    def run(sub: Node) -> list[FieldError]:
        inner = _Ctx(ctx.root)
        _validate(sub, data, path, inner, MISSING)
        return inner.errs

    quoted = gofmt.go_quote(path)
    if node.any_of:
        results = [run(s) for s in node.any_of]
        if not any(not r for r in results):
            ctx.composite(f"{quoted} must validate at least one schema (anyOf)")
            ctx.errs.extend(results[0])
    if node.one_of:
        results = [run(s) for s in node.one_of]
        valid = sum(1 for r in results if not r)
        if valid != 1:
            extra = "Found none valid" if valid == 0 else f"Found {valid} valid alternatives"
            ctx.composite(f"{quoted} must validate one and only one schema (oneOf). {extra}")
            if valid == 0:
                ctx.errs.extend(results[0])
    if node.all_of:
        results = [run(s) for s in node.all_of]
        valid = 0
        for r in results:
            if not r:
                valid += 1
            ctx.errs.extend(e for e in r if not any(str(e) == str(x) for x in ctx.errs))
        if valid != len(results):
            ctx.composite(f"{quoted} must validate all the schemas (allOf){'. None validated' if valid == 0 else ''}")
    if node.not_ is not None and not run(node.not_):
        ctx.composite(f"{quoted} must not validate the schema (not)")
