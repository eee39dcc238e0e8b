"""kubectl-lite against `mini-kube serve` over HTTPS with the client certificate from its kubeconfig, and with a
bearer token; its start-up imports stay small (no aiohttp)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import yaml


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def served(tmp_path: Path):
    data = tmp_path / "state"
    proc = subprocess.Popen([sys.executable, "-m", "mini_kube.cli", "serve", "--data-dir", str(data), "--port",
                             str(_free_port()), "--no-controllers"], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    line = proc.stdout.readline()
    assert "ready at https://" in line, line
    yield data / "kubeconfig"
    proc.send_signal(signal.SIGTERM)
    proc.wait(15)


def _lite(kubeconfig: Path, *args: str, cache: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mini_kube.kubectl_lite.cli", "--kubeconfig", str(kubeconfig), *args],
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "KUBECTL_LITE_CACHE_DIR": str(cache), "HOME": str(cache)})


@pytest.mark.slow
def test_https_with_client_certificates_and_tokens(served: Path, tmp_path: Path):
    cache = tmp_path / "cache"
    created = subprocess.run(
        [sys.executable, "-m", "mini_kube.kubectl_lite.cli", "--kubeconfig", str(served), "apply", "-f", "-"],
        input='{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"robot"}}', capture_output=True,
        text=True, env={**os.environ, "KUBECTL_LITE_CACHE_DIR": str(cache), "HOME": str(cache)})
    assert created.stdout == "serviceaccount/robot serverside-applied\n", created.stderr
    listed = _lite(served, "get", "sa", "robot", cache=cache)
    assert listed.stdout.split("\n")[1].split()[0] == "robot"
    token = subprocess.run(["kubectl", "--kubeconfig", str(served), "create", "token", "robot"],
                           capture_output=True, text=True).stdout.strip()
    if not token:
        pytest.skip("kubectl is not installed")
    config = yaml.safe_load(served.read_text())
    config["users"][0]["user"] = {"token": token}
    robot = tmp_path / "robot.kubeconfig"
    robot.write_text(yaml.safe_dump(config))
    denied = _lite(robot, "get", "secrets", cache=cache)
    assert denied.returncode == 1
    assert denied.stderr.startswith("Error from server (Forbidden): secrets is forbidden: User "
                                    "\"system:serviceaccount:default:robot\" cannot list resource")
    assert _lite(robot, "auth", "can-i", "list", "secrets", cache=cache).stdout == "no\n"


def test_get_does_not_import_the_async_stack():
    code = ("import sys, mini_kube.kubectl_lite.cli as c; c.build_parser('get'); print(sorted(m for m in "
            "('aiohttp', 'mini_kube.apiserver', 'mini_kube.client') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
