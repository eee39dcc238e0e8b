"""`mini-kube serve` as users run it: HTTPS by default, a kubeconfig kubectl uses as is, state kept across restarts."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import kubectl_binary

pytestmark = pytest.mark.slow  # each test here takes more than a few seconds


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _serve(data_dir: Path, port: int) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-m", "mini_kube.cli", "serve", "--data-dir", str(data_dir),
                             "--port", str(port)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = proc.stdout.readline()
    assert "ready at https://" in line, line
    return proc


def _stop(proc: subprocess.Popen[str]) -> None:
    proc.send_signal(signal.SIGTERM)
    proc.wait(15)


def _kubectl(kubeconfig: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([kubectl_binary(), "--kubeconfig", str(kubeconfig), *args], capture_output=True,
                          text=True, timeout=60)


def test_restart_keeps_objects_allocations_and_credentials(tmp_path):
    data, port = tmp_path / "state", _free_port()
    kubeconfig = data / "kubeconfig"
    proc = _serve(data, port)
    try:
        assert _kubectl(kubeconfig, "create", "configmap", "kept", "--from-literal=a=b").returncode == 0
        created = _kubectl(kubeconfig, "create", "service", "clusterip", "kept-svc", "--tcp=80:80")
        assert created.returncode == 0, created.stderr
        svc = json.loads(_kubectl(kubeconfig, "get", "svc", "kept-svc", "-o", "json").stdout)
    finally:
        _stop(proc)
    proc = _serve(data, port)
    try:
        cm = json.loads(_kubectl(kubeconfig, "get", "cm", "kept", "-o", "json").stdout)
        assert cm["data"] == {"a": "b"}
        again = json.loads(_kubectl(kubeconfig, "get", "svc", "kept-svc", "-o", "json").stdout)
        assert again["spec"]["clusterIP"] == svc["spec"]["clusterIP"]
        other = subprocess.run([kubectl_binary(), "--kubeconfig", str(kubeconfig), "create", "-f", "-"],
                               input=json.dumps({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "other"},
                                                 "spec": {"clusterIP": svc["spec"]["clusterIP"],
                                                          "ports": [{"port": 80}]}}),
                               capture_output=True, text=True, timeout=60)
        assert other.returncode == 1 and "provided IP is already allocated" in other.stderr
        bad_ca = subprocess.run(["curl", "-sS", f"https://127.0.0.1:{port}/version"], capture_output=True,
                                text=True, timeout=30)
        assert bad_ca.returncode != 0  # the serving certificate is not trusted without our CA
    finally:
        _stop(proc)
