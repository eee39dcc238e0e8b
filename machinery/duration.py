"""Durations as kubectl and the server print them (apimachinery's util/duration.HumanDuration)."""

from __future__ import annotations

_MINUTE = 60
_HOUR = 3600


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
