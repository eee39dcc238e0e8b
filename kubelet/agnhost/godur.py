"""Go's `time.ParseDuration` (`1.5s`, `300ms`, `1h2m`) and `Duration.String`, as netexec's `/exit` reads them."""

from __future__ import annotations

import re

UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
PART = re.compile(r"(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h)")


def parse_duration(text: str) -> float:
    """Seconds, or ValueError with Go's message (`time: invalid duration "x"`)."""
    body = text.lstrip("+-")
    sign = -1.0 if text.startswith("-") else 1.0
    if body == "0":
        return 0.0
    pos, total = 0, 0.0
    while pos < len(body):
        match = PART.match(body, pos)
        if match is None:
            raise ValueError(f'time: invalid duration "{text}"')
        total += float(match.group(1)) * UNITS[match.group(2)]
        pos = match.end()
    if not body:
        raise ValueError(f'time: invalid duration "{text}"')
    return sign * total


def format_duration(nanoseconds: int) -> str:
    """Go's `Duration.String`: `1h2m3.5s`, `1.5ms`, `800ns`, `0s`."""
    if nanoseconds == 0:
        return "0s"
    sign, value = ("-" if nanoseconds < 0 else ""), abs(nanoseconds)

    def fraction(whole: int, digits: int) -> str:
        head, tail = divmod(whole, 10 ** digits)
        rest = f"{tail:0{digits}d}".rstrip("0")
        return f"{head}.{rest}" if rest else str(head)

    if value < 1000:
        return f"{sign}{value}ns"
    if value < 1_000_000:
        return f"{sign}{fraction(value, 3)}µs"
    if value < 1_000_000_000:
        return f"{sign}{fraction(value, 6)}ms"
    seconds, hours = fraction(value % 60_000_000_000, 9), value // 3_600_000_000_000
    minutes = value // 60_000_000_000 % 60
    return sign + (f"{hours}h" if hours else "") + (f"{minutes}m" if hours or minutes else "") + f"{seconds}s"
