"""Go's fmt rendering of decoded JSON values, as Kubernetes error messages print them.

One function a Go verb: `%v` of a float or number (`go_float`, `go_number`), `%q` of a string (`go_quote`),
`%#v` of interface{} (`go_sharp`) and of []string (`go_strings`), `%v` of interface{} (`go_v`), `%T`
(`go_type`) and `%s` of reflect.TypeOf (`go_reflect_type`); plus the kind names encoding/json uses in
`cannot unmarshal <kind> into ...` (`json_kind`). Values are what a JSON decoder returns.
"""

from __future__ import annotations

import decimal
from typing import Any

import orjson


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


def go_strings(values: list[str] | None) -> str:
    """Go's `%#v` of a []string: `[]string{"a", "b"}`, nil as `[]string(nil)`."""
    if values is None:
        return "[]string(nil)"
    return "[]string{" + ", ".join(go_quote(v) for v in values) + "}"


def go_ptr(type_name: str, value: Any) -> str:
    """Go's `%#v` of a pointer field: `(*T)(nil)`, or a made-up address when set."""
    return f"(*{type_name})(nil)" if value is None else f"(*{type_name})(0xc000a1b2c0)"


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


def go_v(value: Any) -> str:
    """Go's `%v` of a value decoded into interface{}: `map[a:1 b:[x y]]`, `<nil>`, `true`, `1.5`.

    A negative zero prints as `0` here (Go prints `-0`), as the patch errors always have.
    """
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_v(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(go_v(v) for v in value) + "]"
    if isinstance(value, float):
        return "0" if value == 0 else go_float(value)
    return str(value)


_GO_TYPES = {bool: "bool", int: "int64", float: "float64", str: "string", dict: "map[string]interface {}",
             list: "[]interface {}"}


def go_type(value: Any) -> str:
    """Go's `%T` of a decoded JSON value (nil as `<nil>`)."""
    return "<nil>" if value is None else _GO_TYPES.get(type(value), "interface {}")


def go_reflect_type(value: Any) -> str:
    """Go's `%s` of reflect.TypeOf(value): `%T`'s name, but nil as `%!s(<nil>)`."""
    return "%!s(<nil>)" if value is None else go_type(value)


def json_kind(value: Any, null: str = "null") -> str:
    """The kind encoding/json names in `cannot unmarshal <kind> into ...`; `null` is what None is called."""
    if value is None:
        return null
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "bool"
    return "number"
