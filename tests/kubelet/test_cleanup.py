"""Nothing is left behind (issue #13): a stopped cluster leaves no namespace holder, container process, veth or
mount, and neither does a crashed one (`kill -9` of `mini-kube serve`): every process mini-kube starts dies
with it, namespaces and mounts vanish with their last process, and the next start clears the old pod files and
the cgroups the crashed one left (empty once its processes died)."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import eventually, process_cluster_or_skip

pytestmark = pytest.mark.slow  # each test here takes more than a few seconds


MARK = str(random.randint(10**8, 10**9))  # unique to this run: other runs may be going on


def _running(pattern: str) -> list[str]:
    return subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True).stdout.split()


def _cgroups_of(pid: int) -> list[Path]:
    """The cgroup directories of the mini-kube process `pid` (none where cgroups cannot be written)."""
    from mini_kube.kubelet.cgroups import ROOT, detect

    driver, _ = detect()
    if driver is None:
        return []
    found = [p for d in driver.directories(ROOT) for p in d.glob(f"proc-{pid}-*")]
    assert len(found) == len(driver.directories(ROOT))  # one per hierarchy
    return found


def _serve(data: Path) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-m", "mini_kube.cli", "serve", "--data-dir", str(data),
                             "--port", "0", "--nodes", "1", "--node-runtime", "process", "--no-ccm"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = proc.stdout.readline()
    assert "ready" in line, line
    return proc


def _kubectl(data: Path, *args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(["kubectl", "--kubeconfig", str(data / "kubeconfig"), *args], capture_output=True,
                          text=True, timeout=60, **kw)


def test_a_crashed_server_leaves_no_process_namespace_or_pod_file(tmp_path):
    process_cluster_or_skip()
    data = tmp_path / "data"
    proc = _serve(data)
    try:
        overrides = json.dumps({"spec": {"nodeName": "mini-kube"}})
        _kubectl(data, "run", "orphan-maker", "--image=busybox", "--overrides", overrides, "--",
                 "sh", "-c", f"sleep {MARK}1 & sleep {MARK}2")
        eventually(lambda: len(_running(f"sleep {MARK}")) >= 2, timeout=30)
        pods_dir = data / "nodes" / "mini-kube" / "pods"
        before = {str(p) for p in pods_dir.glob("*/container-*.spec")}
        assert before
        children = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True).stdout.split()
        holders = [int(p) for p in children if Path(f"/proc/{p}/cmdline").read_bytes().startswith(b"unshare")]
        assert holders  # the cluster network's and the pod's
        cgroups = _cgroups_of(proc.pid)
        assert all(list(c.glob("mini-kube/kubepods/*/pod*/*")) for c in cgroups)  # the container's, in each
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    eventually(lambda: not _running(f"sleep {MARK}"), timeout=10)  # the grandchild too: its PID namespace died
    eventually(lambda: not [p for p in holders if os.path.exists(f"/proc/{p}/cmdline") and
                            Path(f"/proc/{p}/cmdline").read_bytes().startswith(b"unshare")], timeout=10)
    assert "10.244." not in subprocess.run(["ip", "-4", "addr"], capture_output=True, text=True).stdout
    assert all(c.is_dir() for c in cgroups)  # cgroups stay (empty) until a mini-kube starts again
    proc = _serve(data)  # the next start clears what the crashed one left on disk and in cgroups
    try:
        assert not before & {str(p) for p in pods_dir.glob("*/container-*.spec")}
        assert not [c for c in cgroups if c.exists()]
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(20)


def test_a_stopped_cluster_leaves_nothing(process_cluster):
    """Checked on a cluster of its own: stop it, then look."""
    from mini_kube.testing import MiniKube
    from tests.helpers import kubectl

    kube = MiniKube(nodes=1, node_runtime="process").start()
    try:
        overrides = json.dumps({"spec": {"nodeName": "mini-kube"}})
        kubectl(kube, "run", "p", "--image=busybox", "--overrides", overrides, "--", "sh", "-c",
                f"sleep {MARK}3 & sleep {MARK}4")
        eventually(lambda: len(_running(f"sleep {MARK}")) >= 2, timeout=30)
        root = kube.nodes.nodes.root
        holder = kube.nodes.nodes.network.holder.pid
        cgroups = kube.nodes.kubelets[0].runtime.cgroups
        node_cgroup = cgroups.base if cgroups is not None else ""
        assert cgroups is None or cgroups.driver.children(f"{node_cgroup}/kubepods/besteffort")  # the pod's
    finally:
        kube.stop()
    assert not node_cgroup or not cgroups.driver.exists(node_cgroup)
    assert not _running(f"sleep {MARK}")
    assert not os.path.exists(f"/proc/{holder}") or b"sleep" not in Path(f"/proc/{holder}/cmdline").read_bytes()
    assert not root.exists()
