"""Resource quantities (`100m`, `1Gi`, `2e3`) as Decimals, for components outside the API server."""

from __future__ import annotations

import decimal
import math
import re
from decimal import Decimal, InvalidOperation

SUFFIXES = {"n": Decimal("1e-9"), "u": Decimal("1e-6"), "m": Decimal("1e-3"), "": Decimal(1), "k": Decimal(10) ** 3,
            "M": Decimal(10) ** 6, "G": Decimal(10) ** 9, "T": Decimal(10) ** 12, "P": Decimal(10) ** 15,
            "E": Decimal(10) ** 18, "Ki": Decimal(2) ** 10, "Mi": Decimal(2) ** 20, "Gi": Decimal(2) ** 30,
            "Ti": Decimal(2) ** 40, "Pi": Decimal(2) ** 50, "Ei": Decimal(2) ** 60}
PATTERN = re.compile(r"^([+-]?[0-9.]+)([eE][+-]?[0-9]+|[KMGTPE]i|[numkMGTPE])?$")


def parse_quantity(text: str | int | float) -> Decimal:
    """The value of a quantity; ValueError when it is not one."""
    match = PATTERN.match(str(text).strip())
    if not match:
        raise ValueError(f"not a quantity: {text!r}")
    number, suffix = match.group(1), match.group(2) or ""
    try:
        if suffix in SUFFIXES:  # before the exponent: Ei is a suffix
            return Decimal(number) * SUFFIXES[suffix]
        return Decimal(number + suffix)
    except InvalidOperation as exc:
        raise ValueError(f"not a quantity: {text!r}") from exc


_INT64_MAX = 2**63 - 1
_SCALED = decimal.Context(prec=60, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN)


def scaled_value(value: Decimal, exponent: int = 0) -> int:
    """ceil(value * 10**exponent) as apimachinery's Value()/MilliValue() (exponent 3) count it, saturated at
    +-(2^63-1): a stored quantity may be 1e2147483647, whose exact integer no one should build."""
    if value.is_zero():
        return 0
    magnitude = value.adjusted() + exponent
    if magnitude > 19:
        return _INT64_MAX if value > 0 else -_INT64_MAX
    if magnitude < -2:
        return 1 if value > 0 else 0
    return max(-_INT64_MAX, min(_INT64_MAX, math.ceil(value.scaleb(exponent, _SCALED))))
