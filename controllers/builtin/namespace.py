"""The namespace controller: empties a Terminating namespace, then removes its `kubernetes` finalizer."""

from __future__ import annotations

from typing import Any

from mini_kube.client import ApiClient, ApiError
from mini_kube.client.discovery import namespaced_resources
from mini_kube.client.informer import Informer, SharedInformerFactory
from mini_kube.machinery.refs import NAMESPACES
from mini_kube.machinery.times import now_rfc3339

from ..reconciler import Controller

FINALIZER = "kubernetes"
FIRST_LOOK = 0.2  # seconds until a namespace whose content is still going away is looked at again
LAST_LOOK = 8.0
"""Each look sends a deletecollection and a list for every namespaced resource. While content goes away the
namespace is looked at again after 0.2 s; content that stays (held by a finalizer, or Pods no kubelet finishes)
after twice as long each time, up to 8 s, upstream's wait for content held by finalizers (its 15 s estimate
halved, plus one). Looking every 0.2 s kept a controller manager busy for as long as such a namespace stayed."""


def _condition(kind: str, true: bool, reason_true: str, message_true: str, reason_false: str,
               message_false: str) -> dict[str, Any]:
    return {"type": kind, "status": "True" if true else "False", "lastTransitionTime": now_rfc3339(),
            "reason": reason_true if true else reason_false, "message": message_true if true else message_false}


class NamespaceController(Controller):
    name = "namespace"

    def __init__(self, client: ApiClient, informers: SharedInformerFactory | None = None, **kwargs: Any) -> None:
        super().__init__(client, informers, **kwargs)
        self.namespaces: Informer | None = None
        self.next_look: dict[Any, tuple[float, int]] = {}  # per namespace with content: next wait, objects left
        self.finalized: dict[Any, str] = {}  # namespaces finalized here (their uid) the informer may not show gone

    def setup(self) -> None:
        self.namespaces = self.watch(NAMESPACES)

    async def reconcile(self, key: Any) -> None:
        assert self.namespaces is not None
        ns = self.namespaces.objects.get(key)
        if ns is None or not ns["metadata"].get("deletionTimestamp"):
            self.next_look.pop(key, None)
            self.finalized.pop(key, None)
            return
        if FINALIZER not in ((ns.get("spec") or {}).get("finalizers") or ()):
            return
        if self.finalized.get(key) == ns["metadata"].get("uid"):
            return  # an event from before its finalization (the conditions reported): nothing left to look at
        remaining: dict[str, int] = {}
        finalizers: dict[str, int] = {}
        for ref in await namespaced_resources(self.client):
            try:
                deleted = await self.client.request("DELETE", ref.path(key))
                if isinstance(deleted, dict) and str(deleted.get("kind", "")).endswith("List") \
                        and not deleted.get("items"):
                    continue  # there was nothing, and nothing is created in a Terminating namespace: no list
                listed = await self.client.list(ref, key)
            except ApiError as exc:
                if exc.status in (404, 405):
                    continue
                raise
            items = listed.get("items") or ()
            if items:
                remaining[ref.plural + (f".{ref.group}" if ref.group else ".")] = len(items)
                for item in items:
                    for finalizer in (item.get("metadata") or {}).get("finalizers") or ():
                        finalizers[finalizer] = finalizers.get(finalizer, 0) + 1
        ns = await self._report(ns, remaining, finalizers)
        if remaining:  # objects with finalizers, or graceful deletions, are still going away
            left = sum(remaining.values())
            wait, before = self.next_look.get(key, (FIRST_LOOK, left))
            if left < before:  # content is going away: look again soon
                wait = FIRST_LOOK
            self.next_look[key] = (min(wait * 2, LAST_LOOK), left)
            self.queue.add_after(key, wait)
            return
        self.next_look.pop(key, None)
        spec = dict(ns.get("spec") or {})
        spec["finalizers"] = [f for f in spec.get("finalizers") or () if f != FINALIZER]
        body = {**ns, "spec": spec}
        try:
            await self.client.request("PUT", NAMESPACES.path(None, key, "finalize"), body=body)
        except ApiError as exc:
            if exc.status != 404:
                raise
        self.finalized[key] = ns["metadata"].get("uid")

    async def _report(self, ns: dict[str, Any], remaining: dict[str, int], finalizers: dict[str, int]
                      ) -> dict[str, Any]:
        """The deletion conditions the real namespace controller reports while it empties a namespace; the
        namespace as it is after (a finalization sent with the one read before would conflict)."""
        content = ", ".join(f"{name} has {count} resource instances" for name, count in sorted(remaining.items()))
        held = ", ".join(f"{name} in {count} resource instances" for name, count in sorted(finalizers.items()))
        conditions = [
            _condition("NamespaceDeletionDiscoveryFailure", False, "", "", "ResourcesDiscovered",
                       "All resources successfully discovered"),
            _condition("NamespaceDeletionGroupVersionParsingFailure", False, "", "", "ParsedGroupVersions",
                       "All legacy kube types successfully parsed"),
            _condition("NamespaceDeletionContentFailure", False, "", "", "ContentDeleted",
                       "All content successfully deleted, may be waiting on finalization"),
            _condition("NamespaceContentRemaining", bool(remaining), "SomeResourcesRemain",
                       f"Some resources are remaining: {content}", "ContentRemoved", "All content successfully removed"),
            _condition("NamespaceFinalizersRemaining", bool(finalizers), "SomeFinalizersRemain",
                       f"Some content in the namespace has finalizers remaining: {held}", "ContentHasNoFinalizers",
                       "All content-preserving finalizers finished"),
        ]
        old = {c.get("type"): c for c in (ns.get("status") or {}).get("conditions") or ()}
        if all((old.get(c["type"]) or {}).get("status") == c["status"] and (old.get(c["type"]) or {}).get(
                "message") == c["message"] for c in conditions):
            return ns
        try:
            return await self.client.patch(NAMESPACES, ns["metadata"]["name"], {"status": {"conditions": conditions}},
                                           subresource="status")
        except ApiError:
            return ns
