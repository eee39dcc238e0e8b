"""Watches whose client has gone are ended. aiohttp does not cancel a handler when its connection drops, and a
watch that gets no event to write would otherwise hold its handler and its cache registration until its timeout
(30 minutes by default): every `interval` seconds, while watches are open, one timer looks at all of them."""

from __future__ import annotations

import asyncio
from typing import Any

from aiohttp import web


class WatchReaper:
    """The open cache watches and their requests; ends those whose connection is closed."""

    def __init__(self, interval: float = 5.0) -> None:
        self.interval = interval
        self._open: dict[Any, web.Request] = {}
        self._timer: asyncio.TimerHandle | None = None

    def __len__(self) -> int:
        return len(self._open)

    def add(self, watcher: Any, request: web.Request) -> None:
        """Watch `request`'s connection for as long as `watcher` is open (until `discard`)."""
        self._open[watcher] = request
        if self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(self.interval, self._sweep)

    def discard(self, watcher: Any) -> None:
        self._open.pop(watcher, None)

    def _sweep(self) -> None:
        self._timer = None
        for watcher, request in list(self._open.items()):
            transport = request.transport
            if transport is None or transport.is_closing():
                del self._open[watcher]
                watcher.end(drop_backlog=True)  # its handler sees the end of the stream and returns
        if self._open:
            self._timer = asyncio.get_running_loop().call_later(self.interval, self._sweep)
