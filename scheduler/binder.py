"""What the scheduler writes: bindings (`pods/binding`), the PodScheduled=False condition of a Pod that does not
fit (with `nominatedNodeName` after a preemption), and the eviction of preemption victims."""

from __future__ import annotations

import contextlib
from typing import Any

from mini_kube.client import ApiClient, Conflict, NotFound
from mini_kube.machinery.meta import meta as object_meta
from mini_kube.machinery.refs import PODS
from mini_kube.machinery.times import now_rfc3339

SCHEDULER_NAME = "default-scheduler"


async def bind(client: ApiClient, pod: dict[str, Any], node: str) -> None:
    """POST a Binding of `pod` to `node` (raises ApiError as the server answers)."""
    meta = object_meta(pod)
    body = {"apiVersion": "v1", "kind": "Binding",
            "metadata": {"name": meta["name"], "namespace": meta["namespace"], "uid": meta.get("uid")},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node}}
    await client.request("POST", PODS.path(meta["namespace"], meta["name"], "binding"), body=body)


def condition_changed(pod: dict[str, Any], reason: str, message: str) -> bool:
    current = next((c for c in (pod.get("status") or {}).get("conditions") or ()
                    if c.get("type") == "PodScheduled"), None)
    return current is None or (current.get("status"), current.get("reason"), current.get("message")) != (
        "False", reason, message)


async def mark_unschedulable(client: ApiClient, pod: dict[str, Any], reason: str, message: str,
                             nominated: str | None = None) -> None:
    """PodScheduled=False with `reason`/`message` (a strategic merge patch of the status, as upstream's
    updatePod), unless it already says so; `nominated` sets (or, "", clears) `nominatedNodeName`. The patch is conditional on the resourceVersion seen, so it never
    lands on a Pod that was bound meanwhile."""
    meta = object_meta(pod)
    for _ in range(3):
        if (pod.get("spec") or {}).get("nodeName") or (not condition_changed(pod, reason, message) and
                                                       nominated is None):
            return
        current: dict[str, Any] = next((c for c in (pod.get("status") or {}).get("conditions") or ()
                        if c.get("type") == "PodScheduled"), {})
        since = current.get("lastTransitionTime") if current.get("status") == "False" else None
        status: dict[str, Any] = {"conditions": [{
            "type": "PodScheduled", "status": "False", "lastProbeTime": None,
            "lastTransitionTime": since or now_rfc3339(), "reason": reason, "message": message}]}
        if nominated is not None:
            status["nominatedNodeName"] = nominated or None  # "" clears it
        patch = {"metadata": {"resourceVersion": object_meta(pod).get("resourceVersion")}, "status": status}
        try:
            await client.patch(PODS, meta["name"], patch, meta["namespace"],
                               patch_type="application/strategic-merge-patch+json", subresource="status")
            return
        except NotFound:
            return
        except Conflict:
            try:
                pod = await client.get(PODS, meta["name"], meta["namespace"])
            except NotFound:
                return


async def evict_victim(client: ApiClient, victim_namespace: str, victim_name: str) -> None:
    """Delete a preemption victim (with a DisruptionTarget condition first, as upstream does)."""
    status = {"conditions": [{"type": "DisruptionTarget", "status": "True", "lastProbeTime": None,
                              "lastTransitionTime": now_rfc3339(), "reason": "PreemptionByScheduler",
                              "message": f"{SCHEDULER_NAME}: preempting to accommodate a higher priority pod"}]}
    with contextlib.suppress(NotFound):
        await client.patch(PODS, victim_name, {"status": status}, victim_namespace,
                           patch_type="application/strategic-merge-patch+json", subresource="status")
        await client.delete(PODS, victim_name, victim_namespace)
