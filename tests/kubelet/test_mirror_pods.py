"""The components `mini-kube serve` runs in-process show in kube-system as a real cluster's control plane does
(issue #25 item 11: kr8s's and lightkube's suites list Pods there and found none): mirror Pods
`<component>-<node>` Running and Ready, owned by the Node, whose `kubectl logs` is that component's log; a
deleted one comes back, as upstream's kubelet makes a static Pod's mirror again; a restart without a component
removes its mirror Pod."""

from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
import sys
import time

import pytest

from tests.helpers import kubectl_binary

pytestmark = pytest.mark.slow  # each test here takes more than a few seconds


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _serve(data_dir, *flags: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-m", "mini_kube.cli", "serve", "--data-dir", str(data_dir), "--port",
                             str(_free_port()), "--node-runtime", "simulated", "--no-ccm", "--no-dns", *flags],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert "ready at https://" in proc.stdout.readline()
    return proc


def _stop(proc: subprocess.Popen[str]) -> None:
    proc.send_signal(signal.SIGTERM)
    proc.wait(30)


def _kubectl(data_dir, *args: str, check: bool = True) -> str:
    done = subprocess.run([kubectl_binary(), "--kubeconfig", str(data_dir / "kubeconfig"), *args],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 or not check, (args, done.stderr)
    return done.stdout


def _system_pods(data_dir, want: set[str], timeout: float = 60) -> dict[str, dict]:
    deadline = time.monotonic() + timeout
    while True:
        pods = {p["metadata"]["name"]: p for p in json.loads(_kubectl(data_dir, "get", "pods", "-n", "kube-system",
                                                                      "-o", "json"))["items"]}
        running = {n for n, p in pods.items() if (p.get("status") or {}).get("phase") == "Running"}
        if running == want or time.monotonic() > deadline:
            assert running == want, sorted(pods)
            return pods
        time.sleep(0.2)


def test_the_control_plane_shows_as_mirror_pods(tmp_path):
    data = tmp_path / "data"
    proc = _serve(data)
    try:
        want = {"kube-apiserver-mini-kube", "kube-controller-manager-mini-kube", "kube-scheduler-mini-kube",
                "kube-proxy-mini-kube"}
        pods = _system_pods(data, want)
        node_uid = json.loads(_kubectl(data, "get", "node", "mini-kube", "-o", "json"))["metadata"]["uid"]
        for pod in pods.values():
            assert "kubernetes.io/config.mirror" in pod["metadata"]["annotations"]
            assert pod["metadata"]["ownerReferences"][0]["uid"] == node_uid
            assert pod["spec"]["nodeName"] == "mini-kube" and pod["status"]["containerStatuses"][0]["ready"]
        table = _kubectl(data, "get", "pods", "-n", "kube-system")
        assert re.search(r"^kube-apiserver-mini-kube\s+1/1\s+Running\s+0", table, re.M), table
        assert "programmed" in _kubectl(data, "logs", "-n", "kube-system", "kube-proxy-mini-kube")

        # deleted: made again, a new Pod of the same name. (Not `kubectl delete`'s wait: it gets the old Pod, then
        # lists by name and waits for a DELETED event; a mirror Pod made again in between, as upstream's kubelet
        # may in one sync, is in that list, so it would wait for ever.)
        old_uid = pods["kube-scheduler-mini-kube"]["metadata"]["uid"]
        _kubectl(data, "delete", "pod", "-n", "kube-system", "kube-scheduler-mini-kube", "--wait=false")
        deadline = time.monotonic() + 60
        while _system_pods(data, want)["kube-scheduler-mini-kube"]["metadata"]["uid"] == old_uid:
            assert time.monotonic() < deadline, "the deleted mirror Pod was not made again"
            time.sleep(0.2)
    finally:
        _stop(proc)
    proc = _serve(data, "--no-controllers")  # the same data dir, one component less: its mirror Pod goes
    try:
        _system_pods(data, {"kube-apiserver-mini-kube", "kube-scheduler-mini-kube", "kube-proxy-mini-kube"})
    finally:
        _stop(proc)
