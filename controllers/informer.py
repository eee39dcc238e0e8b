"""An informer: list, then watch from the list's resourceVersion, keeping a local copy of every object and
telling handlers about adds, updates and deletes. A broken or expired watch re-lists (like client-go's
reflector), so the local copy converges after any disconnect."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from .client import ApiClient, ApiError, ResourceRef

log = logging.getLogger("mini-kube.informer")
Handler = Callable[[str, dict[str, Any] | None, dict[str, Any] | None], None]


def object_key(obj: dict[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    namespace = meta.get("namespace")
    return f"{namespace}/{meta.get('name')}" if namespace else str(meta.get("name"))


class Informer:
    """Keeps `self.objects` (key -> object) in step with the server and calls handlers on changes."""

    def __init__(self, client: ApiClient, ref: ResourceRef, namespace: str | None = None,
                 label_selector: str = "") -> None:
        self.client = client
        self.ref = ref
        self.namespace = namespace
        self.label_selector = label_selector
        self.objects: dict[str, dict[str, Any]] = {}
        self.handlers: list[Handler] = []
        self.synced = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def add_handler(self, handler: Handler) -> None:
        """handler(event, old, new): event is "add", "update" or "delete"."""
        self.handlers.append(handler)

    def _emit(self, event: str, old: dict[str, Any] | None, new: dict[str, Any] | None) -> None:
        for handler in self.handlers:
            try:
                handler(event, old, new)
            except Exception:  # a handler bug must not kill the informer
                log.exception("informer handler failed")

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name=f"informer-{self.ref.plural}")

    async def stop(self) -> None:
        if self._task:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    async def _relist(self) -> str:
        params = {"labelSelector": self.label_selector} if self.label_selector else {}
        listed = await self.client.list(self.ref, self.namespace, **params)
        fresh = {object_key(o): o for o in listed.get("items") or ()}
        for key, old in list(self.objects.items()):
            if key not in fresh:
                del self.objects[key]
                self._emit("delete", old, None)
        for key, obj in fresh.items():
            old = self.objects.get(key)
            self.objects[key] = obj
            if old is None:
                self._emit("add", None, obj)
            elif old.get("metadata", {}).get("resourceVersion") != obj.get("metadata", {}).get("resourceVersion"):
                self._emit("update", old, obj)
        self.synced.set()
        return listed["metadata"]["resourceVersion"]

    async def _run(self) -> None:
        delay = 0.05
        while True:
            try:
                rv = await self._relist()
                params = {"labelSelector": self.label_selector} if self.label_selector else {}
                async for event in self.client.watch(self.ref, self.namespace, resource_version=rv, **params):
                    delay = 0.05
                    kind, obj = event.get("type"), event.get("object") or {}
                    if kind == "ERROR":
                        break  # expired: re-list
                    if kind == "BOOKMARK":
                        continue
                    key = object_key(obj)
                    old = self.objects.get(key)
                    if kind == "DELETED":
                        self.objects.pop(key, None)
                        self._emit("delete", old, obj)
                    else:
                        self.objects[key] = obj
                        self._emit("add" if old is None else "update", old, obj)
            except asyncio.CancelledError:
                raise
            except (ApiError, OSError, asyncio.TimeoutError, ValueError) as exc:  # noqa: UP041
                log.debug("informer %s: %s; re-listing", self.ref.plural, exc)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5.0)
            except Exception as exc:  # aiohttp client errors and the like
                log.debug("informer %s: %s; re-listing", self.ref.plural, exc)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5.0)
