"""Query parameters read as upstream's parameter codec reads them (strconv and its conversion functions).

`?watch=yes` and `?watch` are true (only `0` and `false`, any case, are false); integers are Go's
`strconv.ParseInt(s, 10, 64)`: ASCII digits with an optional sign, no `_`, spaces or other digits, 400 with
strconv's words otherwise; resource versions are `strconv.ParseUint(s, 10, 64)`.
"""

from __future__ import annotations

from .. import errors
from ..gofmt import go_quote

_DIGITS = frozenset("0123456789")
INT64 = (-(2**63), 2**63 - 1)
UINT64_MAX = 2**64 - 1


def go_bool(text: str | None) -> bool:
    """runtime.Convert_Slice_string_To_bool: absent is false, `0`/`false` (any case) false, anything else true."""
    if text is None:
        return False
    return not (text == "0" or text.lower() == "false")


def _digits(text: str) -> bool:
    return bool(text) and all(ch in _DIGITS for ch in text)


def strconv_error(function: str, text: str, out_of_range: bool) -> str:
    """`strconv.ParseInt: parsing "abc": invalid syntax` (or `value out of range`)."""
    return f"{function}: parsing {go_quote(text)}: {'value out of range' if out_of_range else 'invalid syntax'}"


def parse_int64(text: str) -> int:
    """strconv.ParseInt(text, 10, 64); 400 BadRequest with strconv's message."""
    body = text[1:] if text[:1] in ("+", "-") else text
    if not _digits(body):
        raise errors.bad_request(strconv_error("strconv.ParseInt", text, False))
    if len(body.lstrip("0")) > 19:
        raise errors.bad_request(strconv_error("strconv.ParseInt", text, True))
    value = int(text)
    if not INT64[0] <= value <= INT64[1]:
        raise errors.bad_request(strconv_error("strconv.ParseInt", text, True))
    return value


def parse_uint64(text: str) -> int | None:
    """strconv.ParseUint(text, 10, 64); None when it is not one, `UINT64_MAX + 1` when out of range."""
    if not _digits(text):
        return None
    if len(text.lstrip("0")) > 20:
        return UINT64_MAX + 1
    return int(text)


def resource_version(text: str) -> int:
    """A resourceVersion query parameter as a number; 400 as upstream's APIObjectVersioner words it."""
    value = parse_uint64(text)
    if value is None or value > UINT64_MAX:
        raise errors.bad_request("invalid resource version: "
                                 + strconv_error("strconv.ParseUint", text, value is not None))
    return value
