"""One kubelet per Node name: `serve` restarted with fewer `--nodes` removes the nodes it no longer runs (they
stayed Ready for a Lease's time and got Pods that never ran), and a second kubelet for the name of a live node
is refused in one line instead of taking the Node over."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys

import pytest

from tests.helpers import kubectl_binary

pytestmark = pytest.mark.slow  # each test here takes more than a few seconds


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _serve(data, port: int, nodes: int) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-m", "mini_kube.cli", "serve", "--data-dir", str(data), "--port",
                             str(port), "--nodes", str(nodes), "--node-runtime", "simulated", "--no-ccm", "--no-dns"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert "ready at" in proc.stdout.readline()
    return proc


def _stop(proc: subprocess.Popen[str]) -> None:
    proc.send_signal(signal.SIGTERM)
    proc.wait(30)


def _nodes(kubeconfig: str) -> list[str]:
    return subprocess.run([kubectl_binary(), "--kubeconfig", kubeconfig, "get", "nodes", "-o",
                           "jsonpath={.items[*].metadata.name}"], capture_output=True, text=True, timeout=60,
                          check=True).stdout.split()


def test_serve_removes_the_nodes_it_no_longer_runs_and_a_live_name_is_refused(tmp_path):
    data, port = tmp_path / "data", _port()
    kubeconfig = str(data / "kubeconfig")
    first = _serve(data, port, 2)
    try:
        assert _nodes(kubeconfig) == ["mini-kube-1", "mini-kube-2"]
    finally:
        _stop(first)
    second = _serve(data, port, 1)
    try:
        assert _nodes(kubeconfig) == ["mini-kube"]
        twin = subprocess.run([sys.executable, "-m", "mini_kube.cli", "node", "--name", "mini-kube", "--kubeconfig",
                               kubeconfig, "--node-runtime", "simulated", "--no-proxy"], capture_output=True,
                              text=True, timeout=60)
        assert twin.returncode == 1 and len(twin.stderr.splitlines()) == 1, twin.stderr
        assert twin.stderr.startswith("mini-kube: node mini-kube is already run by a live kubelet at 127."), twin.stderr
        assert _nodes(kubeconfig) == ["mini-kube"]
    finally:
        _stop(second)
