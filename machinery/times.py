"""Times as Kubernetes writes them: metav1.Time (RFC 3339 in UTC, to the second) and metav1.MicroTime (to the
microsecond), and back."""

from __future__ import annotations

import datetime as dt
import time

_second_cache: tuple[int, str] = (0, "")


def now() -> dt.datetime:
    """The current time, in UTC."""
    return dt.datetime.now(dt.UTC)


def now_rfc3339() -> str:
    """The current time as a metav1.Time (`2006-01-02T15:04:05Z`), formatted once per second."""
    global _second_cache
    second = int(time.time())
    if _second_cache[0] != second:
        _second_cache = (second, format_time(dt.datetime.fromtimestamp(second, dt.UTC)))
    return _second_cache[1]


def now_micro() -> str:
    """The current time as a metav1.MicroTime (`2006-01-02T15:04:05.000000Z`)."""
    return format_micro(now())


def _utc(moment: dt.datetime) -> dt.datetime:
    """`moment` in UTC (a naive datetime is taken as UTC already, as Go has no naive times)."""
    return moment.replace(tzinfo=dt.UTC) if moment.tzinfo is None else moment.astimezone(dt.UTC)


def format_time(moment: dt.datetime) -> str:
    """A metav1.Time: UTC, to the second."""
    return _utc(moment).strftime("%Y-%m-%dT%H:%M:%SZ")


def format_micro(moment: dt.datetime) -> str:
    """A metav1.MicroTime: UTC, to the microsecond."""
    return _utc(moment).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(text: str | None) -> dt.datetime | None:
    """A Time or MicroTime as written above (`Z`, `z` or an offset; none: UTC); None when unset, ValueError when
    it is not RFC 3339."""
    if not text:
        return None
    parsed = dt.datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=dt.UTC)


def try_parse_time(text: str | None) -> dt.datetime | None:
    """parse_time, with None also for text that is not a time (what printers and sorters want)."""
    try:
        return parse_time(text)
    except (TypeError, ValueError):
        return None
