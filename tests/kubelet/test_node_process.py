"""A node as its own process (issue #13): `mini-kube node --name N --kubeconfig F` joins a server started with
`--nodes 0`, registers, and runs a Pod as a process; stopping it stops its Pods' processes."""

from __future__ import annotations

import json
import signal
import subprocess
import sys

import pytest

from .conftest import eventually, process_cluster_or_skip

pytestmark = pytest.mark.slow  # each test here takes more than a few seconds


def _start(*args: str) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-m", "mini_kube.cli", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    line = proc.stdout.readline()
    assert "ready" in line, line
    return proc


def test_a_node_process_joins_a_server(tmp_path):
    process_cluster_or_skip()
    data = tmp_path / "data"
    server = _start("serve", "--data-dir", str(data), "--port", "0", "--nodes", "0", "--no-ccm", "--no-dns")
    kubeconfig = str(data / "kubeconfig")

    def kubectl(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["kubectl", "--kubeconfig", kubeconfig, *args], capture_output=True, text=True,
                              timeout=60)

    try:
        node = _start("node", "--name", "worker-1", "--kubeconfig", kubeconfig, "--node-runtime", "process")
        try:
            assert kubectl("get", "node", "worker-1", "-o", "jsonpath={.status.nodeInfo.containerRuntimeVersion}"
                           ).stdout == "process://0.1.0"
            kubectl("run", "w", "--image=nginx", "--", "sh", "-c", "echo from worker; sleep 300")
            assert kubectl("wait", "--for=condition=Ready", "pod/w", "--timeout=30s").returncode == 0
            pod = json.loads(kubectl("get", "pod", "w", "-o", "json").stdout)
            assert pod["spec"]["nodeName"] == "worker-1" and pod["status"]["podIP"].startswith("10.244.1.")
            eventually(lambda: kubectl("logs", "w").stdout == "from worker\n")
            assert kubectl("exec", "w", "--", "hostname").stdout == "w\n"
        finally:
            node.send_signal(signal.SIGTERM)
            node.wait(20)
        assert not subprocess.run(["pgrep", "-f", "echo from worker"], capture_output=True).stdout
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(20)
