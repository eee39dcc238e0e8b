"""Node lifecycle: a node whose Lease stops being renewed becomes Ready=Unknown with the unreachable taints,
and its Pods are evicted once their toleration runs out; a node that comes back loses the taints. Any NoExecute
taint (`kubectl taint`) evicts the Pods that do not tolerate it at once, the others when their tolerationSeconds
run out, unless it is removed in time."""

from __future__ import annotations

import datetime as dt
import time

import pytest
from mini_kube.client import ApiClient, Connection
from mini_kube.controllers.kube_controller_manager import KubeControllerManager
from mini_kube.machinery.refs import LEASES, NODES, PODS

from mini_kube.testing import MiniKube
from tests.helpers import kubectl


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


def _tolerating(kube, name: str, node: str, seconds: int | None) -> None:
    """A Pod on `node` tolerating the `dedicated=db:NoExecute` taint (for `seconds`, None: for ever)."""
    toleration = {"key": "dedicated", "operator": "Equal", "value": "db", "effect": "NoExecute",
                  **({"tolerationSeconds": seconds} if seconds is not None else {})}
    kube.client.create(PODS, {"metadata": {"name": name}, "spec": {"nodeName": node, "tolerations": [toleration],
                                                                   "containers": [{"name": "c", "image": "i"}]}},
                       "default")


@pytest.mark.slow
def test_any_noexecute_taint_evicts_the_pods_that_do_not_tolerate_it_long_enough():
    with MiniKube(controllers=False) as kube:
        kube.client.create(NODES, {"metadata": {"name": "n1"}})
        kube.client.patch(NODES, "n1", {"status": {"conditions": [
            {"type": "Ready", "status": "True", "reason": "KubeletReady",
             "lastHeartbeatTime": _stamp(dt.datetime.now(dt.UTC))}]}}, subresource="status")
        _renew(kube, "n1")
        _pod(kube, "intolerant", "n1", tolerate=None)
        _tolerating(kube, "brief", "n1", 1)
        _tolerating(kube, "longer", "n1", 6)
        _tolerating(kube, "forever", "n1", None)
        manager = KubeControllerManager(ApiClient(Connection.from_kubeconfig(kube.kubeconfig)), names="nodelifecycle",
                                        options={"nodelifecycle": {"grace_period": 60.0}})
        kube.run(manager.start())
        try:
            time.sleep(0.5)
            assert not any(_gone(kube, name) for name in ("intolerant", "brief", "longer", "forever"))
            kubectl(kube, "taint", "nodes", "n1", "dedicated=db:NoExecute")
            tainted = time.monotonic()
            _wait(lambda: _gone(kube, "intolerant"), 3)
            _wait(lambda: _gone(kube, "brief"), 5)
            condition = next(c for c in kube.client.get(PODS, "brief", "default")["status"]["conditions"]
                             if c["type"] == "DisruptionTarget")
            assert (condition["status"], condition["reason"], condition["message"]) == (
                "True", "DeletionByTaintManager", "Taint manager: deleting due to NoExecute taint")
            kubectl(kube, "taint", "nodes", "n1", "dedicated=db:NoExecute-")  # in time for "longer"
            _wait(lambda: "Cancelling deletion of Pod default/longer" in kubectl(kube, "describe", "pod",
                                                                                  "longer").stdout)
            time.sleep(max(0.0, tainted + 6.5 - time.monotonic()))
            assert not _gone(kube, "longer") and not _gone(kube, "forever")
        finally:
            kube.run(manager.stop())
