"""Durations: as kubectl and the server print ages (apimachinery's util/duration.HumanDuration), and Go's
time.Duration text (`1h2m3.5s`, `150ms`), parsed (time.ParseDuration) and printed (Duration.String), in
nanoseconds. Standard library only: the Python agnhost, which runs in containers, uses it too."""

from __future__ import annotations

import re

_MINUTE = 60
_HOUR = 3600
_UNIT_NS = {"ns": 1, "us": 1_000, "µs": 1_000, "μs": 1_000, "ms": 1_000_000, "s": 1_000_000_000,
            "m": 60_000_000_000, "h": 3_600_000_000_000}
_GO_PART = re.compile(r"(\d*)(?:\.(\d*))?(ns|us|µs|μs|ms|s|m|h)")
_MAX_NS = (1 << 63) - 1


class DurationError(ValueError):
    """Not a Go duration; the message is Go's (`time: invalid duration "x"`)."""


def parse_go_duration(text: str) -> int:
    """time.ParseDuration: the nanoseconds of `1.5s`, `-2h45m`, `300ms`, `0`."""
    if not isinstance(text, str) or not text:
        raise DurationError(f'time: invalid duration "{text}"')
    body, negative = text, False
    if body[0] in "+-":
        negative, body = body[0] == "-", body[1:]
    if body == "0":
        return 0
    if not body:
        raise DurationError(f'time: invalid duration "{text}"')
    total, pos = 0, 0
    while pos < len(body):
        match = _GO_PART.match(body, pos)
        if match is None or (not match.group(1) and not match.group(2)):
            raise DurationError(f'time: invalid duration "{text}"')
        size, fraction = _UNIT_NS[match.group(3)], match.group(2) or ""
        total += int(match.group(1) or "0") * size + (int(fraction) * size // 10 ** len(fraction) if fraction else 0)
        pos = match.end()
    if total > _MAX_NS + negative:
        raise DurationError(f'time: invalid duration "{text}"')
    return -total if negative else total


def _fraction(value: int, size: int) -> str:
    whole, rest = divmod(value, size)
    if not rest:
        return str(whole)
    return f"{whole}.{str(rest).zfill(len(str(size)) - 1).rstrip('0')}"


def format_go_duration(nanoseconds: int) -> str:
    """Duration.String: `1h2m3.5s`, `1.5ms`, `800ns`, `0s`."""
    if nanoseconds == 0:
        return "0s"
    sign, value = ("-", -nanoseconds) if nanoseconds < 0 else ("", nanoseconds)
    if value < 1_000_000_000:
        for unit, size in (("ns", 1), ("µs", 1_000), ("ms", 1_000_000)):
            if value < size * 1000:
                return sign + _fraction(value, size) + unit
    hours, rest = divmod(value, 3_600_000_000_000)
    minutes, rest = divmod(rest, 60_000_000_000)
    return sign + (f"{hours}h" if hours else "") + (f"{minutes}m" if hours or minutes else "") + \
        _fraction(rest, 1_000_000_000) + "s"


def human_duration(seconds: float) -> str:
    """Round a duration to two or three significant figures: `45s`, `3m20s`, `5h`, `2d3h`, `1y20d`."""
    whole = int(seconds)  # truncates toward zero, like Go's int(d.Seconds())
    if whole < -1:
        return "<invalid>"
    if whole < 0:
        return "0s"
    if whole < 2 * _MINUTE:
        return f"{whole}s"
    minutes = whole // _MINUTE
    if minutes < 10:
        rest = whole % _MINUTE
        return f"{minutes}m{rest}s" if rest else f"{minutes}m"
    if minutes < 3 * 60:
        return f"{minutes}m"
    hours = whole // _HOUR
    if hours < 8:
        rest = minutes % 60
        return f"{hours}h{rest}m" if rest else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        rest = hours % 24
        return f"{hours // 24}d{rest}h" if rest else f"{hours // 24}d"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        rest = (hours // 24) % 365
        return f"{hours // 24 // 365}y{rest}d" if rest else f"{hours // 24 // 365}y"
    return f"{hours // 24 // 365}y"
