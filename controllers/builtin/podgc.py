"""The pod garbage collector ("podgc"), as kube-controller-manager's, every `gc_check_period` seconds:

- terminated Pods (Succeeded or Failed) over `terminated_pod_gc_threshold` are deleted, evicted ones first, then
  the oldest (0 turns this off);
- terminating Pods on a node that is not Ready and carries the `node.kubernetes.io/out-of-service` taint are
  force-deleted;
- Pods bound to a node that no longer exists (still missing after `quarantine_time`, checked with a GET) are
  marked Failed with the DisruptionTarget condition (DeletionByPodGC) and force-deleted;
- terminating Pods never scheduled to a node are force-deleted.

A Pod that is not yet terminal is first set to phase Failed (server-side apply of its status as "PodGC"), so
that nothing is left Running with no kubelet to say otherwise; the delete has a grace period of 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass
from typing import Any

from mini_kube.client import ApiClient, NotFound
from mini_kube.client.events import EventRecorder
from mini_kube.client.informer import SharedInformerFactory
from mini_kube.machinery.meta import meta as object_meta
from mini_kube.machinery.refs import NODES, PODS
from mini_kube.machinery.times import now_rfc3339

from ..reconciler import Controller, Result

GC_KEY = "podgc"
FIELD_MANAGER = "PodGC"
OUT_OF_SERVICE = "node.kubernetes.io/out-of-service"
TERMINATED_POD_GC_THRESHOLD = 12500  # kube-controller-manager's --terminated-pod-gc-threshold default
GC_CHECK_PERIOD = 20.0
QUARANTINE_TIME = 40.0
FACTS_VIEW = "podgc-facts"


def _phase(pod: dict[str, Any]) -> str:
    return (pod.get("status") or {}).get("phase") or ""


def is_terminated(pod: dict[str, Any]) -> bool:
    return _phase(pod) not in ("Pending", "Running", "Unknown")


def is_evicted(pod: dict[str, Any]) -> bool:
    return _phase(pod) == "Failed" and (pod.get("status") or {}).get("reason") == "Evicted"


def gc_order(pod: dict[str, Any]) -> tuple[bool, str, str]:
    """Evicted Pods first, then by creation time, then by name (upstream's byEvictionAndCreationTimestamp)."""
    return not is_evicted(pod), object_meta(pod).get("creationTimestamp") or "", object_meta(pod).get("name") or ""


@dataclass(frozen=True, slots=True)
class PodFacts:
    """What podgc reads of a Pod, kept by the Pod informer as a view: each pass goes over every Pod without
    decoding one, and decodes only the Pods it deletes."""

    key: str
    terminated: bool
    order: tuple[bool, str, str]  # gc_order
    deleting: bool
    node: str


def pod_facts(pod: dict[str, Any]) -> PodFacts:
    meta = object_meta(pod)
    return PodFacts(key=f"{meta.get('namespace')}/{meta.get('name')}", terminated=is_terminated(pod),
                    order=gc_order(pod), deleting=bool(meta.get("deletionTimestamp")),
                    node=(pod.get("spec") or {}).get("nodeName") or "")


def node_ready(node: dict[str, Any]) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (node.get("status") or {}).get("conditions") or ())


class PodGCController(Controller):
    name = "podgc"
    workers = 1

    def __init__(self, client: ApiClient, informers: SharedInformerFactory | None = None,
                 events: EventRecorder | None = None, *, terminated_pod_gc_threshold: int = TERMINATED_POD_GC_THRESHOLD,
                 gc_check_period: float = GC_CHECK_PERIOD, quarantine_time: float = QUARANTINE_TIME) -> None:
        super().__init__(client, informers, events)
        self.threshold = terminated_pod_gc_threshold
        self.period = gc_check_period
        self.quarantine = quarantine_time
        self._missing: dict[str, float] = {}  # node name -> when a Pod was first seen bound to it while absent

    def setup(self) -> None:
        self.pods = self.watch(PODS, enqueue=False)
        self.pods.add_view(FACTS_VIEW, pod_facts)
        self.nodes = self.watch(NODES, enqueue=False)

    async def start(self) -> None:
        await super().start()
        self.queue.add(GC_KEY)

    async def reconcile(self, key: Any) -> Result | None:
        pods: list[PodFacts] = list(self.pods.views(FACTS_VIEW).values())
        if self.threshold > 0:
            await self._gc_terminated(pods)
        await self._gc_terminating(pods)
        await self._gc_orphaned(pods)
        await self._gc_unscheduled_terminating(pods)
        return Result(requeue_after=self.period)

    def _decoded(self, facts: list[PodFacts]) -> list[dict[str, Any]]:
        return [p for p in (self.pods.get(f.key) for f in facts) if p is not None]

    async def _gc_terminated(self, pods: list[PodFacts]) -> None:
        terminated = [p for p in pods if p.terminated]
        excess = len(terminated) - self.threshold
        if excess > 0:
            victims = sorted(terminated, key=lambda p: p.order)[:excess]
            await asyncio.gather(*(self._fail_and_delete(p) for p in self._decoded(victims)), return_exceptions=True)

    async def _gc_terminating(self, pods: list[PodFacts]) -> None:
        victims = []
        for pod in pods:
            if not pod.deleting:
                continue
            node = self.nodes.get(pod.node)
            if node is not None and not node_ready(node) and any(
                    t.get("key") == OUT_OF_SERVICE for t in (node.get("spec") or {}).get("taints") or ()):
                victims.append(pod)
        await asyncio.gather(*(self._fail_and_delete(p) for p in self._decoded(sorted(victims, key=lambda p: p.order))),
                             return_exceptions=True)

    async def _gc_orphaned(self, pods: list[PodFacts]) -> None:
        now = time.monotonic()
        existing = set(self.nodes.objects)  # cluster-scoped: keys are the Nodes' names
        for pod in pods:
            if pod.node and pod.node not in existing:
                self._missing.setdefault(pod.node, now)
        gone = set()
        for node, since in list(self._missing.items()):
            if now - since < self.quarantine:
                continue
            del self._missing[node]
            if node in existing:
                continue
            try:
                await self.client.get(NODES, node)
            except NotFound:
                gone.add(node)
            except Exception:  # checked again on a later pass
                continue
        for orphan in self._decoded([p for p in pods if p.node in gone]):
            await self._fail_and_delete(orphan, {"type": "DisruptionTarget", "status": "True",
                                              "reason": "DeletionByPodGC",
                                              "message": "PodGC: node no longer exists"})

    async def _gc_unscheduled_terminating(self, pods: list[PodFacts]) -> None:
        for pod in self._decoded([p for p in pods if p.deleting and not p.node]):
            await self._fail_and_delete(pod)

    async def _fail_and_delete(self, pod: dict[str, Any], condition: dict[str, Any] | None = None) -> None:
        """Set a non-terminal Pod Failed (with `condition`), then delete it with no grace period."""
        meta = object_meta(pod)
        with contextlib.suppress(NotFound):
            if _phase(pod) not in ("Succeeded", "Failed"):
                status: dict[str, Any] = {"phase": "Failed"}
                if condition is not None:
                    status["conditions"] = [{**condition, "lastTransitionTime": now_rfc3339()}]
                await self.client.apply(PODS, {"apiVersion": "v1", "kind": "Pod", "metadata": {
                    "name": meta["name"], "namespace": meta["namespace"]}, "status": status}, meta["namespace"],
                    field_manager=FIELD_MANAGER, force=True, subresource="status")
            await self.client.delete(PODS, meta["name"], meta["namespace"], body={
                "kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": 0})


