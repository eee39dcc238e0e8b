"""Logging that cannot flood: a kind of message at most once per interval, with a count of those left out
(a client storm, the file-descriptor limit, an audit log that cannot keep up)."""

from __future__ import annotations

import logging
import time
from typing import Any

log = logging.getLogger("mini-kube.apiserver")

LOG_INTERVAL = 10.0


class RateLimitedLog:
    """Log a kind of message at most once per interval, saying how many were dropped meanwhile."""

    def __init__(self, interval: float = LOG_INTERVAL) -> None:
        self.interval = interval
        self._last: dict[str, float] = {}
        self._dropped: dict[str, int] = {}

    def warning(self, key: str, message: str, *args: Any) -> None:
        self.log(logging.WARNING, key, message, *args)

    def error(self, key: str, message: str, *args: Any, detail: str = "") -> None:
        """An error, with `detail` (a traceback) on the lines after the message."""
        self.log(logging.ERROR, key, message, *args, detail=detail)

    def log(self, level: int, key: str, message: str, *args: Any, detail: str = "") -> None:
        now = time.monotonic()
        if now - self._last.get(key, -self.interval) < self.interval:
            self._dropped[key] = self._dropped.get(key, 0) + 1
            return
        self._last[key] = now
        dropped = self._dropped.pop(key, 0)
        suffix = f" (and {dropped} more like it in the last {self.interval:.0f} s)" if dropped else ""
        log.log(level, message + suffix + ("\n%s" if detail else ""), *args, *((detail,) if detail else ()))


RATE_LIMITED = RateLimitedLog()
