"""String format checks of kube-openapi's default registry (`format:` in a CRD schema)."""

from __future__ import annotations

import base64
import binascii
import ipaddress
import re
from collections.abc import Callable
from email.utils import parseaddr
from urllib.parse import urlsplit

_HOSTNAME = re.compile(
    r"^([a-zA-Z0-9\w]((-?[a-zA-Z0-9\w]{0,62})?)|([a-zA-Z0-9\w](([a-zA-Z0-9\-\w]{0,61}[a-zA-Z0-9\w])?)(\.)){1,}"
    r"([a-zA-Z\w]){2,63})$")
_UUID = re.compile(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$")
_UUID3 = re.compile(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$")
_UUID4 = re.compile(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$")
_UUID5 = re.compile(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_DATETIME = re.compile(
    r"^\d{4}-\d{2}-\d{2}([Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:?\d{2})?)?$")
_DURATION_GO = re.compile(r"^[-+]?((\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))+$")
_DURATION_SCALA = re.compile(
    r"^\d+\s*(ns|nano|nanos|nanosecond|nanoseconds|us|micro|micros|microsecond|microseconds|ms|milli|millis|"
    r"millisecond|milliseconds|s|sec|secs|second|seconds|m|min|mins|minute|minutes|h|hr|hrs|hour|hours|d|day|"
    r"days|w|wk|wks|week|weeks)$")
_MAC = re.compile(r"^([0-9A-Fa-f]{2}[:-]){5,19}[0-9A-Fa-f]{2}$|^([0-9A-Fa-f]{4}\.){2,9}[0-9A-Fa-f]{4}$")
_HEXCOLOR = re.compile(r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$")
_RGBCOLOR = re.compile(
    r"^rgb\(\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,"
    r"\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*\)$")
_SSN = re.compile(r"^\d{3}[- ]?\d{2}[- ]?\d{4}$")
_ISBN10 = re.compile(r"^(?:[0-9]{9}X|[0-9]{10})$")
_ISBN13 = re.compile(r"^(?:[0-9]{13})$")
_BSON = re.compile(r"^[0-9a-fA-F]{24}$")


def _hostname(s: str) -> bool:
    return bool(_HOSTNAME.match(s)) and len(s) <= 255 and all(len(p) <= 63 for p in s.split("."))


def _ipv4(s: str) -> bool:
    parts = s.split(".")
    return len(parts) == 4 and all(p.isdigit() and int(p) < 256 for p in parts)


def _ipv6(s: str) -> bool:
    try:
        ipaddress.IPv6Address(s)
        return True
    except ValueError:
        return False


def _cidr(s: str) -> bool:
    if "/" not in s:
        return False
    addr, _, bits = s.partition("/")
    if not bits.isdigit():
        return False
    if _ipv4(addr):
        return int(bits) <= 32
    return _ipv6(addr) and int(bits) <= 128


def _uri(s: str) -> bool:
    if not s or s.startswith(" "):
        return False
    parts = urlsplit(s)
    return bool(parts.scheme) or s.startswith("/")


def _email(s: str) -> bool:
    name, addr = parseaddr(s)
    return "@" in addr and not addr.startswith("@") and not addr.endswith("@")


def _byte(s: str) -> bool:
    try:
        base64.b64decode(s, validate=True)
        return True
    except (binascii.Error, ValueError):
        return False


def _isbn10(s: str) -> bool:
    s = s.replace("-", "").replace(" ", "")
    if not _ISBN10.match(s):
        return False
    total = sum((10 - i) * (10 if c == "X" else int(c)) for i, c in enumerate(s))
    return total % 11 == 0


def _isbn13(s: str) -> bool:
    s = s.replace("-", "").replace(" ", "")
    if not _ISBN13.match(s):
        return False
    return sum(int(c) * (1 if i % 2 == 0 else 3) for i, c in enumerate(s)) % 10 == 0


def _creditcard(s: str) -> bool:
    digits = [int(c) for c in s if c.isdigit()]
    if len(digits) < 12:
        return False
    total = 0
    for i, d in enumerate(reversed(digits)):
        if i % 2:
            d = d * 2 - 9 if d * 2 > 9 else d * 2
        total += d
    return total % 10 == 0


def _date(s: str) -> bool:
    if not _DATE.match(s):
        return False
    year, month, day = (int(x) for x in s.split("-"))
    return 1 <= month <= 12 and 1 <= day <= 31


def _duration(s: str) -> bool:
    return bool(_DURATION_GO.match(s) or _DURATION_SCALA.match(s))


CHECKS: dict[str, Callable[[str], bool]] = {
    "bsonobjectid": lambda s: bool(_BSON.match(s)),
    "uri": _uri,
    "email": _email,
    "hostname": _hostname,
    "ipv4": _ipv4,
    "ipv6": _ipv6,
    "cidr": _cidr,
    "mac": lambda s: bool(_MAC.match(s)),
    "uuid": lambda s: bool(_UUID.match(s)),
    "uuid3": lambda s: bool(_UUID3.match(s)),
    "uuid4": lambda s: bool(_UUID4.match(s)),
    "uuid5": lambda s: bool(_UUID5.match(s)),
    "isbn": lambda s: _isbn10(s) or _isbn13(s),
    "isbn10": _isbn10,
    "isbn13": _isbn13,
    "creditcard": _creditcard,
    "ssn": lambda s: bool(_SSN.match(s)),
    "hexcolor": lambda s: bool(_HEXCOLOR.match(s)),
    "rgbcolor": lambda s: bool(_RGBCOLOR.match(s)),
    "byte": _byte,
    "password": lambda s: True,
    "date": _date,
    "duration": _duration,
    "datetime": lambda s: bool(_DATETIME.match(s)),
}


def check(fmt: str, value: str) -> bool:
    """True when `value` is valid for `fmt` (unknown formats always pass)."""
    checker = CHECKS.get(fmt.replace("-", ""))
    return checker is None or checker(value)
