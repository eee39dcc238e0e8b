"""A Pod whose sandbox cannot be made (here: its node has no free Pod IP) is not left Pending with nothing to say
why: the kubelet reports FailedCreatePodSandBox and tries again with back-off, so the Pod runs once an address
is free."""

from __future__ import annotations

from mini_kube.kubelet.ipam import Ipam
from mini_kube.machinery.refs import EVENTS, PODS

from .conftest import eventually, new_namespace, pod, status_of


def reasons(kube, ns: str, name: str) -> list[str]:
    return [e["reason"] for e in kube.client.list(EVENTS, ns)["items"] if e["involvedObject"]["name"] == name]


def test_a_pod_without_a_sandbox_says_why_and_runs_once_there_is_room(simulated_cluster):
    kube = simulated_cluster
    kubelet = kube.nodes.kubelets[0]
    ns = new_namespace(kube)
    container = {"name": "main", "image": "busybox"}
    own = kubelet.env.ipam
    kubelet.env.ipam = Ipam("10.244.250.0/30")  # one address for Pods (the first is the node's)
    try:
        kube.client.create(PODS, pod("first", container, node=kubelet.name), ns)
        eventually(lambda: status_of(kube, ns, "first").get("phase") == "Running")
        kube.client.create(PODS, pod("second", container, node=kubelet.name), ns)
        eventually(lambda: "FailedCreatePodSandBox" in reasons(kube, ns, "second"))
        assert status_of(kube, ns, "second").get("phase") == "Pending"
        kube.client.delete(PODS, "first", ns)
        eventually(lambda: status_of(kube, ns, "second").get("phase") == "Running")
        assert status_of(kube, ns, "second")["podIP"] == "10.244.250.2"
    finally:
        kubelet.env.ipam = own
