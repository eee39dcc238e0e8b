"""Node lifecycle: a node whose kubelet stops renewing its Lease (kube-node-lease) for the grace period becomes
Ready=Unknown ("Kubelet stopped posting node status.") and gets the `node.kubernetes.io/unreachable` NoSchedule
and NoExecute taints; a node that renews again and reports Ready loses them.

NoExecute taint eviction (upstream's TaintEvictionController, which kube-controller-manager ran inside this
controller before 1.29), for every NoExecute taint, whoever set it: a Pod on the node that does not tolerate one of
them is deleted at once; one that tolerates them all is deleted when the shortest `tolerationSeconds` among the
tolerations it uses runs out, counted from when this controller first saw it had to go (tolerations without
`tolerationSeconds` keep it for ever); a taint removed in time cancels its deletion. The deletion comes with the
DisruptionTarget condition (reason DeletionByTaintManager) and a TaintManagerEviction event, as upstream's. A Pod
without a toleration of a node-condition taint (unreachable, not-ready) tolerates it for `default_toleration`
seconds (the DefaultTolerationSeconds admission gives every Pod 300 s).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import time
from typing import Any

from mini_kube.client import ApiClient, Conflict, NotFound
from mini_kube.client.informer import SharedInformerFactory
from mini_kube.machinery import times
from mini_kube.machinery.refs import LEASES, NODES, PODS
from mini_kube.machinery.taints import tolerates
from mini_kube.machinery.times import format_time, now_rfc3339, parse_time

from ..reconciler import Controller, Result

UNREACHABLE = "node.kubernetes.io/unreachable"
CONDITIONS = ("Ready", "MemoryPressure", "DiskPressure", "PIDPressure")


NOT_READY = "node.kubernetes.io/not-ready"
CONDITION_TAINTS = (UNREACHABLE, NOT_READY)


def toleration_seconds(pod: dict[str, Any], taints: list[dict[str, Any]], default: float) -> float | None:
    """How long `pod` may stay on a node with these NoExecute `taints`: None for ever, else seconds (0: not at
    all); a node-condition taint it has no toleration for is tolerated for `default` seconds."""
    tolerations = (pod.get("spec") or {}).get("tolerations") or ()
    shortest: float | None = None
    for taint in taints:
        toleration = next((t for t in tolerations if tolerates(t, taint)), None)
        if toleration is None:
            if taint.get("key") not in CONDITION_TAINTS:
                return 0.0
            seconds: Any = default
        else:
            seconds = toleration.get("tolerationSeconds")
            if seconds is None:
                continue
        seconds = max(float(seconds), 0.0)
        shortest = seconds if shortest is None else min(shortest, seconds)
    return shortest


class NodeLifecycleController(Controller):
    name = "nodelifecycle"

    def __init__(self, client: ApiClient, informers: SharedInformerFactory | None = None, *,
                 grace_period: float = 40.0, default_toleration: float = 300.0, **kwargs: Any) -> None:
        super().__init__(client, informers, **kwargs)
        self.grace_period = grace_period
        self.default_toleration = default_toleration
        self._pending: dict[str, dict[str, float]] = {}  # node -> pod uid -> when its eviction clock started

    def setup(self) -> None:
        self.nodes = self.watch(NODES)
        self.leases = self.watch(LEASES, "kube-node-lease", enqueue=lambda o: (o.get("metadata") or {}).get("name"))
        self.pods = self.watch(PODS, enqueue=lambda o: (o.get("spec") or {}).get("nodeName"))
        self.pods.add_index("node", lambda o: ((o.get("spec") or {}).get("nodeName") or "",))

    def _heartbeat(self, node: dict[str, Any]) -> dt.datetime | None:
        lease = self.leases.get(f"kube-node-lease/{node['metadata']['name']}")
        renewed = parse_time(((lease or {}).get("spec") or {}).get("renewTime"))
        ready: dict[str, Any] = next((c for c in (node.get("status") or {}).get("conditions") or () if c.get("type") == "Ready"), {})
        reported = parse_time(ready.get("lastHeartbeatTime"))
        known = [t for t in (renewed, reported) if t is not None]
        return max(known) if known else parse_time(node["metadata"].get("creationTimestamp"))

    async def reconcile(self, key: Any) -> Result | None:
        node = self.nodes.get(key)
        if node is None:
            self._pending.pop(key, None)
            return None
        heartbeat = self._heartbeat(node)
        silent = (times.now() - heartbeat).total_seconds() if heartbeat else float("inf")
        taints = (node.get("spec") or {}).get("taints") or []
        tainted = any(t.get("key") == UNREACHABLE and t.get("effect") == "NoExecute" for t in taints)
        check_again: float | None = None
        if silent > self.grace_period:
            if not tainted:
                await self._mark_unreachable(node)
                return Result(requeue=True)
        else:
            if tainted and self._reports_ready(node):
                await self._set_taints(node, [t for t in taints if t.get("key") != UNREACHABLE])
                return None  # the node's update comes back through the watch
            check_again = max(self.grace_period - silent, 0.05) + 0.05
        due = await self._evict(node)
        soonest = min((t for t in (check_again, due) if t is not None), default=None)
        return Result(requeue_after=soonest) if soonest is not None else None

    @staticmethod
    def _reports_ready(node: dict[str, Any]) -> bool:
        return any(c.get("type") == "Ready" and c.get("status") == "True"
                   for c in (node.get("status") or {}).get("conditions") or ())

    async def _mark_unreachable(self, node: dict[str, Any]) -> None:
        now = format_time(times.now())
        conditions = []
        for condition in (node.get("status") or {}).get("conditions") or ():
            if condition.get("type") in CONDITIONS and condition.get("status") != "Unknown":
                condition = {**condition, "status": "Unknown", "reason": "NodeStatusUnknown",
                             "message": "Kubelet stopped posting node status.", "lastTransitionTime": now}
            conditions.append(condition)
        if not any(c.get("type") == "Ready" for c in conditions):
            conditions.append({"type": "Ready", "status": "Unknown", "reason": "NodeStatusNeverUpdated",
                               "message": "Kubelet never posted node status.", "lastTransitionTime": now,
                               "lastHeartbeatTime": now})
        name = node["metadata"]["name"]
        with contextlib.suppress(NotFound, Conflict):
            await self.client.patch(NODES, name, {"status": {"conditions": conditions}}, subresource="status")
        taints = [t for t in (node.get("spec") or {}).get("taints") or () if t.get("key") != UNREACHABLE]
        taints += [{"key": UNREACHABLE, "effect": "NoSchedule", "timeAdded": now},
                   {"key": UNREACHABLE, "effect": "NoExecute", "timeAdded": now}]
        await self._set_taints(node, taints)
        self.events.event(node, "Normal", "NodeNotReady", f"Node {name} status is now: NodeNotReady")

    async def _set_taints(self, node: dict[str, Any], taints: list[dict[str, Any]]) -> None:
        patch = {"metadata": {"resourceVersion": node["metadata"]["resourceVersion"]},
                 "spec": {"taints": taints or None}}
        with contextlib.suppress(NotFound, Conflict):
            await self.client.patch(NODES, node["metadata"]["name"], patch)

    async def _evict(self, node: dict[str, Any]) -> float | None:
        """Delete the node's Pods whose toleration of its NoExecute taints has run out (or that have none);
        returns the seconds until the next one runs out."""
        name = node["metadata"]["name"]
        taints = [t for t in (node.get("spec") or {}).get("taints") or () if t.get("effect") == "NoExecute"]
        pending = self._pending.pop(name, {})
        waiting: dict[str, float] = {}
        now = time.monotonic()
        next_due: float | None = None
        for pod in self.pods.by_index("node", name) if taints else ():
            meta = pod.get("metadata") or {}
            if meta.get("deletionTimestamp"):
                continue
            tolerated = toleration_seconds(pod, taints, self.default_toleration)
            if tolerated is None:
                continue
            uid = meta.get("uid", "")
            started = pending.pop(uid, now)
            left = started + tolerated - now
            if left <= 0:
                await self._delete(pod)
            else:
                waiting[uid] = started
                next_due = left if next_due is None else min(next_due, left)
        for pod in self.pods.by_index("node", name) if pending else ():  # no longer to go: cancelled
            meta = pod.get("metadata") or {}
            if meta.get("uid") in pending and not meta.get("deletionTimestamp"):
                self.events.event(pod, "Normal", "TaintManagerEviction",
                                  f"Cancelling deletion of Pod {meta.get('namespace')}/{meta.get('name')}")
        if waiting:
            self._pending[name] = waiting
        return next_due + 0.05 if next_due is not None else None

    async def _delete(self, pod: dict[str, Any]) -> None:
        """Upstream's addConditionAndDeletePod: the DisruptionTarget condition, then the deletion."""
        meta = pod["metadata"]
        self.events.event(pod, "Normal", "TaintManagerEviction",
                          f"Marking for deletion Pod {meta['namespace']}/{meta['name']}")
        condition = {"type": "DisruptionTarget", "status": "True", "lastTransitionTime": now_rfc3339(),
                     "reason": "DeletionByTaintManager", "message": "Taint manager: deleting due to NoExecute taint"}
        with contextlib.suppress(NotFound, Conflict):  # gone, or another Pod of the same name by now
            await self.client.patch(PODS, meta["name"], {"status": {"conditions": [condition]}}, meta["namespace"],
                                    patch_type="application/strategic-merge-patch+json", subresource="status")
            await self.client.delete(PODS, meta["name"], meta["namespace"],
                                     body={"preconditions": {"uid": meta.get("uid")}} if meta.get("uid") else None)
