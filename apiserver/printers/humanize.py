"""Ages and durations as the server prints them in Table cells (`5s`, `2m3s`, `3h4m`, `2d`, `<unknown>`)."""

from __future__ import annotations

from datetime import UTC, datetime

UNKNOWN = "<unknown>"
_MINUTE = 60
_HOUR = 3600
_DAY = 86400
_YEAR = 365 * _DAY
_epoch_cache: dict[str, float | None] = {}


def human_duration(seconds: float) -> str:
    """Round a duration to two or three significant figures the way apimachinery's HumanDuration does."""
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


def epoch(timestamp: str | None) -> float | None:
    """Seconds since the epoch of an RFC 3339 timestamp; None when empty or unparseable."""
    if not timestamp:
        return None
    cached = _epoch_cache.get(timestamp, False)
    if cached is not False:
        return cached
    try:
        value: float | None = datetime.fromisoformat(timestamp).timestamp()
    except (TypeError, ValueError):
        value = None
    if len(_epoch_cache) > 65536:
        _epoch_cache.clear()
    _epoch_cache[timestamp] = value
    return value


def now_seconds(now: datetime) -> float:
    """`now` as epoch seconds; naive datetimes are taken as UTC."""
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    return now.timestamp()


def since(timestamp: str | None, now: float) -> str:
    """Elapsed time since `timestamp` (translateTimestampSince): `<unknown>` when unset."""
    start = epoch(timestamp)
    if start is None:
        return UNKNOWN
    return human_duration(now - start)


def elapsed(start: str | None, end: str | None, now: float) -> str:
    """Job-style duration: empty before it starts, running time, or start to completion."""
    began = epoch(start)
    if began is None:
        return ""
    ended = epoch(end)
    return human_duration((now if ended is None else ended) - began)
