"""A WebSocket exec that cannot reach its container says why (issue #25 item 9). kubectl 1.30+ tries WebSocket
first and falls back to SPDY when the upgrade is refused; mini-kube speaks no SPDY, so a refused upgrade showed
only `unsupported upgrade 'SPDY/3.1' ...`. As upstream's stream translator does, the API server now accepts the
WebSocket and sends the cause as a Status on the error channel, and so does the kubelet."""

from __future__ import annotations

import socket

from mini_kube.machinery.refs import NODES, PODS

from tests.helpers import kubectl, new_namespace

from .conftest import eventually


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_an_unreachable_kubelet_is_the_error_kubectl_shows(simulated_cluster):
    kube = simulated_cluster
    ns = new_namespace(kube)
    kube.client.create(NODES, {"metadata": {"name": "ghost-exec"}})
    kube.client.patch(NODES, "ghost-exec", {"status": {
        "addresses": [{"type": "InternalIP", "address": "127.0.0.1"}],
        "daemonEndpoints": {"kubeletEndpoint": {"Port": _free_port()}}}}, subresource="status")
    try:
        kube.client.create(PODS, {"metadata": {"name": "p"}, "spec": {
            "nodeName": "ghost-exec", "containers": [{"name": "c", "image": "busybox"}]}}, ns)
        done = kubectl(kube, "-n", ns, "exec", "p", "--", "true", check=False)
        assert done.returncode == 1
        assert "error dialing backend" in done.stderr and "SPDY" not in done.stderr, done.stderr
    finally:
        kube.client.delete(NODES, "ghost-exec")


def test_a_container_not_started_is_the_error_kubectl_shows(simulated_cluster):
    kube = simulated_cluster
    ns = new_namespace(kube)
    kube.client.create(PODS, {"metadata": {"name": "p"}, "spec": {
        "nodeName": "mini-kube-1", "containers": [{"name": "c", "image": "busybox", "env": [
            {"name": "X", "valueFrom": {"configMapKeyRef": {"name": "missing", "key": "x"}}}]}]}}, ns)
    eventually(lambda: any((s.get("state") or {}).get("waiting", {}).get("reason") == "CreateContainerConfigError"
                           for s in (kube.client.get(PODS, "p", ns).get("status") or {}).get("containerStatuses")
                           or ()))
    done = kubectl(kube, "-n", ns, "exec", "p", "--", "true", check=False)
    assert done.returncode == 1
    assert 'unable to upgrade connection: container not found ("c")' in done.stderr, done.stderr
    assert "SPDY" not in done.stderr, done.stderr
