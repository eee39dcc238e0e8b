"""metav1.Time and metav1.MicroTime as the apiserver decodes them and writes them back.

Time is Go's `time.Parse(time.RFC3339, s)` (the general parser: a one-digit hour, a fraction after the
seconds with `.` or `,`); MicroTime is `time.Parse(RFC3339Micro, s)` (exactly six fraction digits).
`written` is the text Go writes back: UTC, to the second (Time) or the microsecond (MicroTime).
Errors are Go's: `parsing time "x" as "2006-01-02T15:04:05Z07:00": cannot parse "x" as "2006"`, or
`parsing time "2024-13-01T00:00:00Z": month out of range`.
"""

from __future__ import annotations

import calendar
import datetime as dt
from dataclasses import dataclass

RFC3339 = "2006-01-02T15:04:05Z07:00"
RFC3339_MICRO = "2006-01-02T15:04:05.000000Z07:00"
_DIGITS = frozenset("0123456789")


class TimeError(ValueError):
    """Not a time in the layout; the message is Go's ParseError."""


@dataclass(frozen=True, slots=True)
class GoTime:
    year: int
    month: int
    day: int
    hour: int
    minute: int
    second: int
    nanos: int
    offset: int  # seconds east of UTC


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _syntax(layout: str, value: str, rest: str, element: str) -> TimeError:
    return TimeError(f"parsing time {_quote(value)} as {_quote(layout)}: cannot parse {_quote(rest)} as "
                     f"{_quote(element)}")


def _range(value: str, what: str) -> TimeError:
    return TimeError(f"parsing time {_quote(value)}: {what} out of range")


def _number(text: str, fixed: bool) -> tuple[int, str] | None:
    """Go's getnum: one or two digits (exactly two when fixed)."""
    if not text or text[0] not in _DIGITS:
        return None
    if len(text) < 2 or text[1] not in _DIGITS:
        return None if fixed else (int(text[0]), text[1:])
    return int(text[:2]), text[2:]


def parse(value: str, micro: bool = False) -> GoTime:
    """Parse as Go does with RFC3339 (Time) or RFC3339Micro (MicroTime); TimeError with Go's message."""
    layout = RFC3339_MICRO if micro else RFC3339
    rest = value
    if len(rest) < 4 or rest[0] not in _DIGITS or not all(c in _DIGITS for c in rest[:4]):
        raise _syntax(layout, value, rest, "2006")
    year, rest = int(rest[:4]), rest[4:]
    fields = []
    for literal, element, fixed in (("-", "01", True), ("-", "02", True), ("T", "15", False), (":", "04", True),
                                    (":", "05", True)):
        if not rest.startswith(literal):
            raise _syntax(layout, value, rest, literal)
        rest = rest[len(literal):]
        got = _number(rest, fixed)
        if got is None:
            raise _syntax(layout, value, rest, element)
        number, rest = got
        limit, what = {"01": (12, "month"), "02": (31, "day"), "15": (23, "hour"), "04": (59, "minute"),
                       "05": (59, "second")}[element]
        if number > limit or (element == "01" and number < 1):
            raise _range(value, what)
        fields.append(number)
    nanos = 0
    if micro:
        if len(rest) < 7 or rest[0] not in ".," or not all(c in _DIGITS for c in rest[1:7]):
            raise _syntax(layout, value, rest, ".000000")
        nanos, rest = int(rest[1:7]) * 1000, rest[7:]
    elif len(rest) >= 2 and rest[0] in ".," and rest[1] in _DIGITS:
        end = 2
        while end < len(rest) and rest[end] in _DIGITS:
            end += 1
        nanos, rest = int((rest[1:end] + "000000000")[:9]), rest[end:]
    offset, rest = _zone(layout, value, rest)
    if rest:
        raise TimeError(f"parsing time {_quote(value)}: extra text: {_quote(rest)}")
    month, day = fields[0], fields[1]
    if day < 1 or day > calendar.monthrange(year if year else 2000, month)[1]:
        raise _range(value, "day")
    return GoTime(year, month, day, fields[2], fields[3], fields[4], nanos, offset)


def _zone(layout: str, value: str, rest: str) -> tuple[int, str]:
    if rest.startswith("Z"):
        return 0, rest[1:]
    if len(rest) < 6 or rest[3] != ":" or rest[0] not in "+-":
        raise _syntax(layout, value, rest, "Z07:00")
    hours, minutes = _number(rest[1:3], True), _number(rest[4:6], True)
    if hours is None or minutes is None:
        raise _syntax(layout, value, rest, "Z07:00")
    if hours[0] > 24:
        raise _range(value, "time zone offset hour")
    if minutes[0] > 60:
        raise _range(value, "time zone offset minute")
    offset = (hours[0] * 60 + minutes[0]) * 60
    return (offset if rest[0] == "+" else -offset), rest[6:]



def written(value: str, micro: bool = False) -> str:
    """The text the apiserver stores for a valid time: `2024-01-01T01:00:00.5+01:00` is `2024-01-01T00:00:00Z`
    (`value` itself when Python's datetime cannot hold the moment, years 0 and 10000)."""
    t = parse(value, micro)
    try:
        moment = dt.datetime(t.year, t.month, t.day, t.hour, t.minute, t.second) - dt.timedelta(seconds=t.offset)
    except (ValueError, OverflowError):
        return value
    text = moment.strftime("%Y-%m-%dT%H:%M:%S").rjust(19, "0")
    return f"{text}.{t.nanos // 1000:06d}Z" if micro else f"{text}Z"
