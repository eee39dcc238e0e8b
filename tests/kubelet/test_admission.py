"""The kubelet's admission, through real kubectl: a Pod bound straight to a node (no scheduler) whose host port
is already held there, for the same protocol and an overlapping hostIP (equal, or 0.0.0.0), is rejected (Failed,
reason NodePorts, as upstream's kubelet); another protocol or another node is admitted and runs."""

from __future__ import annotations

import json
from pathlib import Path

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


def test_a_pod_asking_for_an_apparmor_profile_the_node_cannot_enforce_is_rejected(simulated_cluster):
    """AppArmor, as upstream's admit handler: any profile but Unconfined (the Pod's, a container's, or the
    deprecated annotation) is refused with the host's reason, where the profile cannot be enforced; here the
    kernel has no AppArmor (this machine's), or mini-kube's runtimes, which apply no profile, run on one."""
    kube = simulated_cluster
    ns = new_namespace(kube)
    node = kube.nodes.kubelets[0].name
    enabled = Path("/sys/module/apparmor/parameters/enabled")
    host = (Path("/sys/kernel/security/apparmor").exists() and enabled.exists()
            and enabled.read_text().startswith("Y"))
    why = "the node's runtime does not apply AppArmor profiles" if host else "AppArmor is not enabled on the host"
    app = {"name": "app", "image": "nginx"}
    confined = [pod("runtime-default", app, node=node, securityContext={"appArmorProfile": {"type": "RuntimeDefault"}}),
                pod("localhost", {**app, "securityContext": {"appArmorProfile": {
                    "type": "Localhost", "localhostProfile": "k8s-deny-write"}}}, node=node),
                {**pod("annotated", app, node=node), "metadata": {"name": "annotated", "annotations": {
                    "container.apparmor.security.beta.kubernetes.io/app": "runtime/default"}}}]
    unconfined = [pod("unconfined", {**app, "securityContext": {"appArmorProfile": {"type": "Unconfined"}}},
                      node=node, securityContext={"appArmorProfile": {"type": "Unconfined"}}),
                  {**pod("annotated-unconfined", app, node=node), "metadata": {
                      "name": "annotated-unconfined",
                      "annotations": {"container.apparmor.security.beta.kubernetes.io/app": "unconfined"}}}]
    for body in confined + unconfined:
        kubectl(kube, "-n", ns, "create", "-f", "-", input=json.dumps(body))
    for body in confined:
        name = body["metadata"]["name"]
        status = eventually(lambda n=name: (s := status_of(kube, ns, n)).get("phase") == "Failed" and s)
        assert status["reason"] == "AppArmor" and status["message"] == f"Pod was rejected: Cannot enforce AppArmor: {why}"
    for body in unconfined:
        eventually(lambda n=body["metadata"]["name"]: status_of(kube, ns, n).get("phase") == "Running")
    events = kubectl(kube, "-n", ns, "get", "events", "--field-selector", "involvedObject.name=localhost",
                     "-o", "jsonpath={.items[*].message}").stdout
    assert f"Cannot enforce AppArmor: {why}" in events
