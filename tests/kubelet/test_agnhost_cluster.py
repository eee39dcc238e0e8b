"""agnhost subcommands that use the cluster (issue #27): the API server through the Pod's in-cluster
configuration (TLS, its ServiceAccount's token), other Pods and Services by name; through real kubectl."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.helpers import kubectl

from .conftest import eventually, new_namespace, process_cluster_or_skip, status_of

AGNHOST = "registry.k8s.io/e2e-test-images/agnhost:2.53"


@pytest.fixture(scope="module")
def kube() -> Iterator:
    process_cluster_or_skip()
    from mini_kube.testing import MiniKube

    with MiniKube(insecure_http=False, nodes=1, node_runtime="process", dns=True) as cluster:
        yield cluster


def proxied(kube, ns: str, pod: str, path: str) -> str:
    """GET `path` of the Pod's port 8080 through the API server's pods/proxy ("" while it fails)."""
    done = kubectl(kube, "get", "--raw", f"/api/v1/namespaces/{ns}/pods/{pod}:8080/proxy{path}", check=False)
    return done.stdout if done.returncode == 0 else ""


def test_agnhost_nettest_records_writes_and_contacts_its_services_endpoints(kube) -> None:
    """nettest finds its Service's endpoints through the API server (in-cluster config, the Pod's token), writes
    to each (itself here) and passes; another Pod's POST to /write is counted under its Source."""
    ns = new_namespace(kube)
    kubectl(kube, "-n", ns, "create", "rolebinding", "read", "--clusterrole=view", f"--serviceaccount={ns}:default")
    kubectl(kube, "-n", ns, "run", f"--image={AGNHOST}", "--port=8080", "--labels=app=nettest", "server", "--",
            "nettest", "--peers=1", "--service=peers", f"--namespace={ns}")
    kubectl(kube, "-n", ns, "expose", "pod", "server", "--name=peers", "--port=8080")
    ip = eventually(lambda: status_of(kube, ns, "server").get("podIP"), timeout=30)
    kubectl(kube, "-n", ns, "run", "--image=busybox", "--restart=Never", "writer", "--", "wget", "-q", "-O-",
            '--post-data={"Source": "prestop"}', f"http://{ip}:8080/write")
    eventually(lambda: status_of(kube, ns, "writer").get("phase") == "Succeeded", timeout=30)
    assert kubectl(kube, "-n", ns, "logs", "writer").stdout == '{"Hostname":"server"}\n'
    assert eventually(lambda: proxied(kube, ns, "server", "/status") == "pass", timeout=30, explain=lambda: proxied(
        kube, ns, "server", "/read") + kubectl(kube, "-n", ns, "logs", "server").stdout)
    state = json.loads(proxied(kube, ns, "server", "/read"))
    assert state["Hostname"] == "server" and state["Received"] == {"prestop": 1, "server": 1} | {
        "server": state["Received"]["server"]}, state
    assert state["Sent"]["server"] >= 1 and state["Errors"] is None and state["StillContactingPeers"] is True
    assert proxied(kube, ns, "server", "/read").startswith('{\n\t"Hostname": "server",\n\t"Sent": {\n')
