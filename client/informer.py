"""Informers, as client-go's: list once, then watch from the list's resourceVersion, keeping a local copy of
every object (the lister) and telling handlers about adds, updates and deletes.

- A watch that ends (timeout, server restart, broken connection) resumes from the last resourceVersion seen
  (bookmarks included); only a 410 Gone re-lists. A re-list reports what disappeared meanwhile as a delete
  whose object is a `DeletedFinalStateUnknown` (the last state seen, which may be stale).
- Indexers: "namespace" and "owner-uid" always, others with `add_index(name, fn)`; `by_index` reads the cache,
  `index_keys` only the keys. Views (`add_view(name, fn)`): a small value derived from each object when it is
  stored (say the few fields a controller counts), so a controller can go over many objects without decoding one.
- Optional periodic resync re-delivers every object as an update.
- `SharedInformerFactory` gives one informer per (resource, namespace, label selector) to every controller in
  a process.
"""

from __future__ import annotations

import asyncio
import builtins
import logging
from collections.abc import Callable, Iterable, Iterator, MutableMapping
from typing import Any

import orjson

from .rest import ApiClient, ApiError, Gone, ResourceRef

log = logging.getLogger("mini-kube.informer")
Handler = Callable[[str, dict[str, Any] | None, dict[str, Any] | None], None]
IndexFunc = Callable[[dict[str, Any]], Iterable[str]]
WATCH_TIMEOUT = 300


class CompactStore(MutableMapping[str, dict[str, Any]]):
    """key -> object, kept as JSON bytes (about the objects' own size) and decoded on each read, so a reader
    gets its own copy and cannot change the cache by accident."""

    def __init__(self) -> None:
        self._raw: dict[str, bytes] = {}

    def __getitem__(self, key: str) -> dict[str, Any]:
        value: dict[str, Any] = orjson.loads(self._raw[key])
        return value

    def __setitem__(self, key: str, obj: dict[str, Any]) -> None:
        self._raw[key] = orjson.dumps(obj)

    def __delitem__(self, key: str) -> None:
        del self._raw[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._raw)

    def __len__(self) -> int:
        return len(self._raw)

    def __contains__(self, key: object) -> bool:
        return key in self._raw


class DeletedFinalStateUnknown(dict):  # type: ignore[type-arg]
    """A deleted object's last known state: it vanished while the watch was down (seen on a re-list)."""


def object_key(obj: dict[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    namespace = meta.get("namespace")
    return f"{namespace}/{meta.get('name')}" if namespace else str(meta.get("name"))


def _namespace_index(obj: dict[str, Any]) -> Iterable[str]:
    namespace = (obj.get("metadata") or {}).get("namespace")
    return (namespace,) if namespace else ()


def _owner_index(obj: dict[str, Any]) -> Iterable[str]:
    return tuple(ref.get("uid", "") for ref in (obj.get("metadata") or {}).get("ownerReferences") or ())


class Informer:
    """Keeps `objects` (key -> object) in step with the server and calls handlers on changes."""

    def __init__(self, client: ApiClient, ref: ResourceRef, namespace: str | None = None,
                 label_selector: str = "", resync: float = 0, field_selector: str = "") -> None:
        self.client = client
        self.ref = ref
        self.namespace = namespace
        self.label_selector = label_selector
        self.field_selector = field_selector
        self.resync = resync
        self.objects = CompactStore()
        self.handlers: list[Handler] = []
        self.synced = asyncio.Event()
        self.resource_version = ""
        self.lists = 0  # full lists made (1 normally; more only after 410 Gone)
        self._indexers: dict[str, IndexFunc] = {"namespace": _namespace_index, "owner-uid": _owner_index}
        self._indices: dict[str, dict[str, set[str]]] = {name: {} for name in self._indexers}
        self._viewers: dict[str, Callable[[dict[str, Any]], Any]] = {}
        self._views: dict[str, dict[str, Any]] = {}
        self._task: asyncio.Task[None] | None = None
        self._resync_task: asyncio.Task[None] | None = None

    # -- reading the cache ---------------------------------------------------------------------------------
    def get(self, key: str) -> dict[str, Any] | None:
        return self.objects.get(key)

    def list(self, namespace: str | None = None) -> list[dict[str, Any]]:
        if namespace is None:
            return list(self.objects.values())
        return self.by_index("namespace", namespace)

    def add_index(self, name: str, fn: IndexFunc) -> None:
        """Index the cache by `fn(obj)` (values); `by_index(name, value)` then reads it."""
        self._indexers[name] = fn
        index: dict[str, set[str]] = {}
        for key, obj in self.objects.items():
            for value in fn(obj):
                index.setdefault(value, set()).add(key)
        self._indices[name] = index

    def add_view(self, name: str, fn: Callable[[dict[str, Any]], Any]) -> None:
        """Keep `fn(obj)` for every object (computed when it is stored); `view(name, key)` and `views(name)` read
        them. `fn` must return a value its readers do not change (a tuple, a frozen dataclass)."""
        self._viewers[name] = fn
        self._views[name] = {key: fn(obj) for key, obj in self.objects.items()}

    def view(self, name: str, key: str) -> Any:
        """The `name` view of the object at `key` (None when there is none)."""
        return self._views[name].get(key)

    def views(self, name: str) -> dict[str, Any]:
        """key -> the `name` view of every object (the informer's own mapping: read, do not change)."""
        return self._views[name]

    def index_keys(self, name: str, value: str) -> builtins.list[str]:
        """The keys of the objects whose `name` index holds `value` (no object decoded)."""
        return sorted(self._indices[name].get(value, ()))

    def by_index(self, name: str, value: str) -> builtins.list[dict[str, Any]]:
        keys = self._indices[name].get(value, ())
        return [self.objects[k] for k in sorted(keys) if k in self.objects]

    def _index(self, key: str, old: dict[str, Any] | None, new: dict[str, Any] | None) -> None:
        for name, fn in self._indexers.items():
            index = self._indices[name]
            for value in fn(old) if old is not None else ():
                keys = index.get(value)
                if keys is not None:
                    keys.discard(key)
                    if not keys:
                        del index[value]
            for value in fn(new) if new is not None else ():
                index.setdefault(value, set()).add(key)

    # -- handlers ------------------------------------------------------------------------------------------
    def add_handler(self, handler: Handler) -> None:
        """handler(event, old, new): event is "add", "update" or "delete". Late handlers get the cache as adds."""
        self.handlers.append(handler)
        for obj in list(self.objects.values()):
            self._call(handler, "add", None, obj)

    @staticmethod
    def _call(handler: Handler, event: str, old: dict[str, Any] | None, new: dict[str, Any] | None) -> None:
        try:
            handler(event, old, new)
        except Exception:  # a handler bug must not kill the informer
            log.exception("informer handler failed")

    def _emit(self, event: str, old: dict[str, Any] | None, new: dict[str, Any] | None) -> None:
        for handler in tuple(self.handlers):
            self._call(handler, event, old, new)

    def _store(self, key: str, obj: dict[str, Any]) -> dict[str, Any] | None:
        old = self.objects.get(key) if key in self.objects else None
        self.objects[key] = obj
        self._index(key, old, obj)
        for name, fn in self._viewers.items():
            self._views[name][key] = fn(obj)
        return old

    def _remove(self, key: str) -> dict[str, Any] | None:
        old = self.objects.pop(key, None)
        if old is not None:
            self._index(key, old, None)
        for views in self._views.values():
            views.pop(key, None)
        return old

    # -- lifecycle -----------------------------------------------------------------------------------------
    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name=f"informer-{self.ref.plural}")
            if self.resync > 0:
                self._resync_task = asyncio.create_task(self._resync_loop(), name=f"resync-{self.ref.plural}")

    async def stop(self) -> None:
        for task in (self._task, self._resync_task):
            if task is not None:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        self._task = self._resync_task = None

    async def _resync_loop(self) -> None:
        while True:
            await asyncio.sleep(self.resync)
            for obj in list(self.objects.values()):
                self._emit("update", obj, obj)

    def _params(self) -> dict[str, str]:
        params = {"labelSelector": self.label_selector} if self.label_selector else {}
        if self.field_selector:
            params["fieldSelector"] = self.field_selector
        return params

    async def _relist(self) -> None:
        listed = await self.client.list(self.ref, self.namespace, **self._params())
        self.lists += 1
        fresh = {object_key(o): o for o in listed.get("items") or ()}
        for key in [k for k in self.objects if k not in fresh]:
            old = self._remove(key)
            self._emit("delete", old, DeletedFinalStateUnknown(old or {}))
        for key, obj in fresh.items():
            old = self._store(key, obj)
            if old is None:
                self._emit("add", None, obj)
            elif (old.get("metadata") or {}).get("resourceVersion") != (obj.get("metadata") or {}).get(
                    "resourceVersion"):
                self._emit("update", old, obj)
        self.resource_version = listed["metadata"]["resourceVersion"]
        self.synced.set()

    async def _watch(self) -> None:
        """Follow one watch stream from `resource_version`; raises Gone when it is too old."""
        async for event in self.client.watch(self.ref, self.namespace, resource_version=self.resource_version,
                                             timeout_seconds=WATCH_TIMEOUT, **self._params()):
            kind, obj = event.get("type"), event.get("object") or {}
            if kind == "ERROR":
                if obj.get("code") == 410:
                    raise Gone(410, obj)
                raise ApiError.of(int(obj.get("code") or 500), obj)
            rv = (obj.get("metadata") or {}).get("resourceVersion")
            if kind == "BOOKMARK":
                self.resource_version = rv or self.resource_version
                continue
            key = object_key(obj)
            if kind == "DELETED":
                old = self._remove(key)
                self._emit("delete", old, obj)
            else:
                old = self._store(key, obj)
                self._emit("add" if old is None else "update", old, obj)
            self.resource_version = rv or self.resource_version

    async def _run(self) -> None:
        delay = 0.05
        need_list = True
        while True:
            try:
                if need_list:
                    await self._relist()
                    need_list = False
                await self._watch()  # ended normally (timeout): resume from the last resourceVersion
                delay = 0.05
            except asyncio.CancelledError:
                raise
            except Gone:
                log.debug("informer %s: resourceVersion %s is gone; re-listing", self.ref.plural,
                          self.resource_version)
                need_list = True
            except Exception as exc:  # a broken connection or a restarting server: resume after a pause
                log.debug("informer %s: %s; resuming from %s", self.ref.plural, exc, self.resource_version)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5.0)


class SharedInformerFactory:
    """One informer per (resource, namespace, label selector) for every controller of a process."""

    def __init__(self, client: ApiClient, resync: float = 0) -> None:
        self.client = client
        self.resync = resync
        self._informers: dict[tuple[ResourceRef, str | None, str, str], Informer] = {}

    def informer(self, ref: ResourceRef, namespace: str | None = None, label_selector: str = "",
                 field_selector: str = "") -> Informer:
        key = (ref, namespace, label_selector, field_selector)
        found = self._informers.get(key)
        if found is None:
            found = self._informers[key] = Informer(self.client, ref, namespace, label_selector, self.resync,
                                                    field_selector)
        return found

    def start(self) -> None:
        for informer in list(self._informers.values()):
            informer.start()

    async def wait_for_sync(self, timeout: float | None = None) -> None:
        await asyncio.wait_for(asyncio.gather(*(i.synced.wait() for i in list(self._informers.values()))),
                               timeout)

    async def stop(self) -> None:
        await asyncio.gather(*(i.stop() for i in self._informers.values()))
