"""Ages and durations as the server prints them in Table cells (`5s`, `2m3s`, `3h4m`, `2d`, `<unknown>`)."""

from __future__ import annotations

from datetime import UTC, datetime

from mini_kube.machinery.duration import human_duration
from mini_kube.machinery.times import try_parse_time

UNKNOWN = "<unknown>"
_epoch_cache: dict[str, float | None] = {}


def epoch(timestamp: str | None) -> float | None:
    """Seconds since the epoch of an RFC 3339 timestamp; None when empty or unparseable."""
    if not timestamp:
        return None
    cached = _epoch_cache.get(timestamp, False)
    if cached is not False:
        return cached
    when = try_parse_time(timestamp)
    value = when.timestamp() if when is not None else None
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
