"""Watch fan-out: committed batches are pushed to every matching watcher, old revisions come from the log.

Each committed batch is filtered once per distinct (prefix, exact) pair and the resulting list is shared by
every watcher of that pair -- no per-watcher copies. A watcher's buffer is bounded: when a consumer falls
more than ``max_buffered`` events behind it is ended with :class:`WatchOverflowError` (writers and other
watchers never wait for it).

A watcher that starts at an old revision is registered for live events at once (at the store's revision
R0 of that moment) and reads revisions ``start..R0`` from SQLite in pages before draining what was pushed
meanwhile, so it sees every event exactly once, in order.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Any, Protocol

from .errors import CompactedError, StoreError, WatchOverflowError
from .types import Event

HISTORY_PAGE = 1000

_PROGRESS: Any = object()


def _wake_progress(waiter: asyncio.Future) -> None:
    if not waiter.done():
        waiter.set_result(_PROGRESS)


class WatchHub:
    """The set of live watchers, grouped by what they watch."""

    def __init__(self) -> None:
        self._groups: dict[tuple[str, bool], list[Watch]] = {}

    def add(self, w: Watch) -> None:
        self._groups.setdefault((w.prefix, w.exact), []).append(w)

    def remove(self, w: Watch) -> None:
        group = self._groups.get((w.prefix, w.exact))
        if group is None:
            return
        try:
            group.remove(w)
        except ValueError:
            return
        if not group:
            del self._groups[(w.prefix, w.exact)]

    def __len__(self) -> int:
        return sum(len(g) for g in self._groups.values())

    def dispatch(self, events: list[Event]) -> None:
        """Push one committed batch (non-empty, in revision order) to every matching watcher."""
        through = events[-1].kv.mod_revision
        for (prefix, exact), watchers in list(self._groups.items()):
            if exact:
                matched = [e for e in events if e.kv.key == prefix]
            elif not prefix:
                matched = events
            else:
                matched = [e for e in events if e.kv.key.startswith(prefix)]
                if len(matched) == len(events):
                    matched = events
            if matched:
                for w in tuple(watchers):  # a push may end (and remove) a watcher
                    w._push(through, matched)

    def close_all(self) -> None:
        for group in list(self._groups.values()):
            for w in list(group):
                w.close()
        self._groups.clear()


class WatchSource(Protocol):
    """What a Watch reads from the store that made it: its revisions, its hub and its history."""

    @property
    def revision(self) -> int: ...

    @property
    def compact_revision(self) -> int: ...

    @property
    def hub(self) -> WatchHub: ...

    async def history(self, prefix: str, exact: bool, first: int, last: int, limit: int) -> list[Event]: ...


class Watch:
    """Async iterator of ``list[Event]`` batches; see :meth:`Store.watch`.

    ``revision`` is the revision this watcher has seen up to: every matching event at or below it has been
    delivered. An empty batch is a progress notification (only with ``progress_interval``); after it,
    ``revision`` is the store's current revision.
    """

    def __init__(
        self,
        store: WatchSource,
        prefix: str,
        exact: bool,
        start_revision: int,
        progress_interval: float | None,
        max_buffered: int,
    ) -> None:
        self.prefix = prefix
        self.exact = exact
        self.start_revision = start_revision
        self.revision = start_revision - 1
        self._store = store
        self._progress_interval = progress_interval
        self._max_buffered = max_buffered
        self._buffer: deque[tuple[int, list[Event]]] = deque()
        self._buffered = 0
        self._waiter: asyncio.Future | None = None
        self._error: BaseException | None = None
        self._closed = False
        current = store.revision
        # History still to read from the log, as [next, last]; None once caught up.
        self._history: list[int] | None = [start_revision, current] if start_revision <= current else None
        store.hub.add(self)

    # --- producer side (called synchronously by the hub) ----------------------------------------

    def _push(self, through: int, events: list[Event]) -> None:
        if self._closed:
            return
        if events[0].kv.mod_revision < self.start_revision:  # a watch that starts in the future
            events = [e for e in events if e.kv.mod_revision >= self.start_revision]
            if not events:
                return
        self._buffer.append((through, events))
        self._buffered += len(events)
        if self._buffered > self._max_buffered:
            self._fail(WatchOverflowError(self.revision, self._max_buffered))
            return
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(None)

    def _fail(self, error: BaseException) -> None:
        self._error = error
        self._end()

    def _end(self) -> None:
        self._closed = True
        self._history = None
        self._buffer.clear()
        self._buffered = 0
        self._store.hub.remove(self)
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(None)

    # --- consumer side -------------------------------------------------------------------------

    def close(self) -> None:
        """Stop watching; a pending or later iteration ends (StopAsyncIteration)."""
        if not self._closed:
            self._end()

    async def __aenter__(self) -> Watch:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()

    def __aiter__(self) -> Watch:
        return self

    async def __anext__(self) -> list[Event]:
        while True:
            if self._error is not None:
                err, self._error = self._error, None
                raise err
            if self._closed:
                raise StopAsyncIteration
            if self._history is not None:
                events = await self._read_history()
                if events:
                    return events
                continue
            if self._buffer:
                through, events = self._buffer.popleft()
                self._buffered -= len(events)
                self.revision = through
                return events
            waiter = asyncio.get_running_loop().create_future()
            self._waiter = waiter
            if self._progress_interval is None:
                await waiter
                continue
            handle = asyncio.get_running_loop().call_later(self._progress_interval, _wake_progress, waiter)
            try:
                result = await waiter
            finally:
                handle.cancel()
                if self._waiter is waiter:
                    self._waiter = None
            if result is _PROGRESS and not self._buffer and not self._closed and self._error is None:
                self.revision = max(self.revision, self._store.revision)
                return []

    async def _read_history(self) -> list[Event]:
        assert self._history is not None
        first, last = self._history
        store = self._store
        if first <= store.compact_revision:
            self._fail(CompactedError(first, store.compact_revision))
            return []
        try:
            events = await store.history(self.prefix, self.exact, first, last, HISTORY_PAGE)
        except StoreError:
            if first > store.compact_revision:
                raise
            events = []  # compaction overtook the read; reported just below
        if first <= store.compact_revision:  # compacted while we were reading: the page may be incomplete
            self._fail(CompactedError(first, store.compact_revision))
            return []
        if self._closed or self._history is None:
            return []
        through = events[-1].kv.mod_revision if len(events) == HISTORY_PAGE else last
        self._history = [through + 1, last] if through < last else None
        self.revision = through
        return events
