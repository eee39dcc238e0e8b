"""Node lifecycle: a node whose kubelet stops renewing its Lease (kube-node-lease) for the grace period becomes
Ready=Unknown ("Kubelet stopped posting node status.") and gets the `node.kubernetes.io/unreachable` NoSchedule
and NoExecute taints; its Pods are then evicted (deleted) once their toleration of that taint runs out (300 s
unless the Pod says otherwise, as the DefaultTolerationSeconds admission gives). A node that renews again and
reports Ready loses the taints.
"""

from __future__ import annotations

import contextlib
import datetime as dt
from typing import Any

from mini_kube.client import ApiClient, Conflict, NotFound
from mini_kube.client.informer import SharedInformerFactory
from mini_kube.machinery import times
from mini_kube.machinery.refs import LEASES, NODES, PODS
from mini_kube.machinery.times import format_time, parse_time

from ..reconciler import Controller, Result

UNREACHABLE = "node.kubernetes.io/unreachable"
CONDITIONS = ("Ready", "MemoryPressure", "DiskPressure", "PIDPressure")


def toleration_seconds(pod: dict[str, Any], default: float) -> float | None:
    """How long `pod` tolerates the unreachable NoExecute taint: None for ever, else seconds."""
    for toleration in (pod.get("spec") or {}).get("tolerations") or ():
        key_ok = toleration.get("key") in (UNREACHABLE, None, "") and (
            toleration.get("key") or toleration.get("operator") == "Exists")
        effect_ok = toleration.get("effect") in ("NoExecute", None, "")
        if key_ok and effect_ok:
            seconds = toleration.get("tolerationSeconds")
            return None if seconds is None else max(float(seconds), 0.0)
    return default


class NodeLifecycleController(Controller):
    name = "nodelifecycle"

    def __init__(self, client: ApiClient, informers: SharedInformerFactory | None = None, *,
                 grace_period: float = 40.0, default_toleration: float = 300.0, **kwargs: Any) -> None:
        super().__init__(client, informers, **kwargs)
        self.grace_period = grace_period
        self.default_toleration = default_toleration

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
            return None
        heartbeat = self._heartbeat(node)
        silent = (times.now() - heartbeat).total_seconds() if heartbeat else float("inf")
        taints = (node.get("spec") or {}).get("taints") or []
        tainted = next((t for t in taints if t.get("key") == UNREACHABLE and t.get("effect") == "NoExecute"), None)
        if silent > self.grace_period:
            if tainted is None:
                await self._mark_unreachable(node)
                return Result(requeue=True)
            return await self._evict(node, parse_time(tainted.get("timeAdded")) or times.now())
        if tainted is not None and self._reports_ready(node):
            await self._set_taints(node, [t for t in taints if t.get("key") != UNREACHABLE])
        return Result(requeue_after=max(self.grace_period - silent, 0.05) + 0.05)

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

    async def _evict(self, node: dict[str, Any], tainted_at: dt.datetime) -> Result | None:
        """Delete the node's Pods whose toleration has run out; come back when the next one runs out."""
        elapsed = (times.now() - tainted_at).total_seconds()
        next_due: float | None = None
        for pod in self.pods.by_index("node", node["metadata"]["name"]):
            if (pod.get("metadata") or {}).get("deletionTimestamp"):
                continue
            tolerated = toleration_seconds(pod, self.default_toleration)
            if tolerated is None:
                continue
            if elapsed >= tolerated:
                meta = pod["metadata"]
                self.events.event(pod, "Normal", "TaintManagerEviction", f"Marking for deletion Pod "
                                  f"{meta['namespace']}/{meta['name']}")
                with contextlib.suppress(NotFound):
                    await self.client.delete(PODS, meta["name"], meta["namespace"])
            else:
                due = tolerated - elapsed
                next_due = due if next_due is None else min(next_due, due)
        return Result(requeue_after=next_due + 0.05) if next_due is not None else None
