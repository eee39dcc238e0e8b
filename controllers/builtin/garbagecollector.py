"""The garbage collector: the ownerReferences graph over every resource the server serves (custom ones too).

- A dependent whose owners are all gone is deleted (background); references to owners that are gone are
  dropped while another owner lives. "Gone" is confirmed with a live read (by name, same uid) before anything
  is deleted, so an object whose owner exists is never deleted because a cache lagged.
- Foreground deletion (`foregroundDeletion` finalizer on the owner): dependents are deleted (in foreground
  themselves); once none with `blockOwnerDeletion` remains, the finalizer is removed and the owner goes.
- Orphan (`orphan` finalizer): the owner's references are removed from its dependents, then the finalizer.
Namespaced dependents may only have owners in their namespace or cluster-scoped ones, as upstream checks.
"""

from __future__ import annotations

import contextlib
import functools
import logging
from typing import Any

from mini_kube.client import ApiClient, Conflict, NotFound, ResourceRef
from mini_kube.client.discovery import Rediscovery, Served
from mini_kube.client.informer import Informer, SharedInformerFactory, object_key
from mini_kube.machinery.meta import meta as object_meta
from mini_kube.machinery.refs import CUSTOMRESOURCEDEFINITIONS

from ..reconciler import Controller, Result

log = logging.getLogger("mini-kube.gc")
FOREGROUND, ORPHAN = "foregroundDeletion", "orphan"
IGNORED = {("", "events"), ("events.k8s.io", "events")}
REDISCOVER_AFTER = 0.5


LIVE_INDEX = "gc-owner-uid-undeleted"  # owners' uids, of dependents not being deleted yet
BLOCKING_INDEX = "gc-owner-uid-blocking"  # owners' uids whose references have blockOwnerDeletion


def _live_owners(obj: dict[str, Any]) -> tuple[str, ...]:
    meta = object_meta(obj)
    return () if meta.get("deletionTimestamp") else tuple(r.get("uid", "") for r in meta.get("ownerReferences") or ())


def _blocked_owners(obj: dict[str, Any]) -> tuple[str, ...]:
    return tuple(r.get("uid", "") for r in object_meta(obj).get("ownerReferences") or () if r.get("blockOwnerDeletion"))


class GarbageCollector(Controller):
    name = "garbagecollector"
    workers = 4

    def __init__(self, client: ApiClient, informers: SharedInformerFactory | None = None, **kwargs: Any) -> None:
        super().__init__(client, informers, **kwargs)
        self.kinds: dict[tuple[str, str], ResourceRef] = {}  # (apiVersion group, kind) -> resource
        self.by_uid: dict[str, tuple[Informer, str]] = {}
        self.waiting: set[str] = set()  # owners being deleted in foreground or orphaning their dependents
        self._watched: set[ResourceRef] = set()
        self.discovery = Rediscovery(client, self._watch_served, delay=REDISCOVER_AFTER, name=self.name)

    # -- the graph ----------------------------------------------------------------------------------------
    def setup(self) -> None:
        self.watch(CUSTOMRESOURCEDEFINITIONS, enqueue=False).add_handler(lambda *_: self.discovery.schedule())

    async def start(self) -> None:
        await self.discovery.run()
        await super().start()

    async def stop(self) -> None:
        self.discovery.cancel()
        await super().stop()

    def _watch_served(self, found: Served) -> None:
        """Watch every resource that can be listed, watched and deleted (again after CRDs change)."""
        for ref, verbs, kind in found:
            self.kinds[(ref.group, kind)] = ref
            if (ref.group, ref.plural) in IGNORED or ref in self._watched or "/" in ref.plural:
                continue
            if not {"list", "watch", "delete"} <= set(verbs):
                continue
            self._watched.add(ref)
            informer = self.factory.informer(ref)
            informer.add_index(LIVE_INDEX, _live_owners)
            informer.add_index(BLOCKING_INDEX, _blocked_owners)
            informer.add_handler(functools.partial(self._observe, informer))
            if informer not in self.informers:
                self.informers.append(informer)
            informer.start()

    def _observe(self, informer: Informer, event: str, old: dict[str, Any] | None,
                 new: dict[str, Any] | None) -> None:
        """Queue what this change may require, in work proportional to it: a dependent is checked when it
        appears or its references change, an owner when it waits for its dependents (foreground or orphan) and
        one of them changes, the dependents of what was deleted."""
        obj = new if event != "delete" else old
        if not obj:
            return
        meta = object_meta(obj)
        uid = meta.get("uid")
        if not uid:
            return
        if event == "delete":
            self.by_uid.pop(uid, None)
            self.waiting.discard(uid)
            for dependent in self._dependents(uid):
                self.queue.add(("dependent", object_meta(dependent).get("uid")))
        else:
            self.by_uid[uid] = (informer, object_key(obj))
            refs = meta.get("ownerReferences")
            if refs and (old is None or object_meta(old).get("ownerReferences") != refs):
                self.queue.add(("dependent", uid))
            if meta.get("deletionTimestamp") and {FOREGROUND, ORPHAN} & set(meta.get("finalizers") or ()):
                self.waiting.add(uid)
                self.queue.add(("owner", uid))
            else:
                self.waiting.discard(uid)
        for changed in (old, new):  # an owner waiting in foreground re-checks
            for ref in (object_meta(changed).get("ownerReferences") or ()) if changed else ():
                if ref.get("uid") in self.waiting:
                    self.queue.add(("owner", ref["uid"]))

    def _lookup(self, uid: str) -> tuple[Informer, dict[str, Any]] | None:
        found = self.by_uid.get(uid)
        if found is None:
            return None
        informer, key = found
        obj = informer.get(key)
        return (informer, obj) if obj is not None and object_meta(obj).get("uid") == uid else None

    def _dependents(self, uid: str, index: str = "owner-uid") -> list[dict[str, Any]]:
        """The objects whose `index` (any reference, LIVE_INDEX or BLOCKING_INDEX) names owner `uid`."""
        return [obj for informer in self.informers if informer.index_keys(index, uid)
                for obj in informer.by_index(index, uid)]

    # -- reconcile ----------------------------------------------------------------------------------------
    async def reconcile(self, key: Any) -> Result | None:
        role, uid = key
        found = self._lookup(uid)
        if found is None:
            return None
        informer, obj = found
        if role == "owner":
            return await self._finish_owner(informer, obj)
        return await self._check_owners(informer, obj)

    async def _owner_exists(self, dependent: dict[str, Any], ref: dict[str, Any]) -> bool:
        """Whether the referenced owner exists: the cache first, then a live read to be sure it is gone."""
        if self._lookup(ref.get("uid", "")) is not None:
            return True
        group = ref.get("apiVersion", "").rpartition("/")[0]
        resource = self.kinds.get((group, ref.get("kind", "")))
        if resource is None:
            return True  # an unknown kind: never delete on a guess
        namespace = object_meta(dependent).get("namespace") if resource.namespaced else None
        try:
            owner = await self.client.get(resource, ref.get("name", ""), namespace)
        except NotFound:
            return False
        return object_meta(owner).get("uid") == ref.get("uid")

    async def _check_owners(self, informer: Informer, obj: dict[str, Any]) -> Result | None:
        meta = object_meta(obj)
        refs = list(meta.get("ownerReferences") or ())
        if not refs or meta.get("deletionTimestamp"):
            return None
        absent = [ref for ref in refs if not await self._owner_exists(obj, ref)]
        if not absent:
            return None
        ref = informer.ref
        if len(absent) == len(refs):
            log.info("gc: deleting %s %s: its owners are gone", ref.plural, object_key(obj))
            with contextlib.suppress(NotFound, Conflict):
                await self.client.delete(ref, meta["name"], meta.get("namespace"), body={
                    "kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Background",
                    "preconditions": {"uid": meta["uid"]}})
            return None
        keep = [r for r in refs if r not in absent]
        await self._set_owner_refs(ref, obj, keep)
        return None

    async def _set_owner_refs(self, ref: ResourceRef, obj: dict[str, Any], refs: list[dict[str, Any]]) -> None:
        meta = object_meta(obj)
        patch = {"metadata": {"ownerReferences": refs or None, "uid": meta["uid"],
                              "resourceVersion": meta["resourceVersion"]}}
        with contextlib.suppress(NotFound):
            await self.client.patch(ref, meta["name"], patch, meta.get("namespace"))

    async def _finish_owner(self, informer: Informer, owner: dict[str, Any]) -> Result | None:
        """An owner being deleted in foreground or orphaning: act on the dependents this still requires (those
        not yet deleted, or still referencing it), then remove the finalizer once none blocks it."""
        meta = object_meta(owner)
        finalizers = meta.get("finalizers") or ()
        uid = meta["uid"]
        if ORPHAN in finalizers:
            for dependent in self._dependents(uid):
                found = self._lookup(object_meta(dependent).get("uid", ""))
                if found is not None:
                    refs = [r for r in object_meta(dependent).get("ownerReferences") or () if r.get("uid") != uid]
                    await self._set_owner_refs(found[0].ref, dependent, refs)
            return await self._remove_finalizer(informer, owner, ORPHAN)
        if FOREGROUND in finalizers:
            for dependent in self._dependents(uid, LIVE_INDEX):
                dmeta = object_meta(dependent)
                found = self._lookup(dmeta.get("uid", ""))
                if found is not None and not dmeta.get("deletionTimestamp"):
                    solid = [r for r in dmeta.get("ownerReferences") or () if await self._solid(dependent, r)]
                    if solid:  # another owner keeps it: it only stops naming the owners that are going
                        await self._set_owner_refs(found[0].ref, dependent, solid)
                        continue
                    await self._unblock_if_in_cycle(found[0], dependent)
                    with contextlib.suppress(NotFound):
                        await self.client.delete(found[0].ref, dmeta["name"], dmeta.get("namespace"), body={
                            "kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Foreground"})
            if any(i.index_keys(BLOCKING_INDEX, uid) for i in self.informers):
                return Result(requeue_after=0.5)  # dependents' deletions wake this too; this is a safety net
            return await self._remove_finalizer(informer, owner, FOREGROUND)
        return None

    async def _solid(self, dependent: dict[str, Any], ref: dict[str, Any]) -> bool:
        """Upstream's classifyReferences: an owner that exists and is not itself waiting for its dependents."""
        found = self._lookup(ref.get("uid", ""))
        if found is not None:
            meta = object_meta(found[1])
            return not (meta.get("deletionTimestamp") and FOREGROUND in (meta.get("finalizers") or ()))
        return await self._owner_exists(dependent, ref)

    async def _unblock_if_in_cycle(self, informer: Informer, item: dict[str, Any]) -> None:
        """Upstream's cycle breaker: an item about to be deleted in foreground, one of whose own dependents is
        already deleting its dependents, may sit in an owner cycle (each waiting for the next): its references
        stop blocking their owners, so the owners it would hold up go first."""
        meta = object_meta(item)
        if not any(object_meta(d).get("deletionTimestamp") and FOREGROUND in (object_meta(d).get("finalizers") or ())
                   for d in self._dependents(meta.get("uid", ""))):
            return
        refs = [{**r, "blockOwnerDeletion": False} if r.get("blockOwnerDeletion") else r
                for r in meta.get("ownerReferences") or ()]
        if refs != list(meta.get("ownerReferences") or ()):
            with contextlib.suppress(Conflict):
                await self._set_owner_refs(informer.ref, item, refs)

    async def _remove_finalizer(self, informer: Informer, owner: dict[str, Any], finalizer: str) -> Result | None:
        meta = object_meta(owner)
        rest = [f for f in meta.get("finalizers") or () if f != finalizer]
        patch = {"metadata": {"finalizers": rest or None, "resourceVersion": meta["resourceVersion"]}}
        try:
            await self.client.patch(informer.ref, meta["name"], patch, meta.get("namespace"))
        except NotFound:
            return None
        except Conflict:
            return Result(requeue=True)
        return None
