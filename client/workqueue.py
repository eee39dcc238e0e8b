"""A work queue with client-go's semantics: a key is queued once however often it is added, never handed to two
workers at once (added while in flight = processed again afterwards), delayed adds, and rate-limited retries
(per-key exponential back-off, with an overall token bucket on top, as client-go's default controller limiter)."""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Hashable


class RateLimiter:
    """max(per-key exponential back-off, overall bucket): base·2^failures up to `max_delay`; `qps`/`burst`."""

    def __init__(self, base_delay: float = 0.005, max_delay: float = 1000.0, qps: float = 10.0,
                 burst: int = 100) -> None:
        self.base_delay, self.max_delay = base_delay, max_delay
        self.qps, self.burst = qps, burst
        self._failures: dict[Hashable, int] = {}
        self._next_free = 0.0  # when the overall bucket next has a token, for keys queued after a failure

    def when(self, key: Hashable) -> float:
        failures = self._failures.get(key, 0)
        self._failures[key] = failures + 1
        backoff = min(self.base_delay * float(2 ** min(failures, 60)), self.max_delay)
        now = time.monotonic()
        self._next_free = max(self._next_free, now - self.burst / self.qps) + 1 / self.qps
        return max(backoff, self._next_free - now)

    def forget(self, key: Hashable) -> None:
        self._failures.pop(key, None)

    def failures(self, key: Hashable) -> int:
        return self._failures.get(key, 0)


class WorkQueue:
    """Deduplicating queue of keys for a controller's workers."""

    def __init__(self, limiter: RateLimiter | None = None) -> None:
        self.limiter = limiter or RateLimiter()
        self._order: deque[Hashable] = deque()
        self._queued: set[Hashable] = set()
        self._processing: set[Hashable] = set()
        self._dirty: set[Hashable] = set()
        self._waiting: dict[Hashable, asyncio.TimerHandle] = {}  # delayed adds: one per key, the earliest
        self._ready = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self.shutting_down = False

    def add(self, key: Hashable) -> None:
        if self.shutting_down:
            return
        if key in self._processing:
            self._dirty.add(key)  # queued again when the current run finishes
            return
        if key not in self._queued:
            self._queued.add(key)
            self._order.append(key)
            self._ready.set()

    def add_after(self, key: Hashable, delay: float) -> None:
        """Add the key after `delay` seconds. As client-go's delaying queue, a key waits once: a key already
        waiting keeps the earlier of its two times (each event-driven pass of a controller that asks to be called
        again later would otherwise start a chain of passes of its own)."""
        if delay <= 0:
            self.add(key)
            return
        if self.shutting_down:
            return
        loop = asyncio.get_running_loop()
        when = loop.time() + delay
        waiting = self._waiting.get(key)
        if waiting is not None:
            if waiting.when() <= when:
                return
            waiting.cancel()
        # The key is the timer's argument, not in a closure over its handle: a fired handle keeps its callback, and
        # handle -> callback -> handle would be a reference cycle per delayed key, which a server's garbage
        # collection policy (mini_kube/gc_policy.py) may never free; a fired or cancelled timer is dropped here.
        self._waiting[key] = loop.call_at(when, self._waited, key)

    def _waited(self, key: Hashable) -> None:
        self._waiting.pop(key, None)
        self.add(key)

    def add_rate_limited(self, key: Hashable) -> None:
        """Queue again after the key's back-off (a failed attempt)."""
        self.add_after(key, self.limiter.when(key))

    def retry(self, key: Hashable) -> None:  # the name older controllers use
        self.add_rate_limited(key)

    def forget(self, key: Hashable) -> None:
        """The key succeeded: reset its back-off."""
        self.limiter.forget(key)

    async def get(self) -> Hashable:
        while not self._order:
            self._ready.clear()
            await self._ready.wait()
        key = self._order.popleft()
        self._queued.discard(key)
        self._processing.add(key)
        self._idle.clear()
        return key

    def done(self, key: Hashable) -> None:
        self._processing.discard(key)
        if key in self._dirty:
            self._dirty.discard(key)
            self.add(key)
        if not self._processing:
            self._idle.set()

    def __len__(self) -> int:
        return len(self._order)

    def shutdown(self) -> None:
        """Stop taking keys; pending delayed adds are dropped."""
        self.shutting_down = True
        for handle in self._waiting.values():
            handle.cancel()
        self._waiting.clear()

    async def drain(self, timeout: float = 30.0) -> None:
        """Shut down and wait until the keys being processed are done."""
        self.shutdown()
        await asyncio.wait_for(self._idle.wait(), timeout)
