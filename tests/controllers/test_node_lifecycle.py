"""Node lifecycle: a node whose Lease stops being renewed becomes Ready=Unknown with the unreachable taints,
and its Pods are evicted once their toleration runs out; a node that comes back loses the taints."""

from __future__ import annotations

import datetime as dt
import time

from mini_kube.client import ApiClient, Connection
from mini_kube.controllers.kube_controller_manager import KubeControllerManager
from mini_kube.machinery.refs import LEASES, NODES, PODS

from mini_kube.testing import MiniKube


def _stamp(t: dt.datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _renew(kube, name: str) -> None:
    now = _stamp(dt.datetime.now(dt.UTC))
    try:
        lease = kube.client.get(LEASES, name, "kube-node-lease")
        lease["spec"]["renewTime"] = now
        kube.client.replace(LEASES, lease, "kube-node-lease")
    except Exception:
        kube.client.create(LEASES, {"metadata": {"name": name}, "spec": {
            "holderIdentity": name, "leaseDurationSeconds": 40, "renewTime": now}}, "kube-node-lease")


def _pod(kube, name: str, node: str, tolerate: float | None) -> None:
    tolerations = [] if tolerate is None else [{"key": "node.kubernetes.io/unreachable", "operator": "Exists",
                                                "effect": "NoExecute", "tolerationSeconds": tolerate}]
    kube.client.create(PODS, {"metadata": {"name": name}, "spec": {"nodeName": node, "tolerations": tolerations,
                                                                   "containers": [{"name": "c", "image": "i"}]}},
                       "default")


def _wait(predicate, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def _gone(kube, name: str) -> bool:
    """Evicted: deleted, so terminating until the node's kubelet (none here) makes the final delete."""
    return all(p["metadata"].get("deletionTimestamp") for p in kube.client.list(PODS, "default")["items"]
               if p["metadata"]["name"] == name)


def test_a_silent_node_is_tainted_and_its_pods_evicted():
    with MiniKube(controllers=False) as kube:
        kube.client.create(NODES, {"metadata": {"name": "n1"}, "status": {"conditions": [
            {"type": "Ready", "status": "True", "lastHeartbeatTime": _stamp(dt.datetime.now(dt.UTC))}]}})
        kube.client.patch(NODES, "n1", {"status": {"conditions": [
            {"type": "Ready", "status": "True", "reason": "KubeletReady",
             "lastHeartbeatTime": _stamp(dt.datetime.now(dt.UTC))}]}}, subresource="status")
        _renew(kube, "n1")
        _pod(kube, "quick", "n1", tolerate=1)  # (admission gives every Pod 300 s unless it says otherwise)
        _pod(kube, "patient", "n1", tolerate=3)
        manager = KubeControllerManager(ApiClient(Connection.from_kubeconfig(kube.kubeconfig)), names="nodelifecycle",
                          options={"nodelifecycle": {"grace_period": 1.0, "default_toleration": 1.0}})
        kube.run(manager.start())
        try:
            time.sleep(0.5)
            assert not (kube.client.get(NODES, "n1")["spec"].get("taints"))  # still renewing in time
            _wait(lambda: any(t["effect"] == "NoExecute" for t in kube.client.get(NODES, "n1")["spec"].get(
                "taints") or ()))
            ready = next(c for c in kube.client.get(NODES, "n1")["status"]["conditions"] if c["type"] == "Ready")
            assert (ready["status"], ready["reason"]) == ("Unknown", "NodeStatusUnknown")
            _wait(lambda: _gone(kube, "quick"))
            assert not _gone(kube, "patient")
            _wait(lambda: _gone(kube, "patient"), 10)
            _renew(kube, "n1")
            kube.client.patch(NODES, "n1", {"status": {"conditions": [
                {"type": "Ready", "status": "True", "reason": "KubeletReady",
                 "lastHeartbeatTime": _stamp(dt.datetime.now(dt.UTC))}]}}, subresource="status")
            _wait(lambda: not kube.client.get(NODES, "n1")["spec"].get("taints"))
        finally:
            kube.run(manager.stop())
