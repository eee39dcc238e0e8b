"""Containers' inits are forked by one spawner process per node (kubelet/init_spawner.py) rather than each started
as a new interpreter by the kubelet; a spawner killed takes its containers along, which restart under a new one."""

from __future__ import annotations

import os
import signal
import subprocess
import uuid
from pathlib import Path

from mini_kube.machinery.refs import PODS

from .conftest import container_state, eventually, new_namespace, pod


def _parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def _cmdline(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")


def _processes_running(argv: list[str]) -> list[int]:
    found = subprocess.run(["pgrep", "-x", "-f", " ".join(argv)], capture_output=True, text=True).stdout
    return [int(pid) for pid in found.split()]


def _spawner_of(argv: list[str]) -> int:
    """The spawner above a container's command: command <- its init (the supervisor in the PID namespace's
    parent) <- the spawner."""
    (command,) = eventually(lambda: _processes_running(argv))
    init = _parent(command)
    return _parent(init)


def test_each_containers_init_is_forked_by_the_nodes_spawner(kube):
    ns = new_namespace(kube)
    marks = [f"{uuid.uuid4().int % 10**8 + 10**8}" for _ in range(2)]
    for i, mark in enumerate(marks):
        kube.client.create(PODS, pod(f"p{i}", {"name": "c", "image": "busybox:1.36", "command": ["sleep", mark]}),
                           ns)
    spawners = {_spawner_of(["sleep", mark]) for mark in marks}
    assert len(spawners) == 1
    (spawner,) = spawners
    assert any(part.endswith("/kubelet/init_spawner.py") for part in _cmdline(spawner)), _cmdline(spawner)
    assert spawner != os.getpid()  # not the kubelet (here the test's process, which runs the cluster)


def test_a_killed_spawner_takes_its_containers_and_a_new_one_restarts_them(kube):
    ns = new_namespace(kube)
    mark = f"{uuid.uuid4().int % 10**8 + 10**8}"
    kube.client.create(PODS, pod("p", {"name": "c", "image": "busybox:1.36", "command": ["sleep", mark]}), ns)
    spawner = _spawner_of(["sleep", mark])
    assert spawner != os.getpid() and any(part.endswith("/kubelet/init_spawner.py") for part in _cmdline(spawner))
    os.kill(spawner, signal.SIGKILL)
    restarted = eventually(lambda: (s := container_state(kube, ns, "p")).get("restartCount") == 1
                           and "running" in s.get("state", {}) and s)
    assert restarted["lastState"]["terminated"]["exitCode"] == 137  # SIGKILL, as the kernel gave it
    again = _spawner_of(["sleep", mark])
    assert again != spawner


def test_a_process_exec_d_into_a_container_is_forked_by_the_spawner_too(kube):
    """`kubectl exec` (and exec probes): the process that enters the container is a fork of the node's spawner
    running the init's `enter`, not an interpreter started for it (about 20 ms of CPU each)."""
    ns = new_namespace(kube)
    mark, inner = (f"{uuid.uuid4().int % 10**8 + 10**8}" for _ in range(2))
    kube.client.create(PODS, pod("p", {"name": "c", "image": "busybox:1.36", "command": ["sleep", mark]}), ns)
    spawner = _spawner_of(["sleep", mark])
    eventually(lambda: "running" in container_state(kube, ns, "p").get("state", {}))
    exec_ = subprocess.Popen(["kubectl", "--kubeconfig", kube.kubeconfig, "-n", ns, "exec", "p", "--", "sleep", inner],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert _spawner_of(["sleep", inner]) == spawner
    finally:
        exec_.kill()
        exec_.wait()
    out = subprocess.run(["kubectl", "--kubeconfig", kube.kubeconfig, "-n", ns, "exec", "p", "--", "sh", "-c",
                          "echo out; echo err >&2; exit 3"], capture_output=True, text=True)
    assert (out.returncode, out.stdout, out.stderr.splitlines()[0]) == (3, "out\n", "err"), out
