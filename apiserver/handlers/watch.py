"""Watch streams: ADDED/MODIFIED/DELETED/BOOKMARK/ERROR events from a resourceVersion, with selectors.

A watcher is registered with the cache before history is read, in one synchronous step, so no event can
fall between the replayed history and the live stream. Each event's JSON frame is built once and shared.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import orjson
from aiohttp import web
from mini_kube.machinery.labels import Selector
from mini_kube.store import CompactedError, Store

from .. import errors
from ..crd.serving import served, serves_raw
from ..http.negotiation import JSON, PROTOBUF, negotiate
from ..http.query import go_bool, parse_int64, resource_version
from ..http.tables import build_table
from ..registry import selection
from ..registry.cache import CacheEvent, Entry, ObjectCache, Trigger, to_cache_event
from ..resources import ResourceType
from ..selectors import FieldSelector, parse_label_selector
from .watch_reaper import WatchReaper

BOOKMARK_INTERVAL = 5.0
WRITE_BATCH = 1 << 20  # frames are written in batches of about this many bytes
DEFAULT_TIMEOUT = 1800.0
# (group, kind) -> the field a watch selecting one value of is sent only that value's events (upstream's pod
# registry gives its watch cache spec.nodeName as trigger: each kubelet's watch gets its own node's Pods)
TRIGGER_FIELDS = {("", "Pod"): "spec.nodeName"}


@dataclass(frozen=True, slots=True)
class WatchSources:
    """What a watch reads: the cache (live events and recent history), the store (older history) and the
    reaper that ends watches whose client has gone."""

    cache: ObjectCache
    store: Store
    reaper: WatchReaper


def _frame_json(event_type: str, obj: dict[str, Any]) -> bytes:
    return orjson.dumps({"type": event_type, "object": obj}) + b"\n"


class Encoder:
    """Turns events into frames of the negotiated stream encoding (objects, or one-row Tables)."""

    def __init__(self, media: str, res: ResourceType, table_version: str = "") -> None:
        self.media = media
        self.res = res
        self.table_version = table_version
        self._headers_sent = False
        self.converts = res.strategy is not None and res.strategy.converts_on_read

    async def prepare(self, objs: list[dict[str, Any]]) -> None:
        """What encoding these objects needs done first (custom resources converted by webhook)."""
        strategy = self.res.strategy
        if self.converts and strategy is not None:
            await strategy.prepare_reads(self.res, objs)

    def event(self, event: CacheEvent, event_type: str | None = None) -> bytes:
        event_type = event_type or event.type
        obj = event.obj
        if self.table_version:
            return self._table(event_type, obj)
        if self.media == PROTOBUF:
            from ..codecs import protobuf  # loaded on first use, not at start-up

            return protobuf.encode_watch_event(event_type, self._served(obj))
        if event_type == event.type and serves_raw(self.res, obj, event.revision):
            return event.frame()
        return _frame_json(event_type, self._served(obj))

    def initial(self, entry: Entry) -> bytes:
        """The synthetic ADDED frame of an object that existed when the watch began."""
        if self.table_version:
            return self._table("ADDED", entry.obj)
        if self.media == JSON and serves_raw(self.res, entry.obj, entry.revision):
            return b'{"type":"ADDED","object":' + entry.raw + b"}\n"
        return self.raw("ADDED", self._served(entry.obj))

    def _table(self, event_type: str, obj: dict[str, Any]) -> bytes:
        """A Table of one row; column definitions only in the first event, as upstream sends them."""
        served_obj = self._served(obj)
        meta = {"resourceVersion": (served_obj.get("metadata") or {}).get("resourceVersion", "")}
        table = build_table(self.res, [served_obj], datetime.now(UTC), "Metadata", meta, self.table_version,
                            headers=not self._headers_sent)
        self._headers_sent = True
        return self.raw(event_type, table)

    def _served(self, obj: dict[str, Any]) -> dict[str, Any]:
        return served(self.res, obj)

    def raw(self, event_type: str, obj: dict[str, Any]) -> bytes:
        if self.media == PROTOBUF:
            from ..codecs import protobuf  # loaded on first use, not at start-up

            return protobuf.encode_watch_event(event_type, obj)
        return _frame_json(event_type, obj)


def _bookmark(res: ResourceType, revision: int, initial_end: bool = False) -> dict[str, Any]:
    meta: dict[str, Any] = {"resourceVersion": str(revision), "creationTimestamp": None}
    if initial_end:
        blueprint = orjson.dumps({"kind": res.list_kind, "apiVersion": res.api_version, "metadata": {},
                                  "items": None}) + b"\n"
        meta["annotations"] = {"k8s.io/initial-events-end": "true",
                               "kubernetes.io/initial-events-list-blueprint": base64.b64encode(blueprint).decode()}
    return {"kind": res.kind, "apiVersion": res.api_version, "metadata": meta}


def _classify(event: CacheEvent, labels: Selector, fields: FieldSelector, name: str,
              view: selection.View = selection.stored) -> str | None:
    """The event type this watcher sees (an object leaving its selection is DELETED), or None. Field labels read
    `view` of the object: the object as the watch's version serves it (selection.field_view, after `_prepare`)."""
    if labels.empty and fields.empty and not name:
        return event.type

    def selected(obj: dict[str, Any] | None) -> bool:
        if obj is None:
            return False
        meta = obj.get("metadata") or {}
        if name and meta.get("name") != name:
            return False
        return labels.matches(meta.get("labels")) and fields.matches(view(obj))

    now = selected(event.obj)
    if event.type == "ADDED":
        return "ADDED" if now else None
    before = selected(event.prev_obj)
    if event.type == "DELETED":
        return "DELETED" if before or now else None
    if now and before:
        return "MODIFIED"
    if now:
        return "ADDED"
    if before:
        return "DELETED"
    return None


async def _prepare(res: ResourceType, fields: FieldSelector, event: CacheEvent) -> None:
    """Convert by webhook what `_classify`'s view of the event reads (when the field selector needs it)."""
    await selection.prepare(res, fields, (event.obj, event.prev_obj))


def parse_timeout_seconds(text: str | None) -> int | None:
    """`timeoutSeconds` as upstream reads it: a whole number of seconds (int64), or 400; None when not given."""
    return parse_int64(text) if text else None


async def serve_watch(sources: WatchSources, request: web.Request, res: ResourceType, namespace: str | None,
                      name: str) -> web.StreamResponse:
    query = request.query
    target = negotiate(request.headers.get("Accept"))
    media = PROTOBUF if target.media == PROTOBUF else JSON
    labels = parse_label_selector(query.get("labelSelector"))
    fields = FieldSelector.parse(query.get("fieldSelector"), res.kind, res.selectable_fields, res.group)
    name = name or fields.single_name() or ""
    rv_text = query.get("resourceVersion", "")
    bookmarks = go_bool(query.get("allowWatchBookmarks"))
    send_initial = query.get("sendInitialEvents")
    if send_initial is not None and query.get("resourceVersionMatch") != "NotOlderThan":
        raise errors.invalid_object("ListOptions", "meta.k8s.io", "", [errors.forbidden(
            "resourceVersionMatch", "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan")])
    initial = go_bool(send_initial) if send_initial is not None else rv_text in ("", "0")
    seconds = parse_timeout_seconds(query.get("timeoutSeconds"))
    timeout = float(DEFAULT_TIMEOUT if not seconds else max(seconds, 0))  # negative: ends at once, as upstream
    start_rv = 0
    if rv_text and rv_text != "0":
        start_rv = resource_version(rv_text)

    cache = sources.cache
    watcher = cache.watch(res.key_prefix, namespace if res.namespaced else None, _trigger(res, fields))
    encoder = Encoder(media, res, target.version or "v1" if target.as_kind == "Table" else "")
    pending: list[bytes] = []
    store_watch = None
    expired = False
    try:
        sources.reaper.add(watcher, request)
        if initial or not start_rv:
            entries = cache.list(res.key_prefix, namespace if res.namespaced else None)
            snapshot_rv = cache.revision
            named = [entry for entry in entries if not name or (entry.obj.get("metadata") or {}).get("name") == name]
            selected = await selection.select(res, named, labels, fields)
            if encoder.converts:
                await encoder.prepare([entry.obj for entry in selected])
            pending.extend(encoder.initial(entry) for entry in selected)
            if go_bool(send_initial) and bookmarks:
                pending.append(encoder.raw("BOOKMARK", _bookmark(res, snapshot_rv, True)))
        else:
            scope = _key_prefix(res, namespace)
            history: list[Any] | None = cache.history_since(start_rv)
            if history is not None:  # the cache's history holds every collection: keep this watch's own
                history = [e for e in history if e.key.startswith(scope)]
            if history is None:
                watcher.close()
                store_watch = await _store_history(sources.store, res, namespace, start_rv)
                if isinstance(store_watch, bytes):  # compacted: the ERROR event ends the watch, as upstream's
                    pending.append(store_watch if media == JSON else encoder.raw(
                        "ERROR", orjson.loads(store_watch)["object"]))
                    store_watch = None
                    history = []
                    expired = True
                else:
                    history = []
            view = selection.field_view(res, fields)
            for event in history:
                await _prepare(res, fields, event)
                event_type = _classify(event, labels, fields, name, view)
                if event_type:
                    if encoder.converts:
                        await encoder.prepare([event.obj])
                    pending.append(encoder.event(event, event_type))
        response = web.StreamResponse(headers={
            "Content-Type": "application/vnd.kubernetes.protobuf;stream=watch" if media == PROTOBUF
            else "application/json", "Cache-Control": "no-cache, private", "Transfer-Encoding": "chunked"})
        await response.prepare(request)
        if pending:
            await response.write(b"".join(pending))
        if expired:
            return response
        try:
            if store_watch is not None:
                await _pump_store(store_watch, response, encoder, labels, fields, name, res, timeout)
            else:
                await _pump(watcher, response, encoder, labels, fields, name, res, bookmarks, timeout, cache)
        except ConnectionResetError:
            pass  # the client went away: nothing more to send
        return response
    finally:
        sources.reaper.discard(watcher)
        watcher.close()
        if store_watch is not None:
            store_watch.close()


def _trigger(res: ResourceType, fields: FieldSelector) -> Trigger | None:
    """The watch's trigger, when it selects one value of its kind's trigger field (a kubelet's Pods)."""
    field = TRIGGER_FIELDS.get((res.group, res.kind))
    if field is None:
        return None
    for requirement in fields.requirements:
        if requirement.field == field and requirement.op == "=":
            return Trigger(field, requirement.value, requirement.getter)
    return None


def _key_prefix(res: ResourceType, namespace: str | None) -> str:
    """The storage keys a watch of `res` (in `namespace`) covers."""
    return f"{res.key_prefix}{namespace}/" if namespace and res.namespaced else res.key_prefix


async def _store_history(store: Store, res: ResourceType, namespace: str | None, start_rv: int) -> Any:
    """A store watch from an old revision the cache no longer holds, or an ERROR frame if compacted."""
    try:
        return store.watch(_key_prefix(res, namespace), start_revision=start_rv + 1)
    except CompactedError as exc:
        status = errors.gone(f"too old resource version: {start_rv} ({exc.compact_revision})").status()
        return _frame_json("ERROR", status)


async def _pump(watcher: Any, response: web.StreamResponse, encoder: Encoder, labels: Selector,
                fields: FieldSelector, name: str, res: ResourceType, bookmarks: bool, timeout: float,
                cache: ObjectCache) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    queue = watcher.queue
    view = selection.field_view(res, fields)
    converting = selection.converts_for_fields(res, fields)
    while True:
        remaining = deadline - loop.time()
        if remaining <= 0:
            return
        wait = min(remaining, BOOKMARK_INTERVAL) if bookmarks else remaining
        try:
            event = await asyncio.wait_for(queue.get(), wait)
        except TimeoutError:
            if bookmarks and deadline - loop.time() > 0:
                await response.write(encoder.raw("BOOKMARK", _bookmark(res, cache.revision)))
            continue
        frames: list[bytes] = []
        size = 0
        while True:
            if event is None:  # overflowed: end the stream, the client re-watches
                if frames:
                    await response.write(b"".join(frames))
                return
            if converting:
                await _prepare(res, fields, event)
            event_type = _classify(event, labels, fields, name, view)
            if event_type:
                if encoder.converts:
                    await encoder.prepare([event.obj])
                frame = encoder.event(event, event_type)
                frames.append(frame)
                size += len(frame)
            if queue.empty() or size >= WRITE_BATCH:
                break
            event = queue.get_nowait()
        if frames:
            await response.write(b"".join(frames))


async def _pump_store(store_watch: Any, response: web.StreamResponse, encoder: Encoder, labels: Selector,
                      fields: FieldSelector, name: str, res: ResourceType, timeout: float) -> None:
    """Serve a watch from the store's history (old revisions), converting store events on the fly."""
    view = selection.field_view(res, fields)
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(timeout):
            async for batch in store_watch:
                frames = []
                for event in batch:
                    prev = orjson.loads(event.prev_kv.value) if event.prev_kv else None
                    cache_event = to_cache_event(event, prev)
                    await _prepare(res, fields, cache_event)
                    event_type = _classify(cache_event, labels, fields, name, view)
                    if event_type:
                        if encoder.converts:
                            await encoder.prepare([cache_event.obj])
                        frames.append(encoder.event(cache_event, event_type))
                if frames:
                    await response.write(b"".join(frames))
