"""Resource quantities (`500m`, `1Gi`, `1e3`): parsing as apimachinery's ParseQuantity does, the text the
server stores and prints, and the integer values (Value, MilliValue) components count with.

Values are exact Decimals (an exponent such as `1e2147483647` costs nothing, where an exact fraction would
need billions of digits), rounded up (away from zero) to nano precision, BinarySI values capped at 2^63-1.
The text is the input when apimachinery keeps it (already canonical, `100m`, `1Ki`, `+1`) and otherwise the
canonical form: the largest suffix that keeps an integer mantissa, in the input's notation.
"""

from __future__ import annotations

import decimal
import math
from dataclasses import dataclass
from decimal import ROUND_UP, Decimal

BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_DECIMAL_SUFFIX = {exp: suffix for suffix, exp in DECIMAL.items()}
_BINARY_SUFFIX = {exp: suffix for suffix, exp in BINARY.items()}
_SUFFIX_CHARS = frozenset("eEinumkKMGTP")
_DIGITS = frozenset("0123456789")
_MAX = Decimal(2**63 - 1)
_NANO = Decimal("1e-9")
_INT32 = (-(2**31), 2**31 - 1)
_MAX_INT64_FACTORS = 18
# Exact arithmetic on values the parser made (their digits are bounded by the input's length).
_EXACT = decimal.Context(prec=decimal.MAX_PREC, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN,
                         traps=[decimal.InvalidOperation, decimal.DivisionByZero])
SUMS = decimal.Context(prec=60, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN, traps=[decimal.InvalidOperation])
"""For adding quantities up (QoS): 60 digits, so a sum of absurd values costs nothing and may round."""

FORMAT_ERROR = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
NUMERIC_ERROR = "unable to parse numeric part of quantity"
SUFFIX_ERROR = "unable to parse quantity's suffix"


class QuantityError(ValueError):
    """Not a quantity; the message is apimachinery's."""


@dataclass(frozen=True, slots=True)
class Quantity:
    """A parsed quantity: its exact value, its notation, and the text apimachinery keeps (else canonical)."""

    value: Decimal
    format: str  # "BinarySI", "DecimalSI" or "DecimalExponent"
    text: str = ""

    def __str__(self) -> str:
        return self.text or canonical_text(self)

    def is_integer(self) -> bool:
        sign, digits, exponent = self.value.as_tuple()
        if not isinstance(exponent, int) or exponent >= 0:
            return True
        return all(d == 0 for d in digits[exponent:])


def _scan(text: str) -> tuple[bool, str, str, str, str]:
    """parseQuantityString: (positive, value, numerator, denominator, suffix), leading zeros stripped."""
    positive, pos, end = True, 0, len(text)
    if end and text[0] in "+-":
        positive, pos = text[0] != "-", 1
    while pos < end and text[pos] == "0":
        pos += 1
    if pos >= end:
        return positive, "0", "0", "", ""
    start = pos
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    num, denom = text[start:pos] or "0", ""
    if pos < end and text[pos] == ".":
        pos += 1
        start = pos
        while pos < end and text[pos] in _DIGITS:
            pos += 1
        denom = text[start:pos]
    value, suffix_start = text[:pos], pos
    while pos < end and text[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos < end and text[pos] in "+-":
        pos += 1
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    if pos < end:
        raise QuantityError(FORMAT_ERROR)
    return positive, value, num, denom, text[suffix_start:]


def _suffix(suffix: str) -> tuple[int, int, str]:
    """quantitySuffixer.interpret: (base, exponent, format)."""
    if suffix in DECIMAL:
        return 10, DECIMAL[suffix], "DecimalSI"
    if suffix in BINARY:
        return 2, BINARY[suffix], "BinarySI"
    if len(suffix) > 1 and suffix[0] in "eE":
        body = suffix[1:]
        digits = body[1:] if body[0] in "+-" else body
        significant = digits.lstrip("0") or "0"
        if digits and all(c in _DIGITS for c in digits) and len(significant) <= 10:  # strconv.ParseInt(s, 10, 32)
            exponent = int(significant) * (-1 if body[0] == "-" else 1)
            if _INT32[0] <= exponent <= _INT32[1]:
                return 10, exponent, "DecimalExponent"
    raise QuantityError(SUFFIX_ERROR)


def parse(text: str) -> Quantity:
    """ParseQuantity (after UnmarshalJSON's TrimSpace); QuantityError with apimachinery's message."""
    if not text:
        raise QuantityError(FORMAT_ERROR)
    if text == "0":
        return Quantity(Decimal(0), "DecimalSI", "0")
    positive, value, num, denom, suffix = _scan(text)
    base, exponent, fmt = _suffix(suffix)
    kept = _kept_text(text, num, denom, base, exponent, fmt)
    amount = Decimal(f"{num}.{denom}" if denom else num)
    if base == 10:
        amount = amount.scaleb(exponent, _EXACT)
    else:
        amount = _EXACT.multiply(amount, Decimal(2**exponent))
    exponent_now = amount.as_tuple().exponent
    if isinstance(exponent_now, int) and exponent_now < -9:  # round up to nano; cheap: the digits are bounded
        amount = amount.quantize(_NANO, rounding=ROUND_UP, context=_EXACT)
    if fmt == "BinarySI" and amount > _MAX:
        amount = _MAX
    if fmt == "BinarySI" and 0 < amount < 1:
        fmt = "DecimalSI"
    if not positive:
        amount = amount.copy_negate()  # exact: unary minus would round in the default context (and overflow)
    return Quantity(amount, fmt, kept)


def _kept_text(text: str, num: str, denom: str, base: int, exponent: int, fmt: str) -> str:
    """The input itself where apimachinery's fast path keeps it (`s: str`), else ''."""
    if fmt == "BinarySI":
        if exponent < 0 or denom:
            return ""
        precision = 15 - len(num) - int(exponent * 3 / 10) - 1
        if precision < 0:
            return ""
        value = int(num)
        return text if value * 2**exponent < 2**63 and exponent % 10 == 0 and value & 7 != 0 else ""
    if _MAX_INT64_FACTORS - len(num) - len(denom) < 0:
        return ""
    scale = exponent - len(denom)
    shifted = num + denom
    keep = scale >= -9 and scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0"
    return text if keep else ""


def parse_quantity(text: str | int | float) -> Quantity | None:
    """Parse a quantity given as JSON (a string, trimmed as UnmarshalJSON does, or a number); None if not one."""
    try:
        return parse_json(text)
    except QuantityError:
        return None


def decimal_value(value: str | int | float) -> Decimal:
    """The exact value of a quantity given as text or a JSON number; QuantityError (a ValueError) if not one."""
    return parse_json(value).value


def parse_json(value: str | int | float) -> Quantity:
    """Quantity.UnmarshalJSON for a decoded JSON value; QuantityError when it is not a quantity."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise QuantityError(FORMAT_ERROR)
    if isinstance(value, float):
        text = repr(value).replace("e+", "e")
    elif isinstance(value, int):
        text = str(value)
    else:
        text = value.strip()
    return parse(text)


def canonical(text: str | int | float | None) -> str:
    """The text of a quantity (`1024Mi` -> `1Gi`); `0` when unset, the input when unparseable."""
    if text is None or text == "":
        return "0"
    quantity = parse_quantity(text)
    return str(text) if quantity is None else str(quantity)


def canonical_text(quantity: Quantity) -> str:
    """CanonicalizeBytes: canonical form in the quantity's own notation."""
    value, fmt = quantity.value, quantity.format
    if value == 0:
        return "0"
    if fmt == "BinarySI" and (-1024 < value < 1024 or not quantity.is_integer()):
        fmt = "DecimalSI"
    if fmt == "BinarySI":
        mantissa, exponent = int(value), 0
        while exponent < 60 and mantissa % 1024 == 0:
            mantissa //= 1024
            exponent += 10
        return f"{mantissa}{_BINARY_SUFFIX.get(exponent, '')}"
    digits, exponent = _decimal_parts(value)
    if fmt == "DecimalSI" and exponent in _DECIMAL_SUFFIX:
        return f"{digits}{_DECIMAL_SUFFIX[exponent]}"
    return f"{digits}e{exponent}" if exponent else digits


def _decimal_parts(value: Decimal) -> tuple[str, int]:
    """An integer mantissa (as text) and an exponent that is a multiple of three, with the exponent maximal."""
    sign, digits, exp = value.as_tuple()
    assert isinstance(exp, int), "a finite quantity"
    text = "".join(map(str, digits))
    stripped = text.rstrip("0")
    exponent = exp + len(text) - len(stripped)
    shift = exponent % 3
    return ("-" if sign else "") + stripped + "0" * shift, exponent - shift


def _int64_amount(text: str) -> tuple[int, int] | None:
    """ParseQuantity's fast path: (value, scale) of the int64Amount it builds, None where it takes infDec."""
    positive, _, num, denom, suffix = _scan(text)
    _, exponent, fmt = _suffix(suffix)
    if fmt == "BinarySI":
        if exponent < 0 or denom or 15 - len(num) - int(exponent * 3 / 10) - 1 < 0:
            return None
        value, scale = int(num) << exponent, 0
    else:
        scale = exponent - len(denom)
        if _MAX_INT64_FACTORS - len(num) - len(denom) < 0 or scale < -9:
            return None
        value = int(num + denom)
    if value >= 2**63:
        return None
    return (value if positive else -value), scale


def go_quantity(value: str | int | float) -> str:
    """A parsed resource.Quantity as Go's `%#v` prints it (how field.Invalid shows a Quantity bad value)."""
    quantity = parse_json(value)
    text = repr(value).replace("e+", "e") if isinstance(value, float) else str(value).strip()
    amount = (0, 0) if text == "0" else _int64_amount(text)
    value_, scale = amount if amount is not None else (0, 0)
    dec = "(*inf.Dec)(nil)" if amount is not None else "(*inf.Dec)(0xc000000000)"
    return (f"resource.Quantity{{i:resource.int64Amount{{value:{value_}, scale:{scale}}}, "
            f"d:resource.infDecAmount{{Dec:{dec}}}, s:{go_quote_text(quantity.text)}, Format:\"{quantity.format}\"}}")


def go_quote_text(text: str) -> str:
    """%q of the plain ASCII text a quantity keeps."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


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
