"""resources.limits enforced by the process runtime through cgroups (v1 here; v2 where the machine has it): a
container over its memory limit is OOMKilled (137) and restarted, a cpu limit becomes a CFS quota the kernel
holds the container to, processes exec'd into a container share its cgroup, and the cgroups go with their Pod.
Through real kubectl and the official client; the cgroup files are read as the kernel shows them."""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path

import pytest
from mini_kube.machinery.refs import EVENTS, PODS

from tests.helpers import kubectl

from .conftest import container_state, eventually, new_namespace, status_of

MARK = str(random.randint(10**8, 10**9))


@pytest.fixture(scope="module")
def kube(process_cluster):
    runtime = process_cluster.nodes.kubelets[0].runtime
    if runtime.cgroups is None:
        pytest.skip(f"cgroups cannot be written here: {runtime.unenforced}")
    return process_cluster



def _driver(kube):
    return kube.nodes.kubelets[0].runtime.cgroups.driver


def _cgroup_of(pid: int) -> str:
    """The process's cgroup (relative to the hierarchies' roots), from /proc: the memory hierarchy's under v1."""
    lines = [line.split(":", 2) for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines()]
    v1 = [path for _, controllers, path in lines if "memory" in controllers.split(",")]
    return (v1 or [path for _, controllers, path in lines if controllers == ""])[0].lstrip("/")


def _read(kube, path: str, *names: str) -> str:
    """The first of the cgroup files `names` that exists in cgroup `path` (v1 file names, then v2 ones)."""
    for directory in _driver(kube).directories(path):
        for name in names:
            if (directory / name).exists():
                return (directory / name).read_text().strip()
    raise AssertionError(f"none of {names} in {path}")


def _pid_of(pattern: str) -> int:
    found = subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True).stdout.split()
    return int(found[0]) if found else 0


def _manifest(name: str, command: str, limits: dict, requests: dict | None = None) -> str:
    resources = {"limits": limits, **({"requests": requests} if requests else {})}
    return json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": {
        "nodeName": "mini-kube", "containers": [{"name": "main", "image": "busybox", "command": ["sh", "-c", command],
                                                 "resources": resources}]}})


def _restarts(kube, ns: str, name: str) -> int:
    row = kubectl(kube, "-n", ns, "get", "pod", name, "--no-headers").stdout.split()
    return int(row[3])  # NAME READY STATUS RESTARTS AGE


def test_over_its_memory_limit_a_container_is_oom_killed_and_restarted(kube, ns):
    from kubernetes import client, config

    hog = "echo starting; exec python3 -c \"x = 'a' * (200 << 20); print('survived')\""
    kubectl(kube, "-n", ns, "apply", "-f", "-", input=_manifest("hog", hog, {"memory": "50Mi"}))
    eventually(lambda: _restarts(kube, ns, "hog") >= 1, timeout=30)
    api = client.CoreV1Api(config.new_client_from_config(kube.kubeconfig))
    found = api.read_namespaced_pod("hog", ns)
    assert found.status.qos_class == "Burstable"
    status = found.status.container_statuses[0]
    last = (status.last_state.terminated if status.last_state and status.last_state.terminated
            else status.state.terminated)
    assert (last.reason, last.exit_code) == ("OOMKilled", 137)
    assert kubectl(kube, "-n", ns, "logs", "hog", "--previous").stdout == "starting\n"  # never "survived"
    uid = found.metadata.uid
    pod_cgroup = kube.nodes.kubelets[0].runtime.cgroups.pod_path(kube.client.get(PODS, "hog", ns))
    assert pod_cgroup.endswith(f"/kubepods/burstable/pod{uid}")
    assert _read(kube, pod_cgroup, "memory.limit_in_bytes", "memory.max") == str(50 << 20)
    eventually(lambda: _restarts(kube, ns, "hog") >= 2, timeout=30)  # and again: restartPolicy Always


def test_a_cpu_limit_is_a_quota_the_kernel_holds_the_container_to(kube, ns):
    spin = f"while :; do :; done # spin-{MARK}"
    kubectl(kube, "-n", ns, "apply", "-f", "-",
            input=_manifest("spin", spin, {"cpu": "200m", "memory": "64Mi"}, {"cpu": "100m", "memory": "64Mi"}))
    eventually(lambda: "running" in container_state(kube, ns, "spin").get("state", {}))
    pid = eventually(lambda: _pid_of(f"spin-{MARK}"))
    cgroup = _cgroup_of(pid)
    uid = kube.client.get(PODS, "spin", ns)["metadata"]["uid"]
    container_id = container_state(kube, ns, "spin")["containerID"].removeprefix("mini-kube://")
    assert cgroup.endswith(f"/kubepods/burstable/pod{uid}/{container_id}") and cgroup.startswith("mini-kube/")
    pod_cgroup = cgroup.rsplit("/", 1)[0]
    if _driver(kube).version == "v1":
        assert [_read(kube, cgroup, f) for f in ("cpu.cfs_quota_us", "cpu.cfs_period_us", "cpu.shares")] == [
            "20000", "100000", "102"]
        assert _read(kube, pod_cgroup, "cpu.cfs_quota_us") == "20000"
        assert _read(kube, cgroup, "memory.limit_in_bytes") == str(64 << 20)
    else:
        assert [_read(kube, cgroup, f) for f in ("cpu.max", "cpu.weight")] == ["20000 100000", "4"]
        assert _read(kube, pod_cgroup, "cpu.max") == "20000 100000"
        assert _read(kube, cgroup, "memory.max") == str(64 << 20)
    # over a second or so of the busy loop (10+ CFS periods), the kernel throttled it and it got no more cpu per
    # period than the quota's 20% (less only if the machine is busy)
    before = _driver(kube).cpu_stat(cgroup)
    after = eventually(lambda: (s := _driver(kube).cpu_stat(cgroup))["nr_periods"] >= before["nr_periods"] + 10
                       and s["nr_throttled"] >= before["nr_throttled"] + 3 and s, timeout=20)
    periods = after["nr_periods"] - before["nr_periods"]
    share = (after["usage_ns"] - before["usage_ns"]) / (periods * 100_000_000)
    assert share < 0.25, share  # measured here: 0.200
    # a process exec'd into the container is in its cgroup too
    exec_cgroup = kubectl(kube, "-n", ns, "exec", "spin", "--", "cat", "/proc/self/cgroup").stdout
    assert f":/{cgroup}\n" in exec_cgroup
    kubectl(kube, "-n", ns, "delete", "pod", "spin", "--grace-period=1")
    assert not any(_driver(kube).exists(p) for p in (cgroup, pod_cgroup))


def test_pods_without_limits_and_guaranteed_ones_have_their_cgroups(kube, ns):
    kube.client.create(PODS, {"metadata": {"name": "free"}, "spec": {"nodeName": "mini-kube", "containers": [
        {"name": "c", "image": "busybox", "command": ["sleep", f"{MARK}5"]}]}}, ns)
    kube.client.create(PODS, {"metadata": {"name": "exact"}, "spec": {"nodeName": "mini-kube", "containers": [
        {"name": "c", "image": "busybox", "command": ["sleep", f"{MARK}6"],
         "resources": {"limits": {"cpu": "1", "memory": "100Mi"}}}]}}, ns)
    free = _cgroup_of(eventually(lambda: _pid_of(f"sleep {MARK}5")))
    exact = _cgroup_of(eventually(lambda: _pid_of(f"sleep {MARK}6")))
    assert "/kubepods/besteffort/pod" in free and "/kubepods/pod" in exact
    assert status_of(kube, ns, "free")["qosClass"] == "BestEffort"
    assert status_of(kube, ns, "exact")["qosClass"] == "Guaranteed"
    if _driver(kube).version == "v1":
        assert _read(kube, free.rsplit("/", 1)[0], "cpu.shares") == "2"
        assert _read(kube, free, "memory.limit_in_bytes") == str(2**63 - 4096)  # unlimited
        assert _read(kube, exact.rsplit("/", 1)[0], "memory.limit_in_bytes") == str(100 << 20)
    kubectl(kube, "-n", ns, "delete", "pod", "free", "exact", "--grace-period=0", "--force")
    eventually(lambda: not any(_driver(kube).exists(p) for p in (free, exact)))


def test_a_node_without_cgroups_runs_pods_and_says_limits_are_not_enforced():
    from mini_kube.testing import MiniKube

    with MiniKube(nodes=1, node_runtime="process", node_options={"cgroups": False}) as kube:
        assert kube.nodes.kubelets[0].runtime.cgroups is None
        namespace = new_namespace(kube)
        kubectl(kube, "-n", namespace, "apply", "-f", "-",
                input=_manifest("free", f"sleep {MARK}7", {"memory": "50Mi"}))
        pid = eventually(lambda: _pid_of(f"sleep {MARK}7"))
        assert "/mini-kube/" not in Path(f"/proc/{pid}/cgroup").read_text()
        events = eventually(lambda: [e for e in kube.client.list(EVENTS, "default")["items"]
                                     if e["reason"] == "ResourceLimitsNotEnforced"])
        assert events[0]["type"] == "Warning" and events[0]["involvedObject"]["kind"] == "Node"
        assert "not enforced" in events[0]["message"]
