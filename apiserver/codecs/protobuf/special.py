"""Types whose JSON form is not their protobuf message shape (Time, Quantity, IntOrString, ...).

Each special message name maps to a short code used by ``decode`` and ``encode``; this module also holds the
text conversions they share (RFC 3339 times, Go durations, quantities, raw JSON).
"""

from __future__ import annotations

import calendar
import json
import re
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import Any

from mini_kube.machinery.duration import DurationError, parse_go_duration
from mini_kube.machinery.quantity import QuantityError
from mini_kube.machinery.quantity import parse as parse_quantity_text

from .errors import ProtobufError

TIME, MICROTIME, DURATION, QUANTITY, INTORSTRING, RAWEXT, RAWJSON, ORARRAY, ORBOOL, ORSTRARRAY = (
    "time", "microtime", "duration", "quantity", "intorstring", "rawext", "rawjson",
    "orarray", "orbool", "orstrarray")

SPECIAL: dict[str, str] = {
    "meta.v1.Time": TIME,
    "meta.v1.MicroTime": MICROTIME,
    "meta.v1.Duration": DURATION,
    "meta.v1.FieldsV1": RAWJSON,
    "resource.Quantity": QUANTITY,
    "resource.QuantityValue": QUANTITY,
    "intstr.IntOrString": INTORSTRING,
    "runtime.RawExtension": RAWEXT,
}
for _v in ("v1", "v1beta1"):
    SPECIAL[f"apiextensions.{_v}.JSON"] = RAWJSON
    SPECIAL[f"apiextensions.{_v}.JSONSchemaPropsOrArray"] = ORARRAY
    SPECIAL[f"apiextensions.{_v}.JSONSchemaPropsOrBool"] = ORBOOL
    SPECIAL[f"apiextensions.{_v}.JSONSchemaPropsOrStringArray"] = ORSTRARRAY

# Go's zero time.Time (0001-01-01T00:00:00Z) in Unix seconds: encoded as an empty message, shown as null.
ZERO_TIME_SECONDS = -62135596800
_MAX_SECONDS = 253402300799  # 9999-12-31T23:59:59Z, the largest time RFC 3339 can show
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

_TIME_RE = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))\Z")


def _utc(seconds: int) -> datetime:
    if not ZERO_TIME_SECONDS <= seconds <= _MAX_SECONDS:
        raise ProtobufError(f"time out of range: {seconds} seconds")
    return _EPOCH + timedelta(seconds=seconds)


@lru_cache(maxsize=4096)
def format_time(seconds: int) -> str:
    """RFC 3339 with whole seconds in UTC, as metav1.Time marshals (``2024-01-01T00:00:00Z``)."""
    d = _utc(seconds)
    return f"{d.year:04d}-{d.month:02d}-{d.day:02d}T{d.hour:02d}:{d.minute:02d}:{d.second:02d}Z"


def format_micro_time(seconds: int, nanos: int) -> str:
    """RFC 3339 with 6 fractional digits in UTC, as metav1.MicroTime marshals."""
    return f"{format_time(seconds)[:-1]}.{nanos // 1000:06d}Z"


@lru_cache(maxsize=4096)
def parse_time(text: str) -> tuple[int, int]:
    """Parse an RFC 3339 time into (Unix seconds, nanoseconds)."""
    m = _TIME_RE.match(text) if isinstance(text, str) else None
    if m is None:
        raise ProtobufError(f"invalid RFC 3339 time {text!r}")
    y, mo, d, h, mi, s = (int(g) for g in m.groups()[:6])
    if not (1 <= mo <= 12 and 1 <= d <= calendar.monthrange(y, mo)[1] and h < 24 and mi < 60 and s < 60) \
            or y < 1:
        raise ProtobufError(f"invalid RFC 3339 time {text!r}")
    seconds = calendar.timegm((y, mo, d, h, mi, s, 0, 0, 0))
    if m.group(9):
        off = int(m.group(10)) * 3600 + int(m.group(11)) * 60
        seconds -= off if m.group(9) == "+" else -off
    nanos = int((m.group(7) or "0").ljust(9, "0"))
    return seconds, nanos


def parse_duration(text: str) -> int:
    """Go's time.ParseDuration (machinery.duration), in nanoseconds."""
    try:
        return parse_go_duration(text)
    except DurationError:
        raise ProtobufError(f"invalid duration {text!r}") from None


@lru_cache(maxsize=4096)
def check_quantity(text: str) -> str:
    """Return ``text`` if it is a valid resource.Quantity string (ParseQuantity, machinery.quantity's)."""
    try:
        parse_quantity_text(text)
    except QuantityError as exc:
        raise ProtobufError(f"{exc}: {text!r}") from None
    return text


def quantity_text(value: Any) -> str:
    """The string form of a Quantity given as JSON (string or number)."""
    if isinstance(value, str):
        return check_quantity(value)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ProtobufError(f"invalid quantity {value!r}")
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return check_quantity(str(value) if isinstance(value, int) else repr(value))


_GO_ESCAPES = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026",
                             "\u2028": "\\u2028", "\u2029": "\\u2029"})


def dump_json(value: Any) -> bytes:
    """Compact JSON as Go's encoding/json writes it (HTML-safe escapes, UTF-8 kept)."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return text.translate(_GO_ESCAPES).encode("utf-8")


def load_json(raw: bytes) -> Any:
    """Parse embedded raw JSON, raising ProtobufError if it is not valid JSON."""
    try:
        return json.loads(raw)
    except (ValueError, RecursionError) as e:
        raise ProtobufError(f"embedded raw JSON is not valid: {e}") from None
