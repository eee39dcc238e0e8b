"""The in-memory view of current state, kept in step with the store's watch (the apiserver's watch cache).

Every read (get, list, watch start) is served from here, never from SQLite. The cache is fed synchronously
by `Store.subscribe`, so when a write returns, the cache already holds it. Each object is decoded and
serialized once per write; lists and watch frames reuse those bytes, and one event object is shared by
every watcher (no per-watcher copies).
"""

from __future__ import annotations

import asyncio
import builtins
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import orjson
from mini_kube.store import Event, KeyValue

HISTORY_EVENTS = 20_000
HISTORY_BYTES = 64 << 20  # the history also stops at this many bytes of objects (older watches: the store)
WATCHER_QUEUE = 10_000
WATCHER_BYTES = 16 << 20  # a watcher this far behind (in bytes of objects) is ended, as upstream ends slow ones
DECODED_EVENTS = 1_000  # the newest events keep their decoded objects, which the watchers read as they serve them


@dataclass(slots=True)
class Entry:
    """One object's current version: its decoded form and its serialized bytes (with resourceVersion)."""

    key: str
    obj: dict[str, Any]
    raw: bytes
    revision: int
    item_raw: bytes | None = None  # `raw` as an item of a typed list (no kind/apiVersion), made once


class CacheEvent:
    """One change, shared by every watcher that receives it. `frame()` is the JSON watch line, built once.

    The decoded object (and the one it replaced) is kept while the event is recent; once it has sunk
    `DECODED_EVENTS` deep into the history it is released (`release()`) and decoded again from the bytes on the
    rare read (a watch starting from an older revision): the history's old versions are then bytes alone, which
    the garbage collector does not walk, rather than a million small dicts and lists it walks on every full
    collection."""

    __slots__ = ("type", "key", "revision", "raw", "prev_raw", "_obj", "_prev_obj", "_frame")

    def __init__(self, type_: str, key: str, revision: int, obj: dict[str, Any], raw: bytes,
                 prev_obj: dict[str, Any] | None, prev_raw: bytes | None = None) -> None:
        self.type = type_
        self.key = key
        self.revision = revision
        self.raw = raw
        self.prev_raw = prev_raw
        self._obj: dict[str, Any] | None = obj
        self._prev_obj = prev_obj
        self._frame: bytes | None = None

    @property
    def obj(self) -> dict[str, Any]:
        """The object (a read-only view: every watcher shares it)."""
        if self._obj is not None:
            return self._obj
        decoded: dict[str, Any] = orjson.loads(self.raw)
        return decoded

    @property
    def prev_obj(self) -> dict[str, Any] | None:
        """The object this event replaced or deleted (None for an add)."""
        if self._prev_obj is not None or self.prev_raw is None:
            return self._prev_obj
        decoded: dict[str, Any] = orjson.loads(self.prev_raw)
        return decoded

    def release(self) -> None:
        """Drop the decoded objects (the bytes stay); an event that cannot decode them again keeps them."""
        if self._prev_obj is None or self.prev_raw is not None:
            self._obj = self._prev_obj = None

    def frame(self) -> bytes:
        if self._frame is None:
            self._frame = b'{"type":"' + self.type.encode() + b'","object":' + self.raw + b"}\n"
        return self._frame


def collection_of(key: str) -> str:
    """`/registry/core/configmaps/ns/name` -> `/registry/core/configmaps/`."""
    parts = key.split("/", 4)
    return "/".join(parts[:4]) + "/"


def _with_revision(obj: dict[str, Any], revision: int) -> dict[str, Any]:
    copy = dict(obj)
    copy["metadata"] = {**obj.get("metadata", {}), "resourceVersion": str(revision)}
    return copy


def to_cache_event(event: Event, prev_obj: dict[str, Any] | None, prev_raw: bytes | None = None) -> CacheEvent:
    """A store event as a watch event; a deleted object carries the delete's revision as its resourceVersion.
    `prev_raw`, the replaced object's bytes, lets the event drop `prev_obj` later and decode it again."""
    kv = event.kv
    if event.type == "PUT":
        return CacheEvent("ADDED" if event.prev_kv is None else "MODIFIED", kv.key, kv.mod_revision,
                          orjson.loads(kv.value), kv.value, prev_obj, prev_raw)
    obj = _with_revision(prev_obj if prev_obj is not None else orjson.loads(kv.value), kv.mod_revision)
    return CacheEvent("DELETED", kv.key, kv.mod_revision, obj, orjson.dumps(obj), prev_obj, prev_raw)


@dataclass(frozen=True, slots=True)
class Trigger:
    """A watch that selects `field` = `value` (a kubelet's `spec.nodeName=<node>` on Pods): it is sent only the
    events whose object, or the object it replaced, has that value (`get` reads it), as upstream's watch cache
    dispatches by trigger, instead of every event of the collection to be filtered by every such watcher."""

    field: str
    value: str
    get: Callable[[dict[str, Any]], str]


class CacheWatcher:
    """A subscription to one collection (optionally one namespace), fed without copying events."""

    def __init__(self, cache: ObjectCache, collection: str, namespace: str | None,
                 trigger: Trigger | None = None) -> None:
        self.cache = cache
        self.collection = collection
        self.trigger = trigger
        self.prefix = f"{collection}{namespace}/" if namespace else collection
        self.queue: asyncio.Queue[CacheEvent | None] = asyncio.Queue()  # bounded by hand in push()
        self.behind = 0  # bytes of objects queued since the queue was last empty
        self.ended = False

    def push(self, event: CacheEvent) -> None:
        if self.ended or not event.key.startswith(self.prefix):
            return
        if self.queue.empty():
            self.behind = 0
        self.behind += len(event.raw)
        if self.queue.qsize() >= WATCHER_QUEUE or self.behind > WATCHER_BYTES:
            # A slow watcher never stalls writers or others: it is ended (its backlog dropped, not copied) and
            # re-watches from the last event it received, which the history still holds.
            self.end(drop_backlog=True)
            return
        self.queue.put_nowait(event)

    def end(self, drop_backlog: bool = False) -> None:
        """Stop this watcher; its reader sees None and finishes the stream."""
        if not self.ended:
            self.ended = True
            self.cache.unwatch(self)
            while drop_backlog and not self.queue.empty():
                self.queue.get_nowait()
            self.queue.put_nowait(None)

    def close(self) -> None:
        self.cache.unwatch(self)


class ObjectCache:
    """Current objects by collection and key, a bounded history of recent events, and the watchers."""

    def __init__(self, history_events: int = HISTORY_EVENTS, history_bytes: int = HISTORY_BYTES) -> None:
        self.revision = 0
        self._collections: dict[str, dict[str, Entry]] = {}
        self._history: deque[CacheEvent] = deque(maxlen=history_events)
        self._history_bytes = 0
        self._history_limit = history_bytes
        self._watchers: dict[str, set[CacheWatcher]] = {}  # without a trigger: every event of the collection
        # collection -> field -> (how to read it, value -> the watchers triggered by it)
        self._triggered: dict[str, dict[str, tuple[Callable[[dict[str, Any]], str], dict[str, set[CacheWatcher]]]]] = {}
        self._waiters: list[tuple[int, asyncio.Future[None]]] = []

    # -- feeding ---------------------------------------------------------------------------------
    def load(self, kvs: Iterable[KeyValue], revision: int) -> None:
        """Fill from a full range read at `revision` (start-up)."""
        for kv in kvs:
            self._collections.setdefault(collection_of(kv.key), {})[kv.key] = Entry(
                kv.key, orjson.loads(kv.value), kv.value, kv.mod_revision)
        self.revision = revision

    def apply(self, events: list[Event]) -> None:
        """Apply one committed batch from the store (called synchronously by Store.subscribe)."""
        for event in events:
            kv = event.kv
            collection = collection_of(kv.key)
            objects = self._collections.setdefault(collection, {})
            previous = objects.get(kv.key)
            cache_event = to_cache_event(event, previous.obj if previous else None,
                                         previous.raw if previous else None)
            if event.type == "PUT":
                objects[kv.key] = Entry(kv.key, cache_event.obj, kv.value, kv.mod_revision)
            else:
                objects.pop(kv.key, None)
            self.revision = kv.mod_revision
            self._remember(cache_event)
            for watcher in tuple(self._watchers.get(collection, ())):
                watcher.push(cache_event)
            triggered = self._triggered.get(collection)
            if triggered:
                self._push_triggered(triggered, cache_event)
        self._wake_waiters()

    @staticmethod
    def _push_triggered(triggered: dict[str, tuple[Callable[[dict[str, Any]], str], dict[str, set[CacheWatcher]]]],
                        event: CacheEvent) -> None:
        """Send `event` to the watchers whose trigger value the object has, or had before this event."""
        for get, by_value in triggered.values():
            value = get(event.obj)
            previous = get(event.prev_obj) if event.prev_obj is not None else value
            for watcher in tuple(by_value.get(value, ())):
                watcher.push(event)
            if previous != value:
                for watcher in tuple(by_value.get(previous, ())):
                    watcher.push(event)

    def _remember(self, event: CacheEvent) -> None:
        """Keep `event` in the history, which is bounded by count and by bytes of objects."""
        history = self._history
        if len(history) == history.maxlen:
            self._history_bytes -= len(history[0].raw)
        history.append(event)
        if len(history) > DECODED_EVENTS:
            history[-DECODED_EVENTS - 1].release()
        self._history_bytes += len(event.raw)
        while self._history_bytes > self._history_limit and len(history) > 1:
            self._history_bytes -= len(history.popleft().raw)

    def _wake_waiters(self) -> None:
        if not self._waiters:
            return
        still = []
        for revision, future in self._waiters:
            if revision <= self.revision:
                if not future.done():
                    future.set_result(None)
            else:
                still.append((revision, future))
        self._waiters = still

    async def wait_for(self, revision: int, timeout: float = 3.0) -> None:
        """Wait until the cache has seen `revision` (consistent reads after writes by other processes)."""
        if revision <= self.revision:
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append((revision, future))
        await asyncio.wait_for(future, timeout)

    # -- reads -----------------------------------------------------------------------------------
    def get(self, key: str) -> Entry | None:
        objects = self._collections.get(collection_of(key))
        return objects.get(key) if objects else None

    def list(self, collection: str, namespace: str | None = None) -> list[Entry]:
        """Entries of a collection (one namespace if given), sorted by key as etcd returns them."""
        objects = self._collections.get(collection)
        if not objects:
            return []
        if namespace:
            prefix = f"{collection}{namespace}/"
            keys = sorted(k for k in objects if k.startswith(prefix))
        else:
            keys = sorted(objects)
        return [objects[k] for k in keys]

    # -- watch -----------------------------------------------------------------------------------
    def history_since(self, revision: int) -> builtins.list[CacheEvent] | None:
        """Events after `revision` still held, or None when older history has been dropped."""
        if revision >= self.revision:
            return []
        if not self._history or self._history[0].revision > revision + 1:
            return None
        # history is in revision order: find the first event after `revision`
        events = self._history
        lo, hi = 0, len(events)
        while lo < hi:
            mid = (lo + hi) // 2
            if events[mid].revision <= revision:
                lo = mid + 1
            else:
                hi = mid
        return [events[i] for i in range(lo, len(events))]

    def watch(self, collection: str, namespace: str | None, trigger: Trigger | None = None) -> CacheWatcher:
        watcher = CacheWatcher(self, collection, namespace, trigger)
        if trigger is None:
            self._watchers.setdefault(collection, set()).add(watcher)
        else:
            fields = self._triggered.setdefault(collection, {})
            _, by_value = fields.setdefault(trigger.field, (trigger.get, {}))
            by_value.setdefault(trigger.value, set()).add(watcher)
        return watcher

    def unwatch(self, watcher: CacheWatcher) -> None:
        trigger = watcher.trigger
        if trigger is None:
            watchers = self._watchers.get(watcher.collection)
            if watchers:
                watchers.discard(watcher)
            return
        fields = self._triggered.get(watcher.collection, {})
        _, by_value = fields.get(trigger.field, (None, {}))
        found = by_value.get(trigger.value)
        if found is not None:
            found.discard(watcher)
            if not found:
                del by_value[trigger.value]

    def close_watchers(self) -> None:
        """End every watch stream (server shutdown)."""
        every = [w for watchers in self._watchers.values() for w in watchers]
        every += [w for fields in self._triggered.values() for _, by_value in fields.values()
                  for watchers in by_value.values() for w in watchers]
        for watcher in every:
            watcher.end()
