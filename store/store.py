"""The public facade: an etcd-v3-like revisioned key-value store with watch, on SQLite."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import sqlite3
from collections.abc import Sequence

from .base import StoreBase
from .errors import CompactedError, FutureRevisionError, StoreClosedError, StoreError, ValueTooLargeError
from .retention import Retention
from .sqlite_log import SqliteLog
from .types import Event, KeyValue, Op, RangeResult, Value
from .watch import Watch, WatchHub
from .writer import OpTuple, Writer

log = logging.getLogger(__name__)

COMPACT_CHUNK = 500
"""Revisions compacted per SQLite transaction: writes wait at most one chunk (milliseconds) for compaction."""


class Store(StoreBase):
    """A revisioned key-value store with etcd v3 semantics (KV, compare-and-swap, watch, compaction).

    * One global revision; every successful write gets the next one (a transaction: one per op).
    * Reads at older revisions and watches from them work until the revision is compacted away.
    * Writes from concurrent callers are committed together (group commit), each with its own revision.
    * ``subscribe`` listeners and watchers see each committed batch before the writes' awaitables return.

    Use :meth:`open` and always :meth:`close` (aiosqlite's threads keep a process alive otherwise);
    all methods must be called from the event loop that opened the store.

    Memory: every live key's latest version (value included) is kept in memory, for compare-and-swap
    checks, events' ``prev_kv`` and reads at the current revision without I/O.
    Latency: a write may wait for one compaction chunk (``COMPACT_CHUNK`` revisions, a few ms) or for
    one of SQLite's WAL checkpoints (every ~4 MiB written, ~15 ms on ext4).
    """

    def __init__(self) -> None:  # use Store.open()
        super().__init__()
        self._log: SqliteLog
        self._writer: Writer
        self._hub = WatchHub()
        self._compact_revision = 0
        self._compact_lock = asyncio.Lock()
        self._compactor: asyncio.Task | None = None
        self._retention: Retention
        self._max_value_size = 0
        self._watch_buffer = 0

    @classmethod
    async def open(
        cls,
        path: str = ":memory:",
        *,
        history_seconds: float = 300,
        history_revisions: int = 0,
        max_value_size: int = 1_572_864,
        compact_interval: float = 60,
        watch_buffer: int = 10_000,
    ) -> Store:
        """Open (creating if needed) the store at ``path`` (``":memory:"`` for a private in-memory store).

        History is kept for ``history_seconds`` (kube-apiserver compacts every 5 minutes) or the last
        ``history_revisions`` revisions, whichever keeps more, and compacted automatically every
        ``compact_interval`` seconds (0 or less: never).
        ``watch_buffer`` is how many undelivered events a watcher may hold before it is ended.
        """
        self = cls()
        self._log = await SqliteLog.open(path)
        try:
            revision, self._compact_revision, index = await self._log.load()
        except BaseException:
            await self._log.close()
            raise
        self._max_value_size = max_value_size
        self._watch_buffer = watch_buffer
        self._retention = Retention(history_seconds, history_revisions, revision)
        self._writer = Writer(self._log, index, revision, max_value_size, self._on_commit)
        if compact_interval > 0:
            self._compactor = asyncio.get_running_loop().create_task(
                self._compact_loop(compact_interval), name="store-compactor"
            )
        return self

    async def close(self) -> None:
        """Finish queued writes, end all watchers, close the database. Idempotent."""
        if self._closed:
            return
        self._closed = True
        if self._compactor is not None:
            self._compactor.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._compactor
        await self._writer.close()
        self._hub.close_all()
        self._listeners.clear()
        await self._log.close()

    def _current(self) -> dict[str, KeyValue]:
        return self._writer.index

    @property
    def revision(self) -> int:  # type: ignore[override]
        """Highest committed revision (0 for a new, empty store)."""
        return self._writer.revision

    @property
    def hub(self) -> WatchHub:
        """The watchers of this store, fed each commit's events."""
        return self._hub

    async def history(self, prefix: str, exact: bool, first: int, last: int, limit: int) -> list[Event]:
        """Events under ``prefix`` (or at the exact key) in revisions first..last, at most ``limit``."""
        return await self._log.history(prefix, exact, first, last, limit)

    @property
    def compact_revision(self) -> int:
        """Reads below this revision, and watches starting at or below it, raise CompactedError."""
        return self._compact_revision

    # --- reads ---------------------------------------------------------------------------------

    def _read_revision(self, revision: int | None) -> int:
        current = self._writer.revision
        if not revision:
            return current
        if revision > current:
            raise FutureRevisionError(revision, current)
        if revision < self._compact_revision:
            raise CompactedError(revision, self._compact_revision)
        return revision

    def _check_not_compacted(self, revision: int) -> None:
        """After a read from the log: fail if compaction overtook it (it may have seen deleted rows)."""
        if revision < self._compact_revision:
            raise CompactedError(revision, self._compact_revision)

    async def get(self, key: str, *, revision: int | None = None) -> KeyValue | None:
        """The key's version at ``revision`` (None or 0: current), or None if it did not exist then.

        Raises CompactedError below ``compact_revision``, FutureRevisionError above ``revision``.
        The current revision is served from memory; older ones from SQLite.
        """
        self._check_usable()
        rev = self._read_revision(revision)
        if rev == self._writer.revision:
            return self._writer.index.get(key)
        kv = await self._log.get(key, rev)
        self._check_not_compacted(rev)
        return kv

    async def range(
        self,
        prefix: str,
        *,
        revision: int | None = None,
        limit: int = 0,
        start_after: str | None = None,
    ) -> RangeResult:
        """Live keys starting with ``prefix`` at ``revision`` (None or 0: current), in byte order.

        At most ``limit`` keys (0: all), only keys after ``start_after``. To page, pass the last key
        returned as ``start_after`` and the first page's ``revision`` so all pages show one state.
        The current revision is served from the in-memory index without suspending (so ``range`` then
        ``subscribe`` with nothing awaited in between is gap-free); older revisions from SQLite.
        """
        self._check_usable()
        rev = self._read_revision(revision)
        if rev == self._writer.revision:
            return self._range_current(prefix, limit, start_after)
        kvs, count = await self._log.range(prefix, rev, limit, start_after)
        self._check_not_compacted(rev)
        return RangeResult(kvs, rev, count > len(kvs), count)

    async def health(self) -> None:
        """Writable: the writer runs, its last commit succeeded and it can take the database's write lock."""
        self._check_usable()
        if self._writer.last_error is not None:
            raise StoreError(f"the last commit failed: {self._writer.last_error}")
        try:
            await self._writer.run_exclusive(self._log.check_writable)
        except sqlite3.Error as exc:
            raise StoreError(f"the database cannot be written: {exc}") from None

    async def sync(self) -> None:
        """Wait until every write committed before this call is visible to reads (always true here: one
        process owns this store; the etcd store waits for other servers' writes)."""
        self._check_usable()

    # --- writes --------------------------------------------------------------------------------

    def _precheck(self, key: str, value: Value | None) -> None:
        if not isinstance(key, str) or not key:
            raise ValueError(f"key must be a non-empty str, got {key!r}")
        try:
            key.encode()
        except UnicodeEncodeError:
            raise ValueError(f"key is not valid Unicode: {key!r}") from None
        if type(value) is bytes and len(value) > self._max_value_size:
            raise ValueTooLargeError(key, len(value), self._max_value_size)

    async def create(self, key: str, value: Value) -> KeyValue:
        """Create ``key``; raises KeyExistsError if it exists."""
        self._precheck(key, value)
        return await self._writer.submit(("create", key, value, None))

    async def update(self, key: str, value: Value, *, expected_mod_revision: int | None = None) -> KeyValue:
        """Replace ``key``'s value, if its mod_revision is ``expected_mod_revision`` (when given).

        Raises KeyNotFoundError, or ConflictError (with the ``current`` version) on a mismatch.
        """
        self._precheck(key, value)
        return await self._writer.submit(("update", key, value, expected_mod_revision))

    async def delete(self, key: str, *, expected_mod_revision: int | None = None) -> KeyValue:
        """Delete ``key`` (if its mod_revision is ``expected_mod_revision``, when given).

        Returns the tombstone, the same as the DELETE event's ``kv``: the deleted value and
        create_revision, ``mod_revision`` = this delete's revision, version 0.
        Raises KeyNotFoundError, or ConflictError.
        """
        self._precheck(key, None)
        return await self._writer.submit(("delete", key, None, expected_mod_revision))

    async def txn(self, ops: Sequence[Op]) -> list[KeyValue]:
        """Apply ``ops`` in order, all or nothing; op i sees the effects of ops before it.

        Each op gets its own revision; the revisions are consecutive and nothing else is interleaved.
        Returns one KeyValue per op (like create/update/delete). On failure raises the failing op's
        error, with an ``op_index`` attribute, and nothing is written.
        """
        tuples: list[OpTuple] = []
        for op in ops:
            if op.kind not in ("create", "update", "delete"):
                raise ValueError(f"unknown op kind {op.kind!r}")
            if op.kind != "delete" and op.value is None:
                raise ValueError(f"{op.kind} of {op.key!r} needs a value")
            self._precheck(op.key, op.value)
            tuples.append((op.kind, op.key, op.value, op.expected_mod_revision))
        if not tuples:
            return []
        return await self._writer.submit_txn(tuples)

    # --- notifications -------------------------------------------------------------------------

    def _on_commit(self, events: list[Event]) -> None:
        if self._sorted_keys is not None:
            for e in events:
                if e.prev_kv is None or e.type == "DELETE":  # the set of live keys changed
                    self._sorted_keys = None
                    break
        self._notify(events)
        self._hub.dispatch(events)
        self._retention.note(events[-1].kv.mod_revision)

    def watch(
        self,
        prefix: str,
        *,
        start_revision: int,
        progress_interval: float | None = None,
        exact: bool = False,
    ) -> Watch:
        """Watch keys starting with ``prefix`` (exactly that key when ``exact``) from ``start_revision``.

        Iterate the returned :class:`Watch` for ``list[Event]`` batches: every event with
        ``mod_revision >= start_revision``, in order, no gaps, no duplicates. A start at or below
        ``compact_revision`` raises CompactedError here, at once; iteration raises it instead if
        compaction overtakes a watcher still reading old history. With ``progress_interval`` an empty
        batch is yielded after that many idle seconds (then ``Watch.revision`` is the store's revision).
        A watcher more than ``watch_buffer`` events behind is ended with WatchOverflowError.
        Close it with ``Watch.close()`` (or ``async with``).
        """
        self._check_usable()
        if self._compact_revision > 0 and start_revision <= self._compact_revision:
            raise CompactedError(start_revision, self._compact_revision)
        return Watch(self, prefix, exact, max(1, start_revision), progress_interval, self._watch_buffer)

    # --- compaction ----------------------------------------------------------------------------

    async def compact(self, revision: int) -> None:
        """Drop history below ``revision``: reads at older revisions and watches starting at or below it
        then raise CompactedError. The state at ``revision`` and later is kept. A revision at or below
        ``compact_revision`` is a no-op; one above ``revision`` raises FutureRevisionError.
        """
        self._check_usable()
        if revision > self._writer.revision:
            raise FutureRevisionError(revision, self._writer.revision)
        async with self._compact_lock:
            while self._compact_revision < revision:
                start = self._compact_revision
                end = min(revision, start + COMPACT_CHUNK)
                await self._writer.run_exclusive(functools.partial(self._compact_chunk, start, end))

    async def _compact_chunk(self, start: int, end: int) -> None:
        # Raise the in-memory compact revision first: reads racing with the delete then fail their
        # post-read check instead of returning a half-compacted view.
        self._compact_revision = end
        try:
            await self._log.compact(start, end, self._writer.revision)
        except BaseException:
            self._compact_revision = start
            raise

    async def _compact_loop(self, interval: float) -> None:
        while True:
            await asyncio.sleep(interval)
            try:
                target = self._retention.target(self._writer.revision)
                if target > self._compact_revision:
                    await self.compact(target)
            except StoreError as e:
                if isinstance(e, StoreClosedError):
                    return
                log.exception("store compaction failed")
            except Exception:
                log.exception("store compaction failed")
