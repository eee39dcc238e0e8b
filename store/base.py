"""What both stores (SQLite and etcd) share: the in-memory view of the current keys, listeners, lifecycle."""

from __future__ import annotations

import bisect
import contextlib
import logging
from collections.abc import Callable
from typing import Any

from .errors import StoreClosedError
from .sqlite_log import prefix_end
from .types import Event, KeyValue, RangeResult

log = logging.getLogger(__name__)


class StoreBase:
    """Subclasses keep ``_current()`` (key -> latest KeyValue) and ``revision`` up to date, reset
    ``_sorted_keys`` to None when the set of live keys changes, and call ``_notify`` with each batch."""

    shared = False
    """Whether other processes write to this store too (then reads call :meth:`sync` first)."""

    def __init__(self) -> None:
        self._listeners: list[Callable[[list[Event]], None]] = []
        self._sorted_keys: list[str] | None = None  # live keys in order; rebuilt after creates/deletes
        self._closed = False

    revision: int

    def _current(self) -> dict[str, KeyValue]:
        raise NotImplementedError

    async def close(self) -> None:
        raise NotImplementedError

    async def __aenter__(self) -> Any:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def _check_usable(self) -> None:
        if self._closed:
            raise StoreClosedError("store is closed")

    async def health(self) -> None:
        """Raise a StoreError unless the store can serve reads and writes now (the API server's etcd check)."""
        self._check_usable()

    def _range_current(self, prefix: str, limit: int, start_after: str | None) -> RangeResult:
        """A range at the current revision, from memory (no I/O, consistent by construction)."""
        keys = self._sorted_keys
        index = self._current()
        if keys is None:
            keys = self._sorted_keys = sorted(index)
        lo = bisect.bisect_left(keys, prefix)
        if start_after is not None and start_after >= prefix:
            lo = max(lo, bisect.bisect_right(keys, start_after))
        end = prefix_end(prefix)
        hi = len(keys) if end is None else bisect.bisect_left(keys, end)
        count = max(0, hi - lo)
        stop = hi if limit <= 0 else min(hi, lo + limit)
        kvs = [index[k] for k in keys[lo:stop]]
        return RangeResult(kvs, self.revision, count > len(kvs), count)

    def snapshot(self, prefix: str = "") -> RangeResult:
        """Synchronously, the current live keys under ``prefix`` (from memory), at ``revision``.

        Called together with :meth:`subscribe` with no ``await`` in between, it gives a cache a
        gap-free start: the listener then receives exactly the batches after the snapshot's revision.
        """
        self._check_usable()
        return self._range_current(prefix, 0, None)

    def subscribe(self, listener: Callable[[list[Event]], None]) -> Callable[[], None]:
        """Call ``listener(events)`` with each committed batch, in revision order, synchronously, before
        the writes' awaitables return. Exceptions it raises are logged and ignored. Returns an
        unsubscribe function. See :meth:`snapshot` for a gap-free start.
        """
        self._check_usable()
        self._listeners.append(listener)

        def unsubscribe() -> None:
            with contextlib.suppress(ValueError):
                self._listeners.remove(listener)

        return unsubscribe

    def _notify(self, events: list[Event]) -> None:
        for listener in tuple(self._listeners):
            try:
                listener(events)
            except Exception:
                log.exception("store listener %r failed", listener)
