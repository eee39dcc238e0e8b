"""Render decoded JSON values the way Go's fmt prints them, for error messages that quote patch content."""

from __future__ import annotations

from decimal import Decimal
from typing import Any


def go_v(value: Any) -> str:
    """Go's `%v` of a value decoded into interface{}: `map[a:1 b:[x y]]`, `<nil>`, `true`, `1.5`."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_v(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(go_v(v) for v in value) + "]"
    if isinstance(value, float):
        return _go_float(value)
    return str(value)


def _go_float(value: float) -> str:
    """strconv's shortest 'g' format with the exponent threshold fmt uses for %v (6)."""
    if value != value or value in (float("inf"), float("-inf")):
        return {"nan": "NaN", "inf": "+Inf", "-inf": "-Inf"}[repr(value)]
    if value == 0:
        return "0"
    sign, digits, exponent = Decimal(repr(value)).normalize().as_tuple()
    text = "".join(map(str, digits))
    exp = len(digits) + int(exponent) - 1
    prefix = "-" if sign else ""
    if exp < -4 or exp >= 6:
        mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
        return f"{prefix}{mantissa}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    return prefix + format(Decimal(repr(abs(value))).normalize(), "f")


def go_type(value: Any) -> str:
    """Go's reflect type name of a decoded JSON value (what `%s` of reflect.TypeOf prints)."""
    if value is None:
        return "%!s(<nil>)"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, dict):
        return "map[string]interface {}"
    if isinstance(value, list):
        return "[]interface {}"
    if isinstance(value, str):
        return "string"
    if isinstance(value, int):
        return "int64"
    return "float64"
