"""The scheduling queue on top of the controller work queue: Pods that did not fit are *parked* until something
that could make room happens (a node added or changed, a Pod removed), then retried after their back-off
(1 s doubling to 10 s per failed attempt, as upstream's podInitialBackoff/podMaxBackoff); a Pod parked for 5
minutes is retried anyway."""

from __future__ import annotations

import heapq
import itertools
import time
from collections.abc import Callable, Hashable

from mini_kube.client.workqueue import RateLimiter, WorkQueue

INITIAL_BACKOFF = 1.0
MAX_BACKOFF = 10.0
MAX_PARKED = 300.0


class PriorityWorkQueue(WorkQueue):
    """The active queue ordered as upstream's PrioritySort: higher `spec.priority` first, then first come."""

    def __init__(self, priority: Callable[[Hashable], int], limiter: RateLimiter | None = None) -> None:
        super().__init__(limiter)
        self.priority = priority
        self._heap: list[tuple[int, int, Hashable]] = []
        self._counter = itertools.count()

    def add(self, key: Hashable) -> None:
        if self.shutting_down:
            return
        if key in self._processing:
            self._dirty.add(key)
            return
        if key not in self._queued:
            self._queued.add(key)
            heapq.heappush(self._heap, (-self.priority(key), next(self._counter), key))
            self._ready.set()

    async def get(self) -> Hashable:
        while not self._heap:
            self._ready.clear()
            await self._ready.wait()
        key = heapq.heappop(self._heap)[2]
        self._queued.discard(key)
        self._processing.add(key)
        self._idle.clear()
        return key

    def __len__(self) -> int:
        return len(self._heap)


class SchedulingQueue:
    """Parking, back-off and moving of unschedulable Pods' keys."""

    def __init__(self, queue: WorkQueue, initial: float = INITIAL_BACKOFF, maximum: float = MAX_BACKOFF,
                 max_parked: float = MAX_PARKED) -> None:
        self.queue = queue
        self.initial, self.maximum, self.max_parked = initial, maximum, max_parked
        self.attempts: dict[str, int] = {}
        self.last_failure: dict[str, float] = {}
        self.parked: dict[str, tuple[float, bool]] = {}  # key -> (parked at, has pod affinity terms)

    def add(self, key: str) -> None:
        """A new Pod to schedule (at once)."""
        self.queue.add(key)

    def backoff(self, key: str) -> float:
        attempts = self.attempts.get(key, 0)
        if attempts <= 0:
            return 0.0
        return min(self.initial * 2 ** (attempts - 1), self.maximum)

    def _remaining(self, key: str) -> float:
        return max(0.0, self.last_failure.get(key, 0.0) + self.backoff(key) - time.monotonic())

    def _failed(self, key: str) -> None:
        self.attempts[key] = self.attempts.get(key, 0) + 1
        self.last_failure[key] = time.monotonic()

    def park(self, key: str, affinity: bool = False) -> None:
        """The Pod fits nowhere now: wait for a change in the cluster."""
        self._failed(key)
        self.parked[key] = (time.monotonic(), affinity)

    def retry_later(self, key: str) -> None:
        """An error (not a misfit), such as a failed binding: retry after the back-off."""
        self._failed(key)
        self.parked.pop(key, None)
        self.queue.add_after(key, self._remaining(key))

    def activate(self, key: str) -> None:
        """The Pod itself changed: retry it (after what is left of its back-off)."""
        if self.parked.pop(key, None) is not None or key not in self.attempts:
            self.queue.add_after(key, self._remaining(key))

    def move_all(self, which: Callable[[str, bool], bool] | None = None) -> int:
        """Something changed that may let parked Pods fit: retry them (those `which` selects)."""
        moved = [k for k, (_, affinity) in self.parked.items() if which is None or which(k, affinity)]
        for key in moved:
            del self.parked[key]
            self.queue.add_after(key, self._remaining(key))
        return len(moved)

    def flush_leftovers(self) -> None:
        now = time.monotonic()
        self.move_all(lambda key, _: now - self.parked[key][0] >= self.max_parked)

    def done(self, key: str) -> None:
        """Scheduled or gone: forget its attempts."""
        self.attempts.pop(key, None)
        self.last_failure.pop(key, None)
        self.parked.pop(key, None)
