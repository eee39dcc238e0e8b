"""The in-server CRD controller: the resource table follows the stored CRDs, and deleted CRDs are finalized.

It listens to the store's commits (after the cache is fed), so a CRD written by any path (create, update,
patch, apply, status, the end of a deletion) and, at start-up, every stored CRD, brings the rows of its
group/plural in line before the write is answered: an Established CRD is served, others are not.

- Rows are rebuilt (schemas compiled) only when what they are made of changes: spec, accepted names,
  deletion. `fresh_after` is the CRD revision they were built at: objects written later were
  pruned and defaulted with these schemas and are served from their stored bytes.
- A CRD marked for deletion (cleanup finalizer) gets its custom resources deleted; once none is left the
  finalizer is removed, the CRD leaves the store and its API goes away.
- When a CRD changes or goes away, the other CRDs of its group whose names were not accepted are
  reconsidered (names a deleted CRD held become free).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

import orjson

from .crd import crd_status, lifecycle
from .crd.conversion_webhook import WebhookConverter
from .crd.rows import names_of
from .errors import StatusError
from .registry.generic import Registry, WriteOptions
from .registry.kinds import custom_resources
from .resources import ResourceType

if TYPE_CHECKING:
    from mini_kube.store import Event

log = logging.getLogger("mini-kube.crd")

MANAGER = "kube-apiserver"


def _condition(crd: dict[str, Any], type_: str) -> str:
    for condition in (crd.get("status") or {}).get("conditions") or ():
        if condition.get("type") == type_:
            return str(condition.get("status", ""))
    return ""


def _signature(crd: dict[str, Any]) -> bytes:
    """What the rows of a CRD are built from."""
    return orjson.dumps([crd.get("spec"), (crd.get("status") or {}).get("acceptedNames"),
                         (crd.get("metadata") or {}).get("deletionTimestamp")], option=orjson.OPT_SORT_KEYS)


class CrdController:
    """Keeps the resource table in step with the CRD collection and runs CRD deletion."""

    def __init__(self, registry: Registry, converter: WebhookConverter | None = None) -> None:
        self.registry = registry
        self.converter = converter  # CRDs converting by webhook call it
        self.resources = registry.resources
        self.cache = registry.cache
        crds = registry.resources.lookup("apiextensions.k8s.io", "v1", "customresourcedefinitions")
        assert crds is not None
        self.crds: ResourceType = crds
        self.prefix = crds.key_prefix
        self._served: dict[str, tuple[bytes, str, str]] = {}  # CRD name -> (signature, group, plural)
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._unsubscribe: Callable[[], None] | None = None

    # -- following the store ---------------------------------------------------------------------
    def start(self) -> None:
        """Serve the stored CRDs and follow every later change (call once the cache is loaded; `stop` ends it)."""
        for entry in self.cache.list(self.prefix):
            self._sync(entry.key)
        self._unsubscribe = self.registry.store.subscribe(self._on_commit)

    async def stop(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    def _on_commit(self, events: list[Event]) -> None:
        for key in dict.fromkeys(e.kv.key for e in events if e.kv.key.startswith(self.prefix)):
            try:
                self._sync(key)
            except Exception:  # one bad CRD must not stop the others (or the store's listeners)
                log.exception("could not serve the CRD stored at %s", key)

    def _sync(self, key: str) -> None:
        name = key[len(self.prefix):]
        entry = self.cache.get(key)
        if entry is None:
            served = self._served.get(name)
            self._unserve(name)
            if served is not None:
                self._recheck_group(served[1], name)
            return
        crd = entry.obj
        if _condition(crd, "Established") == "True":
            self._serve(name, crd, entry.revision)
        else:
            self._unserve(name)
        meta = crd.get("metadata") or {}
        if meta.get("deletionTimestamp") and lifecycle.CLEANUP_FINALIZER in (meta.get("finalizers") or ()):
            self._spawn(f"finalize/{name}", lambda: self._finalize(name))
        self._recheck_group((crd.get("spec") or {}).get("group", ""), name)

    def _serve(self, name: str, crd: dict[str, Any], revision: int) -> None:
        signature = _signature(crd)
        current = self._served.get(name)
        if current is not None and current[0] == signature:
            return
        resources = self.resources
        rows = []
        for row in custom_resources(crd, self.converter):
            existing = resources.lookup(row.group, row.version, row.plural)
            if existing is not None and existing.crd is None:
                log.warning("CRD %s would replace the built-in %s; not served", name, row.group_resource)
                continue
            row.fresh_after = revision
            rows.append(row)
        if current is not None:
            resources.remove(current[1], current[2])
        if rows:
            resources.add(rows)
        self._served[name] = (signature, rows[0].group, rows[0].plural) if rows else (signature, "", "")

    def _unserve(self, name: str) -> None:
        current = self._served.pop(name, None)
        if current is not None and current[2]:
            self.resources.remove(current[1], current[2])

    # -- background work -------------------------------------------------------------------------
    def _spawn(self, key: str, work: Callable[[], Coroutine[Any, Any, None]]) -> None:
        if key in self._tasks:
            return
        task = asyncio.get_running_loop().create_task(work(), name=f"crd:{key}")
        self._tasks[key] = task
        task.add_done_callback(lambda t: self._done(key, t))

    def _done(self, key: str, task: asyncio.Task[None]) -> None:
        if self._tasks.get(key) is task:
            del self._tasks[key]
        if not task.cancelled() and task.exception() is not None:
            log.error("CRD task %s failed", key, exc_info=task.exception())

    def _recheck_group(self, group: str, changed: str) -> None:
        """Reconsider the names of the group's CRDs that were refused (a conflict may be gone)."""
        for entry in self.cache.list(self.prefix):
            crd = entry.obj
            other = (crd.get("metadata") or {}).get("name", "")
            if other != changed and (crd.get("spec") or {}).get("group") == group \
                    and _condition(crd, "NamesAccepted") != "True":
                self._spawn(f"names/{other}", functools.partial(self._renew_status, other))

    async def _update(self, name: str, mutate: Callable[[dict[str, Any]], dict[str, Any]],
                      subresource: str = "") -> None:
        opts = WriteOptions(field_manager=MANAGER, subresource=subresource)
        try:
            await self.registry.guaranteed_update(self.crds, None, name, mutate, opts)
        except StatusError as exc:
            if exc.code != 404:
                raise

    async def _renew_status(self, name: str) -> None:
        def renew(crd: dict[str, Any]) -> dict[str, Any]:
            others = [e.obj for e in self.cache.list(self.prefix)
                      if (e.obj.get("metadata") or {}).get("name") != name]
            crd["status"] = crd_status(crd, others)
            return crd

        await self._update(name, renew, "status")

    async def _finalize(self, name: str) -> None:
        """Delete every custom resource of a deleted CRD, then let the CRD go."""
        def started(crd: dict[str, Any]) -> dict[str, Any]:
            lifecycle.cleanup_started(crd)
            return crd

        def finished(crd: dict[str, Any]) -> dict[str, Any]:
            lifecycle.cleanup_finished(crd)
            return crd

        await self._update(name, started, "status")
        delay = 0.02
        while True:
            entry = self.cache.get(self.crds.key(None, name))
            if entry is None:
                return
            if not await self._delete_instances(entry.obj):
                break
            await asyncio.sleep(delay)
            delay = min(delay * 2, 1.0)
        await self._update(name, finished, "status")
        await self._update(name, finished)

    async def _delete_instances(self, crd: dict[str, Any]) -> bool:
        """Delete the custom resources of `crd` still there; whether any are left (being deleted)."""
        group, plural = (crd.get("spec") or {}).get("group", ""), names_of(crd).get("plural", "")
        if not group or not plural:
            return False
        rows = self.resources.versions_of(group, plural)
        row = next((r for r in rows if r.version == r.storage_version), rows[0] if rows else None)
        entries = self.cache.list(f"/registry/{group}/{plural}/")
        for entry in entries:
            meta = entry.obj.get("metadata") or {}
            if meta.get("deletionTimestamp"):
                continue
            try:
                if row is not None:
                    await self.registry.delete(row, meta.get("namespace"), meta.get("name", ""), {},
                                                      WriteOptions(field_manager=MANAGER))
                else:
                    await self.registry.store.delete(entry.key)
            except StatusError as exc:
                if exc.code not in (404, 409):
                    log.warning("deleting %s of CRD %s: %s", entry.key, plural, exc)
        return bool(entries)
