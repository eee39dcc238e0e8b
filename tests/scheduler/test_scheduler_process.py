"""`mini-kube scheduler --kubeconfig F` as its own process, with leader election on kube-system/kube-scheduler:
of two schedulers only the lease holder places Pods, and the other takes over when it stops."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from mini_kube.client import NotFound
from mini_kube.machinery.refs import LEASES

from tests.helpers import kubectl
from tests.scheduler.support import add_node, events_for, eventually, placement, unschedulable_message


@pytest.fixture
def kube():
    from mini_kube.testing import MiniKube

    with MiniKube(controllers="namespace", scheduler=False) as cluster:
        add_node(cluster, "solo")
        yield cluster


def _start(kube) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "mini_kube.cli", "scheduler", "--kubeconfig",
                             kube.kubeconfig, "--leader-elect", "--leader-elect-retry-period", "0.2",
                             "--leader-elect-lease-duration", "2", "--leader-elect-renew-deadline", "1"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _holder(kube) -> str:
    try:
        return kube.client.get(LEASES, "kube-scheduler", "kube-system")["spec"].get("holderIdentity") or ""
    except NotFound:
        return ""


def _pod(name: str) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                       "spec": {"containers": [{"name": "c", "image": "nginx"}]}})


@pytest.mark.slow
def test_scheduler_process_with_leader_election(kube):
    kubectl(kube, "apply", "-f", "-", input=_pod("before"))
    first = _start(kube)
    try:
        eventually(lambda: placement(kube, "default").get("before") == "solo", timeout=30)
        leader = eventually(lambda: _holder(kube))
        second = _start(kube)
        try:
            kubectl(kube, "apply", "-f", "-", input=_pod("during"))
            eventually(lambda: placement(kube, "default").get("during") == "solo")
            assert _holder(kube) == leader
            first.terminate()
            first.wait(10)
            eventually(lambda: _holder(kube) not in ("", leader), timeout=30)
            kubectl(kube, "apply", "-f", "-", input=_pod("after"))
            eventually(lambda: placement(kube, "default").get("after") == "solo", timeout=30)
        finally:
            second.terminate()
            second.wait(10)
    finally:
        if first.poll() is None:
            first.kill()
            first.wait(10)


def test_scheduler_process_as_system_kube_scheduler_under_rbac(tmp_path):
    """With TLS and RBAC, the upstream `system:kube-scheduler` role is all the scheduler needs: binding,
    status, events and its lease."""
    from mini_kube.apiserver.auth.pki import issue_client_cert, kubeconfig_yaml

    from mini_kube.testing import MiniKube

    with MiniKube(insecure_http=False, data_dir=str(tmp_path / "data"), controllers="namespace",
                  scheduler=False) as kube:
        add_node(kube, "solo")
        pki = kube.server.security.pki
        cert, key = issue_client_cert(pki, "system:kube-scheduler")
        config = tmp_path / "scheduler.kubeconfig"
        config.write_text(kubeconfig_yaml(kube.url, pki, client_cert_pem=cert, client_key_pem=key))
        proc = subprocess.Popen([sys.executable, "-m", "mini_kube.cli", "scheduler", "--kubeconfig",
                                 str(config), "--leader-elect", "--leader-elect-retry-period", "0.2"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            kubectl(kube, "apply", "-f", "-", input=_pod("fits"))
            kubectl(kube, "apply", "-f", "-", input=json.dumps({
                "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "nowhere"},
                "spec": {"nodeSelector": {"disk": "none"}, "containers": [{"name": "c", "image": "nginx"}]}}))
            eventually(lambda: placement(kube, "default").get("fits") == "solo", timeout=30)
            message = eventually(lambda: unschedulable_message(kube, "default", "nowhere"))
            assert message.startswith("0/1 nodes are available: 1 node(s) didn't match Pod's node affinity")
            assert eventually(lambda: events_for(kube, "default", "fits", "Scheduled"))
            assert eventually(lambda: events_for(kube, "default", "nowhere", "FailedScheduling"))
            assert _holder(kube)
        finally:
            proc.terminate()
            proc.wait(10)
