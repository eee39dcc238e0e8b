"""The pod garbage collector: terminated Pods over the threshold (evicted, then oldest first), Pods bound to a
node that is gone (after the quarantine: marked Failed with DisruptionTarget=DeletionByPodGC, then deleted),
terminating Pods on out-of-service nodes and terminating Pods never scheduled."""

from __future__ import annotations

import time

import pytest
from mini_kube.client import ApiClient, ApiError, Connection
from mini_kube.controllers.kube_controller_manager import KubeControllerManager
from mini_kube.machinery.refs import NAMESPACES, NODES, PODS

from mini_kube.testing import MiniKube

FINALIZER = "example.com/hold"


@pytest.fixture(scope="module")
def kube():
    with MiniKube(controllers=False) as kube:
        manager = KubeControllerManager(ApiClient(Connection.from_kubeconfig(kube.kubeconfig)), names="podgc", options={
            "podgc": {"terminated_pod_gc_threshold": 2, "gc_check_period": 0.2, "quarantine_time": 0.5}})
        kube.run(manager.start())
        yield kube
        kube.run(manager.stop())


def wait(predicate, timeout: float = 10.0):
    deadline = time.monotonic() + timeout
    while not (result := predicate()):
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)
    return result


def pod(kube, ns: str, name: str, *, node: str = "", phase: str = "", reason: str = "",
        finalizer: bool = False) -> None:
    meta: dict = {"name": name}
    if finalizer:
        meta["finalizers"] = [FINALIZER]
    spec: dict = {"containers": [{"name": "c", "image": "i"}]}
    if node:
        spec["nodeName"] = node
    kube.client.create(PODS, {"metadata": meta, "spec": spec}, ns)
    if phase:
        status = {"phase": phase, **({"reason": reason} if reason else {})}
        kube.client.patch(PODS, name, {"status": status}, ns, subresource="status")


def names(kube, ns: str) -> set[str]:
    return {p["metadata"]["name"] for p in kube.client.list(PODS, ns)["items"]}


def release(kube, ns: str, name: str) -> None:
    kube.client.patch(PODS, name, {"metadata": {"finalizers": None}}, ns)


def namespace(kube, name: str) -> str:
    kube.client.create(NAMESPACES, {"metadata": {"name": name}})
    return name


def test_terminated_pods_over_the_threshold(kube):
    ns = namespace(kube, "terminated")
    pod(kube, ns, "a-old", phase="Succeeded")
    pod(kube, ns, "b-evicted", phase="Failed", reason="Evicted")
    pod(kube, ns, "c-failed", phase="Failed")
    pod(kube, ns, "d-done", phase="Succeeded")
    pod(kube, ns, "e-running", phase="Running")
    # four terminated, threshold two: the evicted one goes first, then the oldest (name breaks the tie)
    wait(lambda: names(kube, ns) == {"c-failed", "d-done", "e-running"})
    time.sleep(0.5)
    assert names(kube, ns) == {"c-failed", "d-done", "e-running"}


def test_pods_on_a_deleted_node(kube):
    ns = namespace(kube, "orphans")
    kube.client.create(NODES, {"metadata": {"name": "here"}})
    pod(kube, ns, "kept", node="here", phase="Running")
    pod(kube, ns, "orphan", node="gone-node", phase="Running", finalizer=True)
    pod(kube, ns, "quiet", node="gone-node")

    def marked():
        obj = kube.client.get(PODS, "orphan", ns)
        return obj if obj["metadata"].get("deletionTimestamp") else None
    orphan = wait(marked)
    assert orphan["status"]["phase"] == "Failed"
    cond = next(c for c in orphan["status"]["conditions"] if c["type"] == "DisruptionTarget")
    assert (cond["status"], cond["reason"], cond["message"]) == ("True", "DeletionByPodGC",
                                                                 "PodGC: node no longer exists")
    assert any(m["manager"] == "PodGC" and m.get("subresource") == "status"
               for m in orphan["metadata"]["managedFields"])
    wait(lambda: "quiet" not in names(kube, ns))
    release(kube, ns, "orphan")
    wait(lambda: names(kube, ns) == {"kept"})


def test_terminating_pods_on_out_of_service_nodes_and_unscheduled(kube):
    ns = namespace(kube, "terminating")
    kube.client.create(NODES, {"metadata": {"name": "broken"}, "spec": {"taints": [
        {"key": "node.kubernetes.io/out-of-service", "value": "nodeshutdown", "effect": "NoExecute"}]}})
    kube.client.create(NODES, {"metadata": {"name": "fine"}})
    pod(kube, ns, "stuck", node="broken", phase="Running", finalizer=True)
    pod(kube, ns, "elsewhere", node="fine", phase="Running", finalizer=True)
    pod(kube, ns, "unscheduled", finalizer=True)
    for name in ("stuck", "elsewhere", "unscheduled"):
        kube.client.delete(PODS, name, ns)
    # the finalizer keeps them; force deletion shows as the Failed phase PodGC sets first
    wait(lambda: kube.client.get(PODS, "stuck", ns)["status"]["phase"] == "Failed")
    wait(lambda: kube.client.get(PODS, "unscheduled", ns)["status"]["phase"] == "Failed")
    time.sleep(0.5)
    assert kube.client.get(PODS, "elsewhere", ns)["status"]["phase"] == "Running"
    for name in ("stuck", "elsewhere", "unscheduled"):
        release(kube, ns, name)
    wait(lambda: names(kube, ns) == {"elsewhere"})
    # a Pod on a working node keeps its grace period: its kubelet makes the final delete
    assert kube.client.get(PODS, "elsewhere", ns)["metadata"]["deletionGracePeriodSeconds"] == 30
    kube.client.delete(PODS, "elsewhere", ns, body={"gracePeriodSeconds": 0})
    wait(lambda: not names(kube, ns))
    with pytest.raises(ApiError):
        kube.client.get(PODS, "stuck", ns)
