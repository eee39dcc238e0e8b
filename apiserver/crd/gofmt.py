"""Render JSON values the way Go's fmt prints them in Kubernetes field errors.

Field errors print a bad value with `%v` for numbers and booleans, `%q` for strings and `%#v` for
maps and lists (`map[string]interface {}{"a":1}`). `FieldError` in `apiserver.errors` renders the simple
cases; the helpers here build errors whose value needs Go's exact spelling (floats, maps, lists).
"""

from __future__ import annotations

import decimal
from typing import Any

import orjson

from apiserver.errors import FieldError


def go_float(value: float) -> str:
    """Go's `%v` of a float64: shortest digits, exponent form when the exponent is < -4 or >= 6."""
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "-0" if str(value).startswith("-") else "0"
    sign, digits, exp = decimal.Decimal(repr(value)).normalize().as_tuple()
    text = "".join(map(str, digits))
    point = len(text) + int(exp)  # position of the decimal point in the digit string
    exponent = point - 1
    prefix = "-" if sign else ""
    if exponent < -4 or exponent >= 6:
        mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
        return f"{prefix}{mantissa}e{'-' if exponent < 0 else '+'}{abs(exponent):02d}"
    if point <= 0:
        return f"{prefix}0.{'0' * -point}{text}"
    if point >= len(text):
        return prefix + text + "0" * (point - len(text))
    return f"{prefix}{text[:point]}.{text[point:]}"


def go_number(value: int | float) -> str:
    """`%v` of a JSON number as decoded into Go (int64 or float64)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return go_float(value)


def go_quote(text: str) -> str:
    """Go's `%q` of a string (JSON quoting is identical for printable text)."""
    return orjson.dumps(text).decode()


def go_sharp(value: Any) -> str:
    """Go's `%#v` of an unstructured JSON value."""
    if value is None:
        return "interface {}(nil)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return go_float(value)
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, dict):
        inner = ", ".join(f"{go_quote(k)}:{go_sharp(v)}" for k, v in sorted(value.items()))
        return "map[string]interface {}{" + inner + "}"
    if isinstance(value, list | tuple):
        return "[]interface {}{" + ", ".join(go_sharp(v) for v in value) + "}"
    return str(value)


_GO_TYPES = {bool: "bool", int: "int64", float: "float64", str: "string", dict: "map[string]interface {}",
             list: "[]interface {}"}


def go_plain(value: Any) -> str:
    """Go's `%v` of a JSON value (strings unquoted, nil as `<nil>`)."""
    if value is None:
        return "<nil>"
    if isinstance(value, str):
        return value
    if isinstance(value, bool | int | float):
        return go_number(value)
    return go_sharp(value)


def go_type(value: Any) -> str:
    """Go's `%T` of a decoded JSON value."""
    return "<nil>" if value is None else _GO_TYPES.get(type(value), "interface {}")


def go_value(value: Any) -> str:
    """How `field.Error` prints a bad value: `%v` for scalars, `%q` for strings, `%#v` otherwise."""
    if value is None:
        return '"null"'
    if isinstance(value, bool | int | float):
        return go_number(value)
    if isinstance(value, str):
        return go_quote(value)
    return go_sharp(value)


def invalid(field: str, value: Any, detail: str) -> FieldError:
    """`field.Invalid` with the bad value spelled as Go spells it."""
    return FieldError("FieldValueInvalid", field, f"{go_value(value)}: {detail}" if detail else go_value(value))


def invalid_raw(field: str, rendered: str, detail: str) -> FieldError:
    """`field.Invalid` whose value is already rendered (Go structs, typed nil slices...)."""
    return FieldError("FieldValueInvalid", field, f"{rendered}: {detail}" if detail else rendered)


def type_invalid(field: str, value: Any, detail: str) -> FieldError:
    """`field.TypeInvalid` (reason FieldValueTypeInvalid, printed as `Invalid value`)."""
    return FieldError("FieldValueTypeInvalid", field, f"{go_value(value)}: {detail}")


def duplicate(field: str, value: Any) -> FieldError:
    """`field.Duplicate` with the value spelled as Go spells it."""
    return FieldError("FieldValueDuplicate", field, go_value(value))


def not_supported(field: str, value: Any, supported: list[str] | tuple[str, ...]) -> FieldError:
    """`field.NotSupported`: `Unsupported value: <v>: supported values: "a", "b"` (null prints as "null")."""
    return FieldError("FieldValueNotSupported", field, "", "null" if value is None else value, True, tuple(supported))


def too_many(field: str, actual: int, maximum: int) -> FieldError:
    """`field.TooMany`: `Too many: <n>: must have at most <max> items`."""
    return FieldError("FieldValueTooMany", field, f"{actual}: must have at most {maximum} items")


def too_long(field: str, maximum: int) -> FieldError:
    """`field.TooLong`: `Too long: may not be more than <max> bytes`."""
    return FieldError("FieldValueTooLong", field, f"may not be more than {maximum} bytes")


def required(field: str, detail: str = "") -> FieldError:
    return FieldError("FieldValueRequired", field, detail)


def forbidden(field: str, detail: str) -> FieldError:
    return FieldError("FieldValueForbidden", field, detail)


def internal(field: str, detail: str) -> FieldError:
    return FieldError("InternalError", field, detail)
