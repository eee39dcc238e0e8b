"""Level-triggered reconcilers: informers feed keys into a work queue; workers call `reconcile(key)`.

`reconcile` reads the desired state from the informers' caches, compares, acts, and returns None, or a
`Result` asking to look again (`requeue`, `requeue_after`); raising retries the key with back-off.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mini_kube.client import ApiClient, ResourceRef
from mini_kube.client.events import EventRecorder
from mini_kube.client.informer import Informer, SharedInformerFactory, object_key
from mini_kube.client.workqueue import WorkQueue

log = logging.getLogger("mini-kube.controller")
KeyFunc = Callable[[dict[str, Any]], str | None]


@dataclass(frozen=True, slots=True)
class Result:
    """What a reconcile asks for next: nothing, to be queued again at once, or after `requeue_after` seconds."""

    requeue: bool = False
    requeue_after: float = 0.0


def owner_key(kind: str) -> KeyFunc:
    """Map an object to its controller owner's key, when that owner is of `kind` (same namespace)."""
    def key(obj: dict[str, Any]) -> str | None:
        meta = obj.get("metadata") or {}
        for ref in meta.get("ownerReferences") or ():
            if ref.get("controller") and ref.get("kind") == kind:
                return f"{meta['namespace']}/{ref['name']}" if meta.get("namespace") else ref["name"]
        return None
    return key


def generation_changed(old: dict[str, Any] | None, new: dict[str, Any] | None) -> bool:
    """A predicate: only spec changes (metadata.generation) matter."""
    return old is None or new is None or (old.get("metadata") or {}).get("generation") != (
        new.get("metadata") or {}).get("generation")


def labels_changed(old: dict[str, Any] | None, new: dict[str, Any] | None) -> bool:
    return old is None or new is None or (old.get("metadata") or {}).get("labels") != (
        new.get("metadata") or {}).get("labels")


class Controller:
    """Base class: subclasses set up watches in `setup` and implement `reconcile`."""

    name = "controller"
    workers = 2

    def __init__(self, client: ApiClient, informers: SharedInformerFactory | None = None,
                 events: EventRecorder | None = None) -> None:
        self.client = client
        self.factory = informers or SharedInformerFactory(client)
        self.events = events or EventRecorder(client, f"{self.name}-controller")
        self.queue = WorkQueue()
        self.informers: list[Informer] = []
        self._tasks: list[asyncio.Task[None]] = []

    def informer(self, informer: Informer, *, enqueue: bool = True) -> Informer:
        """Use a private informer (older style); `watch` shares one per resource instead."""
        if enqueue:
            informer.add_handler(lambda _event, old, new: self.queue.add(object_key(new or old or {})))
        self.informers.append(informer)
        return informer

    def watch(self, ref: ResourceRef, namespace: str | None = None, label_selector: str = "", *,
              enqueue: bool | KeyFunc = True,
              predicate: Callable[[dict[str, Any] | None, dict[str, Any] | None], bool] | None = None) -> Informer:
        """The shared informer of `ref`; its changes enqueue the object's key (or `enqueue(obj)`'s)."""
        informer = self.factory.informer(ref, namespace, label_selector)
        if enqueue:
            key_of: KeyFunc = object_key if enqueue is True else enqueue  # type: ignore[assignment]

            def handler(event: str, old: dict[str, Any] | None, new: dict[str, Any] | None) -> None:
                if event == "update" and predicate is not None and not predicate(old, new):
                    return
                for obj in (new, old) if event == "update" else (new or old,):
                    key = key_of(obj or {}) if obj else None
                    if key:
                        self.queue.add(key)
            informer.add_handler(handler)
        if informer not in self.informers:
            self.informers.append(informer)
        return informer

    def enqueue_owner(self, kind: str) -> KeyFunc:
        return owner_key(kind)

    def setup(self) -> None:
        """Create watches (with `self.watch(...)`)."""

    async def reconcile(self, key: Any) -> Result | None:
        raise NotImplementedError

    async def start(self) -> None:
        self.setup()
        for informer in self.informers:
            informer.start()
        await asyncio.gather(*(i.synced.wait() for i in self.informers))
        self._tasks = [asyncio.create_task(self._worker(), name=f"{self.name}-worker") for _ in range(self.workers)]

    async def stop(self) -> None:
        with contextlib.suppress(TimeoutError):  # keys still in flight after 5 s are cancelled below
            await self.queue.drain(5)
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        for informer in self.informers:
            await informer.stop()
        await self.events.close()

    def _failed(self, key: Any, exc: Exception) -> None:
        """A reconcile error: one WARNING line naming the object's key (as controller-runtime's "Reconciler
        error"), the traceback only at DEBUG so a retried failure stays one line a try."""
        log.warning("%s: reconcile %s failed: %s", self.name, key, str(exc) or type(exc).__name__)
        log.debug("%s: reconcile %s failed", self.name, key, exc_info=exc)

    async def _worker(self) -> None:
        while True:
            key = await self.queue.get()
            try:
                result = await self.reconcile(key)
                self.queue.forget(key)
                if isinstance(result, Result):
                    if result.requeue_after > 0:
                        self.queue.add_after(key, result.requeue_after)
                    elif result.requeue:
                        self.queue.add_rate_limited(key)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self._failed(key, exc)
                self.queue.add_rate_limited(key)
            finally:
                self.queue.done(key)
