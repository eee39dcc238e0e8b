"""The single writer: validates writes against an in-memory index and commits them in groups.

Callers queue requests; one task takes everything queued, checks each request in order against the
current state (no SQL reads: the index holds every live key's latest version), gives each write the next
revision, and commits the whole group in one SQLite transaction. Only then is the index updated, the
``on_commit`` callback run (listeners, watchers) and the callers' futures resolved -- so a failed commit
leaves nothing behind and readers never see uncommitted state.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from .errors import (
    ConflictError,
    KeyExistsError,
    KeyNotFoundError,
    StoreClosedError,
    ValueTooLargeError,
)
from .sqlite_log import Row, SqliteLog
from .types import Event, KeyValue, Value

log = logging.getLogger(__name__)

OpTuple = tuple[str, str, Value | None, int | None]
"""(kind, key, value, expected_mod_revision)."""

MAX_BATCH_REQUESTS = 2048
MAX_BATCH_BYTES = 16 << 20

_MISSING: Any = object()


class _Request:
    __slots__ = ("ops", "single", "future", "result", "error")

    def __init__(self, ops: Sequence[OpTuple], single: bool, future: asyncio.Future) -> None:
        self.ops = ops
        """The request's ops: one for a plain write (``single``), else a transaction's."""
        self.single = single
        self.future = future
        self.result: Any = None
        self.error: BaseException | None = None


class Writer:
    """Owns the committed revision and the index of live keys; the only code that writes the log."""

    def __init__(
        self,
        log_: SqliteLog,
        index: dict[str, KeyValue],
        revision: int,
        max_value_size: int,
        on_commit: Callable[[list[Event]], None],
    ) -> None:
        self.index = index
        """key -> latest committed version of every live key."""
        self.revision = revision
        """Highest committed revision."""
        self._log = log_
        self._max_value_size = max_value_size
        self._on_commit = on_commit
        self._queue: list[_Request] = []
        self._jobs: deque[tuple[Callable[[], Awaitable[Any]], asyncio.Future]] = deque()
        self._wakeup: asyncio.Future | None = None
        self._closing = False
        self._dead: BaseException | None = None
        self.last_error: Exception | None = None
        """Why the last commit failed (None once one succeeds)."""
        self._task = asyncio.get_running_loop().create_task(self._run(), name="store-writer")

    # --- submitting ----------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closing or self._dead is not None:
            raise StoreClosedError(
                "store is closed" if self._dead is None else f"store writer failed: {self._dead!r}"
            )

    def _wake(self) -> None:
        w = self._wakeup
        if w is not None and not w.done():
            w.set_result(None)

    def submit(self, op: OpTuple) -> asyncio.Future:
        """Queue one op; the future gets its KeyValue."""
        return self._enqueue((op,), True)

    def submit_txn(self, ops: Sequence[OpTuple]) -> asyncio.Future:
        """Queue a transaction; the future gets a list of KeyValues, one per op."""
        return self._enqueue(ops, False)

    def _enqueue(self, ops: Sequence[OpTuple], single: bool) -> asyncio.Future:
        self._check_open()
        fut = asyncio.get_running_loop().create_future()
        self._queue.append(_Request(ops, single, fut))
        self._wake()
        return fut

    async def run_exclusive(self, job: Callable[[], Awaitable[Any]]) -> Any:
        """Run ``job`` on the writer task between two commits (nothing else writes meanwhile)."""
        self._check_open()
        fut = asyncio.get_running_loop().create_future()
        self._jobs.append((job, fut))
        self._wake()
        return await fut

    async def close(self) -> None:
        """Stop accepting work, finish what is queued, stop the task."""
        self._closing = True
        self._wake()
        await asyncio.shield(self._task)

    # --- the writer task -----------------------------------------------------------------------

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            while True:
                if self._queue:
                    await self._commit_batch()
                if self._jobs:
                    job, fut = self._jobs.popleft()
                    try:
                        result = await job()
                    except Exception as e:
                        if not fut.done():
                            fut.set_exception(e)
                    else:
                        if not fut.done():
                            fut.set_result(result)
                if not self._queue and not self._jobs:
                    if self._closing:
                        return
                    self._wakeup = loop.create_future()
                    await self._wakeup
                    self._wakeup = None
        except BaseException as e:
            self._dead = e
            log.exception("store writer failed")
            raise
        finally:
            err = StoreClosedError("store writer stopped")
            for req in self._queue:
                if not req.future.done():
                    req.future.set_exception(err)
            self._queue.clear()
            for _, fut in self._jobs:
                if not fut.done():
                    fut.set_exception(err)
            self._jobs.clear()

    async def _commit_batch(self) -> None:
        queue = self._queue
        index = self.index
        overlay: dict[str, KeyValue | None] = {}
        cur: KeyValue | None
        rows: list[Row] = []
        events: list[Event] = []
        rev = self.revision + 1
        nbytes = 0
        taken = 0
        for req in queue:
            if taken >= MAX_BATCH_REQUESTS or nbytes >= MAX_BATCH_BYTES:
                break
            taken += 1
            if req.future.done():  # the caller was cancelled before we got to it: not applied
                continue
            try:
                if req.single:
                    kind, key, value, expected = req.ops[0]
                    cur = overlay.get(key, _MISSING)
                    if cur is _MISSING:
                        cur = index.get(key)
                    result, event, row, new = self._apply(kind, key, value, expected, rev, cur)
                    overlay[key] = new
                    rows.append(row)
                    events.append(event)
                    nbytes += len(row[6])
                    rev += 1
                    req.result = result
                else:
                    results: list[KeyValue] = []
                    stage: dict[str, KeyValue | None] = {}
                    t_rows: list[Row] = []
                    t_events: list[Event] = []
                    t_rev = rev
                    for i, (kind, key, value, expected) in enumerate(req.ops):
                        cur = stage.get(key, _MISSING)
                        if cur is _MISSING:
                            cur = overlay.get(key, _MISSING)
                            if cur is _MISSING:
                                cur = index.get(key)
                        try:
                            result, event, row, new = self._apply(kind, key, value, expected, t_rev, cur)
                        except Exception as e:
                            e.op_index = i  # type: ignore[attr-defined]
                            raise
                        stage[key] = new
                        t_rows.append(row)
                        t_events.append(event)
                        nbytes += len(row[6])
                        t_rev += 1
                        results.append(result)
                    overlay.update(stage)
                    rows.extend(t_rows)
                    events.extend(t_events)
                    rev = t_rev
                    req.result = results
            except Exception as e:
                req.error = e
        batch = queue[:taken]
        del queue[:taken]

        if rows:
            try:
                await self._log.append(rows)
            except Exception as e:
                self.last_error = e
                log.error("store commit of %d writes failed: %r", len(rows), e)
                for req in batch:
                    if not req.future.done():
                        req.future.set_exception(req.error or e)
                return
            self.last_error = None
            for key, new in overlay.items():
                if new is None:
                    index.pop(key, None)
                else:
                    index[key] = new
            self.revision = rev - 1
            try:
                self._on_commit(events)
            except Exception:
                log.exception("store on_commit callback failed")
        for req in batch:
            fut = req.future
            if fut.done():
                continue
            if req.error is not None:
                fut.set_exception(req.error)
            else:
                fut.set_result(req.result)

    def _apply(
        self, kind: str, key: str, value: Value | None, expected: int | None, rev: int, cur: KeyValue | None
    ) -> tuple[KeyValue, Event, Row, KeyValue | None]:
        """Check one op against ``cur`` (the key's version before it) and build (result, event, row, new state)."""
        if kind == "create":
            if cur is not None:
                raise KeyExistsError(key, cur)
            data = self._materialize(key, value, rev)
            kv = KeyValue(key, data, rev, rev, 1)
            return kv, Event("PUT", kv, None), (rev, key, rev, 0, 1, 0, data), kv
        if cur is None:
            if kind not in ("update", "delete"):
                raise ValueError(f"unknown op kind {kind!r}")
            raise KeyNotFoundError(key)
        if expected is not None and expected != cur.mod_revision:
            raise ConflictError(key, expected, cur)
        if kind == "update":
            data = self._materialize(key, value, rev)
            kv = KeyValue(key, data, cur.create_revision, rev, cur.version + 1)
            row = (rev, key, cur.create_revision, cur.mod_revision, cur.version + 1, 0, data)
            return kv, Event("PUT", kv, cur), row, kv
        if kind == "delete":
            kv = KeyValue(key, cur.value, cur.create_revision, rev, 0)
            row = (rev, key, cur.create_revision, cur.mod_revision, 0, 1, b"")
            return kv, Event("DELETE", kv, cur), row, None
        raise ValueError(f"unknown op kind {kind!r}")

    def _materialize(self, key: str, value: Value | None, rev: int) -> bytes:
        if callable(value):
            value = value(rev)
        if type(value) is not bytes:
            if isinstance(value, bytearray | memoryview):
                value = bytes(value)
            else:
                raise TypeError(f"value for {key!r} must be bytes, got {type(value).__name__}")
        if len(value) > self._max_value_size:
            raise ValueTooLargeError(key, len(value), self._max_value_size)
        return value
