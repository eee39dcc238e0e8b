"""Resource quantities (`500m`, `1Gi`, `1e3`): parsing and the canonical text the server prints.

Values are exact fractions, rounded up (away from zero) to nano precision like apimachinery does, and
printed in canonical form: the largest suffix that keeps an integer mantissa, in the input's family.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_DECIMAL_SUFFIX = {exp: suffix for suffix, exp in DECIMAL.items()}
_BINARY_SUFFIX = {exp: suffix for suffix, exp in BINARY.items()}
_PATTERN = re.compile(r"^([+-]?)(\d+(?:\.\d*)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d+)?$")
_NANO = 10**9
_MAX = Fraction(2**63 - 1)

QUANTITY_ERROR = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"


@dataclass(frozen=True, slots=True)
class Quantity:
    """A parsed quantity: its exact value and the notation it was written in."""

    value: Fraction
    format: str  # "BinarySI", "DecimalSI" or "DecimalExponent"

    def __str__(self) -> str:
        return canonical_text(self)


def parse_quantity(text: str | int | float) -> Quantity | None:
    """Parse a quantity; None when it is not one."""
    if isinstance(text, bool):
        return None
    if isinstance(text, int):
        return Quantity(Fraction(text), "DecimalSI")
    if isinstance(text, float):
        text = repr(text)
    match = _PATTERN.match(text.strip()) if isinstance(text, str) else None
    if not match or text != text.strip():
        return None
    sign, digits, suffix = match.group(1), match.group(2), match.group(3) or ""
    value = Fraction(digits)
    if suffix in BINARY:
        value *= 2 ** BINARY[suffix]
        fmt = "BinarySI"
    elif suffix in DECIMAL:
        value *= Fraction(10) ** DECIMAL[suffix]
        fmt = "DecimalSI"
    else:
        value *= Fraction(10) ** int(suffix[1:])
        fmt = "DecimalExponent"
    if sign == "-":
        value = -value
    value = _round_up_nano(value)
    if abs(value) > _MAX:
        value = _MAX if value > 0 else -_MAX
    if fmt == "BinarySI" and 0 < value < 1:
        fmt = "DecimalSI"
    return Quantity(value, fmt)


def _round_up_nano(value: Fraction) -> Fraction:
    scaled = value * _NANO
    if scaled.denominator == 1:
        return value
    whole = -(-scaled.numerator // scaled.denominator) if value > 0 else scaled.numerator // scaled.denominator
    return Fraction(whole, _NANO)


def canonical(text: str | int | float | None) -> str:
    """The canonical text of a quantity (`1024Mi` -> `1Gi`); `0` when unset, the input when unparseable."""
    if text is None or text == "":
        return "0"
    quantity = parse_quantity(text)
    return str(text) if quantity is None else canonical_text(quantity)


def canonical_text(quantity: Quantity) -> str:
    """Quantity.String(): canonical form in the quantity's own notation."""
    value, fmt = quantity.value, quantity.format
    if value == 0:
        return "0"
    if fmt == "BinarySI" and (-1024 < value < 1024 or value.denominator != 1):
        fmt = "DecimalSI"
    if fmt == "BinarySI":
        mantissa, exponent = int(value), 0
        while exponent < 60 and mantissa % 1024 == 0:
            mantissa //= 1024
            exponent += 10
        return f"{mantissa}{_BINARY_SUFFIX.get(exponent, '')}"
    mantissa, exponent = _decimal_parts(value)
    if fmt == "DecimalSI" and exponent in _DECIMAL_SUFFIX:
        return f"{mantissa}{_DECIMAL_SUFFIX[exponent]}"
    return f"{mantissa}e{exponent}" if exponent else str(mantissa)


def _decimal_parts(value: Fraction) -> tuple[int, int]:
    """An integer mantissa and an exponent that is a multiple of three, with the exponent maximal."""
    exponent = -9
    mantissa = int(value * _NANO)
    while mantissa % 10 == 0:
        mantissa //= 10
        exponent += 1
    shift = exponent % 3
    return mantissa * 10**shift, exponent - shift
