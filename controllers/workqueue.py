"""A work queue like client-go's: a key is queued once, never processed by two workers at once, and
failed keys come back with exponential back-off."""

from __future__ import annotations

import asyncio
from collections.abc import Hashable


class WorkQueue:
    """Deduplicating queue of keys with per-key retry back-off."""

    def __init__(self, base_delay: float = 0.005, max_delay: float = 10.0) -> None:
        self._queue: asyncio.Queue[Hashable] = asyncio.Queue()
        self._queued: set[Hashable] = set()
        self._processing: set[Hashable] = set()
        self._dirty: set[Hashable] = set()
        self._failures: dict[Hashable, int] = {}
        self._timers: set[asyncio.TimerHandle] = set()
        self.base_delay = base_delay
        self.max_delay = max_delay

    def add(self, key: Hashable) -> None:
        if key in self._processing:
            self._dirty.add(key)  # re-queued when the current run finishes
            return
        if key not in self._queued:
            self._queued.add(key)
            self._queue.put_nowait(key)

    def add_after(self, key: Hashable, delay: float) -> None:
        loop = asyncio.get_running_loop()
        handle: asyncio.TimerHandle

        def fire() -> None:
            self._timers.discard(handle)
            self.add(key)

        handle = loop.call_later(delay, fire)
        self._timers.add(handle)

    def retry(self, key: Hashable) -> None:
        failures = self._failures.get(key, 0)
        self._failures[key] = failures + 1
        self.add_after(key, min(self.base_delay * 2**failures, self.max_delay))

    def forget(self, key: Hashable) -> None:
        self._failures.pop(key, None)

    async def get(self) -> Hashable:
        key = await self._queue.get()
        self._queued.discard(key)
        self._processing.add(key)
        return key

    def done(self, key: Hashable) -> None:
        self._processing.discard(key)
        if key in self._dirty:
            self._dirty.discard(key)
            self.add(key)

    def __len__(self) -> int:
        return self._queue.qsize()

    def shutdown(self) -> None:
        for handle in self._timers:
            handle.cancel()
        self._timers.clear()
