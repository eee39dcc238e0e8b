"""The namespace controller: empties a Terminating namespace, then removes its `kubernetes` finalizer."""

from __future__ import annotations

from typing import Any

from ..client import ApiClient, ApiError, ResourceRef
from ..discovery import namespaced_resources
from ..informer import Informer, SharedInformerFactory
from ..reconciler import Controller

NAMESPACES = ResourceRef("", "v1", "namespaces", namespaced=False)
FINALIZER = "kubernetes"


class NamespaceController(Controller):
    name = "namespace"

    def __init__(self, client: ApiClient, informers: SharedInformerFactory | None = None, **kwargs: Any) -> None:
        super().__init__(client, informers, **kwargs)
        self.namespaces: Informer | None = None

    def setup(self) -> None:
        self.namespaces = self.watch(NAMESPACES)

    async def reconcile(self, key: Any) -> None:
        assert self.namespaces is not None
        ns = self.namespaces.objects.get(key)
        if ns is None or not ns["metadata"].get("deletionTimestamp"):
            return
        if FINALIZER not in ((ns.get("spec") or {}).get("finalizers") or ()):
            return
        remaining = 0
        for ref in await namespaced_resources(self.client):
            try:
                await self.client.request("DELETE", ref.path(key))
                listed = await self.client.list(ref, key, limit="1")
            except ApiError as exc:
                if exc.status in (404, 405):
                    continue
                raise
            remaining += len(listed.get("items") or ())
        if remaining:
            self.queue.add_after(key, 0.2)  # objects with finalizers are still going away
            return
        spec = dict(ns.get("spec") or {})
        spec["finalizers"] = [f for f in spec.get("finalizers") or () if f != FINALIZER]
        body = {**ns, "spec": spec}
        try:
            await self.client.request("PUT", NAMESPACES.path(None, key, "finalize"), body=body)
        except ApiError as exc:
            if exc.status != 404:
                raise
