"""The store on a real etcd: the same interface as :class:`store.Store`, with etcd's own revisions.

* Every key lives in etcd under ``prefix``; writes are etcd transactions that compare ``mod_revision`` (or
  ``create_revision`` = 0 for creates), so several API servers can share one etcd safely.
* One etcd watch over the prefix feeds an in-memory mirror of the current keys, the ``subscribe`` listeners
  (the API server's cache) and live watchers. A write returns only after that watch has delivered it, so a
  server always reads its own writes; :meth:`sync` waits for writes made through other servers.
* A value given as a callable is called with :data:`REVISION_SENTINEL` (etcd assigns the revision only at
  commit); the sentinel's digits are replaced by the real ``mod_revision`` wherever a value is read back, so
  stored objects serve their own ``resourceVersion`` as on SQLite.
* Reads at old revisions and watches from them go to etcd (compacted ones raise CompactedError).
* A transaction is one etcd transaction: its ops share one revision and may not touch one key twice.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import logging
from collections.abc import Sequence
from typing import Any

from .base import StoreBase
from .errors import (
    CompactedError,
    ConflictError,
    FutureRevisionError,
    KeyExistsError,
    KeyNotFoundError,
    StoreClosedError,
    StoreError,
    ValueTooLargeError,
    WatchOverflowError,
)
from .etcd_client import (
    EtcdClient,
    EtcdCompacted,
    EtcdError,
    EtcdFutureRevision,
    TlsOptions,
    b64,
    range_end,
    unb64,
)
from .types import Event, KeyValue, Op, RangeResult, Value
from .watch import WatchHub

log = logging.getLogger(__name__)

REVISION_SENTINEL = 1 << 62
_SENTINEL_BYTES = str(REVISION_SENTINEL).encode()
WRITE_VISIBLE_TIMEOUT = 30.0
HEALTH_TIMEOUT = 2.0  # upstream's --etcd-healthcheck-timeout


def _with_revision(value: bytes, revision: int) -> bytes:
    return value.replace(_SENTINEL_BYTES, str(revision).encode(), 1) if _SENTINEL_BYTES in value else value


class EtcdStore(StoreBase):
    """A revisioned key-value store on etcd; see the module docstring and :class:`store.Store`."""

    shared = True  # other API servers write to the same etcd

    def __init__(self, client: EtcdClient, prefix: str, max_value_size: int, watch_buffer: int) -> None:
        super().__init__()
        self._client = client
        self._prefix = prefix.rstrip("/")
        self._max_value_size = max_value_size
        self._watch_buffer = watch_buffer
        self._index: dict[str, KeyValue] = {}
        self._revision = 0
        self._compact_revision = 0
        self._hub = WatchHub()
        self._waiters: list[tuple[int, asyncio.Future[None]]] = []
        self._watch_task: asyncio.Task[None] | None = None
        self._compactor: asyncio.Task[None] | None = None
        self._sync_lock = asyncio.Lock()
        self._sync_started = self._sync_done = 0

    @classmethod
    async def open(cls, endpoints: list[str], *, prefix: str = "/registry", tls: TlsOptions | None = None,
                   max_value_size: int = 1_572_864, watch_buffer: int = 10_000, history_revisions: int = 0,
                   compact_interval: float = 300) -> EtcdStore:
        """Connect, load the current keys under ``prefix`` and start following etcd's watch.

        Every ``compact_interval`` seconds (0 or less: never) history is compacted up to the revision the
        previous round saw, as kube-apiserver's compactor does (so history lives one to two intervals; several
        servers doing it is harmless), keeping at least the last ``history_revisions`` revisions.
        """
        self = cls(EtcdClient(endpoints, tls), prefix, max_value_size, watch_buffer)
        try:
            answer = await self._client.range(self._prefix + "/", prefix=True)
        except BaseException:
            await self._client.close()
            raise
        self._revision = int(answer["header"]["revision"])
        for raw in answer.get("kvs") or ():
            kv = self._decode(raw)
            self._index[kv.key] = kv
        loop = asyncio.get_running_loop()
        self._watch_task = loop.create_task(self._follow(self._revision + 1), name="etcd-store-watch")
        if compact_interval > 0:
            self._compactor = loop.create_task(self._compact_loop(compact_interval, history_revisions),
                                               name="etcd-store-compactor")
        return self

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for task in (self._watch_task, self._compactor):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        for _, waiter in self._waiters:
            if not waiter.done():
                waiter.set_exception(StoreClosedError("store is closed"))
        self._waiters.clear()
        self._hub.close_all()
        self._listeners.clear()
        await self._client.close()

    def _current(self) -> dict[str, KeyValue]:
        return self._index

    async def health(self, timeout: float = HEALTH_TIMEOUT) -> None:
        """etcd answers a read of `<prefix>/health` within `timeout` seconds (kube-apiserver's etcd check)."""
        self._check_usable()
        try:
            await self._client.call("/v3/kv/range", {"key": b64(self._prefix + "/health")}, timeout=timeout)
        except EtcdError as exc:
            raise StoreError(str(exc)) from None

    @property
    def revision(self) -> int:  # type: ignore[override]
        """The etcd revision this store has seen every change under its prefix up to."""
        return self._revision

    @property
    def compact_revision(self) -> int:
        return self._compact_revision

    # -- encoding ------------------------------------------------------------------------------------------
    def _key(self, etcd_key: bytes) -> str:
        return etcd_key.decode()[len(self._prefix):]

    def _decode(self, raw: dict[str, Any]) -> KeyValue:
        mod = int(raw.get("mod_revision", 0))
        return KeyValue(self._key(unb64(raw.get("key"))), _with_revision(unb64(raw.get("value")), mod),
                        int(raw.get("create_revision", 0)), mod, int(raw.get("version", 0)))

    def _event(self, raw: dict[str, Any]) -> Event:
        kv = self._decode(raw["kv"])
        prev = self._decode(raw["prev_kv"]) if raw.get("prev_kv") else None
        if raw.get("type") == "DELETE":
            base = prev or self._index.get(kv.key) or kv
            return Event("DELETE", KeyValue(kv.key, base.value, base.create_revision, kv.mod_revision, 0), prev)
        return Event("PUT", kv, prev if kv.version > 1 else None)

    # -- following etcd ------------------------------------------------------------------------------------
    async def _follow(self, start: int) -> None:
        """Apply etcd's watch to the mirror, listeners and watchers; reconnect after a break."""
        delay = 0.05
        while not self._closed:
            try:
                async for result in self._client.watch(self._prefix + "/", start, progress_notify=True):
                    delay = 0.05
                    raw_events = result.get("events") or ()
                    if raw_events:
                        events = [self._event(e) for e in raw_events]
                        self._apply(events)
                        start = events[-1].kv.mod_revision + 1
                    elif not result.get("created"):
                        self._advance(int((result.get("header") or {}).get("revision", 0)))
            except asyncio.CancelledError:
                raise
            except EtcdCompacted:
                start = await self._resync()
            except Exception as exc:  # etcd restarting, a broken stream: follow again from where we were
                log.warning("etcd watch broke (%s); resuming from revision %d", exc, start)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 2.0)

    def _apply(self, events: list[Event]) -> None:
        for event in events:
            if event.type == "DELETE":
                self._index.pop(event.kv.key, None)
                self._sorted_keys = None
            else:
                if event.kv.key not in self._index:
                    self._sorted_keys = None
                self._index[event.kv.key] = event.kv
        self._revision = max(self._revision, events[-1].kv.mod_revision)
        self._notify(events)
        self._hub.dispatch(events)
        self._wake()

    def _advance(self, revision: int) -> None:
        if revision > self._revision:
            self._revision = revision
            self._wake()

    def _wake(self) -> None:
        while self._waiters and self._waiters[0][0] <= self._revision:
            _, waiter = self._waiters.pop(0)
            if not waiter.done():
                waiter.set_result(None)

    async def _resync(self) -> int:
        """After missing compacted history: diff a fresh read against the mirror and report it as events."""
        answer = await self._client.range(self._prefix + "/", prefix=True)
        revision = int(answer["header"]["revision"])
        fresh = {kv.key: kv for kv in (self._decode(r) for r in answer.get("kvs") or ())}
        events = [Event("DELETE", KeyValue(k, v.value, v.create_revision, revision, 0), v)
                  for k, v in self._index.items() if k not in fresh]
        events += [Event("PUT", kv, self._index.get(k)) for k, kv in fresh.items()
                   if self._index.get(k) != kv]
        if events:
            self._apply(events)
        self._advance(revision)
        return revision + 1

    async def wait_for(self, revision: int, timeout: float = WRITE_VISIBLE_TIMEOUT) -> None:
        """Until the mirror (and so every listener) has seen ``revision``."""
        if revision <= self._revision:
            return
        waiter = asyncio.get_running_loop().create_future()
        bisect.insort(self._waiters, (revision, waiter), key=lambda item: item[0])
        try:
            await asyncio.wait_for(waiter, timeout)
        except TimeoutError:
            raise StoreError(f"etcd watch did not deliver revision {revision} within {timeout} s") from None

    async def sync(self) -> None:
        """Wait until everything committed to etcd before this call (by any server) is visible here.

        Concurrent callers share rounds: a round (read etcd's revision, wait for the watch to reach it) that
        started after a call began covers that call, so a burst of reads costs one or two etcd requests.
        """
        self._check_usable()
        ticket = self._sync_started + 1
        async with self._sync_lock:
            if self._sync_done >= ticket:
                return
            self._sync_started += 1
            round_number = self._sync_started
            await self.wait_for(await self._client.current_revision())
            self._sync_done = round_number

    # -- reads ---------------------------------------------------------------------------------------------
    def _check_revision(self, revision: int) -> None:
        if revision > self._revision:
            raise FutureRevisionError(revision, self._revision)
        if revision < self._compact_revision:
            raise CompactedError(revision, self._compact_revision)

    async def _etcd_range(self, key: str, **kwargs: Any) -> dict[str, Any]:
        try:
            return await self._client.range(key, **kwargs)
        except EtcdCompacted as exc:
            self._compact_revision = max(self._compact_revision, exc.compact_revision, kwargs.get("revision", 0) + 1)
            raise CompactedError(kwargs.get("revision", 0), self._compact_revision) from None
        except EtcdFutureRevision:
            raise FutureRevisionError(kwargs.get("revision", 0), self._revision) from None

    async def get(self, key: str, *, revision: int | None = None) -> KeyValue | None:
        self._check_usable()
        if not revision or revision == self._revision:
            return self._index.get(key)
        self._check_revision(revision)
        answer = await self._etcd_range(self._prefix + key, revision=revision)
        kvs = answer.get("kvs") or ()
        return self._decode(kvs[0]) if kvs else None

    async def range(self, prefix: str, *, revision: int | None = None, limit: int = 0,
                    start_after: str | None = None) -> RangeResult:
        self._check_usable()
        if not revision or revision == self._revision:
            return self._range_current(prefix, limit, start_after)
        self._check_revision(revision)
        start = self._prefix + (start_after + "\0" if start_after is not None and start_after >= prefix else prefix)
        end = range_end((self._prefix + prefix).encode())
        answer = await self._etcd_range(self._prefix + prefix, prefix=True, start=start, end=end, revision=revision,
                                        limit=limit)
        kvs = [self._decode(r) for r in answer.get("kvs") or ()]
        count = int(answer.get("count", len(kvs)))
        return RangeResult(kvs, revision, bool(answer.get("more")), count)

    # -- writes --------------------------------------------------------------------------------------------
    def _precheck(self, key: str, value: Value | None) -> None:
        if not isinstance(key, str) or not key:
            raise ValueError(f"key must be a non-empty str, got {key!r}")
        if value is not None and not isinstance(value, bytes) and not callable(value):
            raise TypeError(f"value must be bytes or a callable, got {type(value).__name__}")
        if type(value) is bytes and len(value) > self._max_value_size:
            raise ValueTooLargeError(key, len(value), self._max_value_size)

    def _materialize(self, key: str, value: Value) -> bytes:
        data = value(REVISION_SENTINEL) if callable(value) else value
        if not isinstance(data, bytes):
            raise TypeError(f"value callable must return bytes, got {type(data).__name__}")
        if len(data) > self._max_value_size:
            raise ValueTooLargeError(key, len(data), self._max_value_size)
        return data

    def _local_check(self, op: Op) -> None:
        """Refuse early what the mirror already shows would fail (etcd's compare is still the real check)."""
        current = self._index.get(op.key)
        if op.kind == "create" and current is not None:
            raise KeyExistsError(op.key, current)
        if op.kind != "create" and current is None:
            raise KeyNotFoundError(op.key)
        if op.expected_mod_revision is not None and current is not None and \
                current.mod_revision != op.expected_mod_revision and current.mod_revision >= self._revision:
            raise ConflictError(op.key, op.expected_mod_revision, current)

    async def create(self, key: str, value: Value) -> KeyValue:
        return (await self._commit([Op("create", key, value)]))[0]

    async def update(self, key: str, value: Value, *, expected_mod_revision: int | None = None) -> KeyValue:
        return (await self._commit([Op("update", key, value, expected_mod_revision)]))[0]

    async def delete(self, key: str, *, expected_mod_revision: int | None = None) -> KeyValue:
        return (await self._commit([Op("delete", key, None, expected_mod_revision)]))[0]

    async def txn(self, ops: Sequence[Op]) -> list[KeyValue]:
        """All ops in one etcd transaction (one revision); keys must be distinct, as etcd requires."""
        for op in ops:
            if op.kind not in ("create", "update", "delete"):
                raise ValueError(f"unknown op kind {op.kind!r}")
            if op.kind != "delete" and op.value is None:
                raise ValueError(f"{op.kind} of {op.key!r} needs a value")
        if len({op.key for op in ops}) != len(ops):
            raise ValueError("an etcd transaction cannot change one key twice")
        return await self._commit(list(ops)) if ops else []

    async def _commit(self, ops: list[Op]) -> list[KeyValue]:
        self._check_usable()
        for op in ops:
            self._precheck(op.key, op.value)
        for index, op in enumerate(ops):
            try:
                self._local_check(op)
            except StoreError as exc:
                exc.op_index = index  # type: ignore[attr-defined]
                raise
        compare, success, data = [], [], []
        for op in ops:
            etcd_key = b64(self._prefix + op.key)
            if op.kind == "create":
                compare.append({"key": etcd_key, "target": "CREATE", "result": "EQUAL", "create_revision": "0"})
            elif op.expected_mod_revision is not None:
                compare.append({"key": etcd_key, "target": "MOD", "result": "EQUAL",
                                "mod_revision": str(op.expected_mod_revision)})
            else:
                compare.append({"key": etcd_key, "target": "CREATE", "result": "GREATER", "create_revision": "0"})
            if op.kind == "delete":
                success.append({"request_delete_range": {"key": etcd_key, "prev_kv": True}})
                data.append(b"")
            else:
                payload = self._materialize(op.key, op.value)  # type: ignore[arg-type]
                data.append(payload)
                success.append({"request_put": {"key": etcd_key, "value": b64(payload), "prev_kv": True}})
        failure = [{"request_range": {"key": c["key"]}} for c in compare]
        try:
            answer = await self._client.txn(compare, success, failure)
        except EtcdError as exc:
            raise StoreError(str(exc)) from exc
        if not answer.get("succeeded"):
            self._raise_failure(ops, answer)
        revision = int(answer["header"]["revision"])
        results = []
        for op, payload, response in zip(ops, data, answer.get("responses") or (), strict=False):
            prev_raw = ((response.get("response_put") or response.get("response_delete_range") or {})
                        .get("prev_kv") or (response.get("response_delete_range") or {}).get("prev_kvs", [None])[0])
            prev = self._decode(prev_raw) if prev_raw else None
            if op.kind == "delete":
                base = prev or self._index[op.key]
                results.append(KeyValue(op.key, base.value, base.create_revision, revision, 0))
            else:
                create = prev.create_revision if prev is not None else revision
                version = prev.version + 1 if prev is not None else 1
                results.append(KeyValue(op.key, _with_revision(payload, revision), create, revision, version))
        await self.wait_for(revision)
        return results

    def _raise_failure(self, ops: list[Op], answer: dict[str, Any]) -> None:
        for index, (op, response) in enumerate(zip(ops, answer.get("responses") or (), strict=False)):
            kvs = (response.get("response_range") or {}).get("kvs") or ()
            current = self._decode(kvs[0]) if kvs else None
            error: StoreError | None = None
            if op.kind == "create" and current is not None:
                error = KeyExistsError(op.key, current)
            elif op.kind != "create" and current is None:
                error = KeyNotFoundError(op.key)
            elif op.expected_mod_revision is not None and current is not None and \
                    current.mod_revision != op.expected_mod_revision:
                error = ConflictError(op.key, op.expected_mod_revision, current)
            if error is not None:
                error.op_index = index  # type: ignore[attr-defined]
                raise error
        raise StoreError("etcd transaction failed its comparisons")

    # -- notifications and watches --------------------------------------------------------------------------
    def watch(self, prefix: str, *, start_revision: int, progress_interval: float | None = None,
              exact: bool = False) -> EtcdWatch:
        """Events under ``prefix`` from ``start_revision``, read from etcd's own watch (history included)."""
        self._check_usable()
        if self._compact_revision > 0 and start_revision <= self._compact_revision:
            raise CompactedError(start_revision, self._compact_revision)
        return EtcdWatch(self, prefix, exact, max(1, start_revision), progress_interval)

    # -- compaction ----------------------------------------------------------------------------------------
    async def compact(self, revision: int) -> None:
        self._check_usable()
        if revision > self._revision:
            raise FutureRevisionError(revision, self._revision)
        if revision <= self._compact_revision:
            return
        with contextlib.suppress(EtcdCompacted):  # another API server compacted as far already
            await self._client.compact(revision)
        self._compact_revision = revision

    async def _compact_loop(self, interval: float, keep: int) -> None:
        seen = self._revision
        while True:
            await asyncio.sleep(interval)
            target = min(seen, self._revision - keep)
            seen = self._revision
            if target > self._compact_revision:
                try:
                    await self.compact(target)
                except (StoreError, EtcdError):
                    log.exception("etcd compaction failed")


class EtcdWatch:
    """Async iterator of event batches from one etcd watch stream (the same contract as ``store.Watch``)."""

    def __init__(self, store: EtcdStore, prefix: str, exact: bool, start_revision: int,
                 progress_interval: float | None) -> None:
        self.prefix, self.exact = prefix, exact
        self.start_revision = start_revision
        self.revision = start_revision - 1
        self._store = store
        self._progress_interval = progress_interval
        self._queue: asyncio.Queue[list[Event] | BaseException | None] = asyncio.Queue()
        self._queued = 0
        self._closed = False
        self._task = asyncio.get_running_loop().create_task(self._run(), name=f"etcd-watch-{prefix}")

    async def _run(self) -> None:
        store = self._store
        try:
            async for result in store._client.watch(store._prefix + self.prefix, self.start_revision,
                                                    exact=self.exact):
                raw = result.get("events") or ()
                if raw:
                    events = [store._event(e) for e in raw]
                    self._queued += len(events)
                    if self._queued > store._watch_buffer:
                        self._queue.put_nowait(WatchOverflowError(self.revision, store._watch_buffer))
                        return
                    self._queue.put_nowait(events)
        except EtcdCompacted as exc:
            compact = max(exc.compact_revision, store._compact_revision)
            self._queue.put_nowait(CompactedError(self.start_revision, compact))
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self._queue.put_nowait(StoreError(f"etcd watch failed: {exc}"))

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._task.cancel()
            self._queue.put_nowait(None)

    async def __aenter__(self) -> EtcdWatch:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()

    def __aiter__(self) -> EtcdWatch:
        return self

    async def __anext__(self) -> list[Event]:
        if self._closed and self._queue.empty():
            raise StopAsyncIteration
        try:
            if self._progress_interval is None:
                item = await self._queue.get()
            else:
                item = await asyncio.wait_for(self._queue.get(), self._progress_interval)
        except TimeoutError:
            return []  # idle: a progress notification (this stream's revision is not known to be any later)
        if item is None:
            raise StopAsyncIteration
        if isinstance(item, BaseException):
            self._closed = True
            raise item
        self._queued -= len(item)
        self.revision = item[-1].kv.mod_revision
        return item
