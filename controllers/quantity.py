"""Resource quantities (`100m`, `1Gi`, `2e3`) as Decimals, for components outside the API server."""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

SUFFIXES = {"n": Decimal("1e-9"), "u": Decimal("1e-6"), "m": Decimal("1e-3"), "": Decimal(1), "k": Decimal(10) ** 3,
            "M": Decimal(10) ** 6, "G": Decimal(10) ** 9, "T": Decimal(10) ** 12, "P": Decimal(10) ** 15,
            "E": Decimal(10) ** 18, "Ki": Decimal(2) ** 10, "Mi": Decimal(2) ** 20, "Gi": Decimal(2) ** 30,
            "Ti": Decimal(2) ** 40, "Pi": Decimal(2) ** 50, "Ei": Decimal(2) ** 60}
PATTERN = re.compile(r"^([+-]?[0-9.]+)([eE][+-]?[0-9]+|[numkMGTPE]i?)?$")


def parse_quantity(text: str | int | float) -> Decimal:
    """The value of a quantity; ValueError when it is not one."""
    match = PATTERN.match(str(text).strip())
    if not match:
        raise ValueError(f"not a quantity: {text!r}")
    number, suffix = match.group(1), match.group(2) or ""
    try:
        if suffix[:1] in ("e", "E"):
            return Decimal(number + suffix)
        if suffix not in SUFFIXES:
            raise ValueError(f"not a quantity: {text!r}")
        return Decimal(number) * SUFFIXES[suffix]
    except InvalidOperation as exc:
        raise ValueError(f"not a quantity: {text!r}") from exc
