"""The kubelet's admission, through real kubectl: a Pod bound straight to a node (no scheduler) whose host port
is already held there, for the same protocol and an overlapping hostIP (equal, or 0.0.0.0), is rejected (Failed,
reason NodePorts, as upstream's kubelet); another protocol or another node is admitted and runs."""

from __future__ import annotations

import json

from tests.helpers import kubectl

from .conftest import eventually, new_namespace, pod, status_of


def _port(**extra) -> dict:
    return {"name": "web", "image": "nginx", "ports": [{"containerPort": 80, "hostPort": 18080, **extra}]}


def test_a_pod_whose_host_port_is_taken_on_its_node_is_rejected(simulated_cluster):
    kube = simulated_cluster
    ns = new_namespace(kube)
    first, second = (k.name for k in kube.nodes.kubelets[:2])
    node_ip = kube.nodes.kubelets[0].address
    pods = [pod("holder", _port(), node=first), pod("same", _port(), node=first),
            pod("by-ip", _port(hostIP=node_ip), node=first), pod("udp", _port(protocol="UDP"), node=first),
            pod("elsewhere", _port(), node=second)]
    kubectl(kube, "-n", ns, "create", "-f", "-", input=json.dumps(pods[0]))
    eventually(lambda: status_of(kube, ns, "holder").get("phase") == "Running")
    for body in pods[1:]:
        kubectl(kube, "-n", ns, "create", "-f", "-", input=json.dumps(body))
    for name in ("same", "by-ip"):
        status = eventually(lambda n=name: (s := status_of(kube, ns, n)).get("phase") == "Failed" and s)
        assert status["reason"] == "NodePorts" and status["message"] == (
            "Pod was rejected: Predicate NodePorts failed: node(s) didn't have free ports for the requested pod "
            "ports")
    for name in ("udp", "elsewhere"):
        eventually(lambda n=name: status_of(kube, ns, n).get("phase") == "Running")
    assert status_of(kube, ns, "holder").get("phase") == "Running"
    events = kubectl(kube, "-n", ns, "get", "events", "--field-selector", "involvedObject.name=same",
                     "-o", "jsonpath={.items[*].reason}").stdout.split()
    assert "NodePorts" in events
