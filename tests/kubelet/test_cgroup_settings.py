"""What the kubelet writes into cgroups, without a cluster: upstream's conversions (shares, quota, weight), a Pod's
and a container's settings, the v2 driver's files (on a directory standing in for /sys/fs/cgroup, since this
machine's controllers are v1: the v1 ones are checked for real in test_resource_limits.py), finding the
hierarchies from mountinfo, and the sweep of what a dead process left."""

from __future__ import annotations

import os

import pytest
from mini_kube.kubelet.cgroups import ROOT, detect, mounts
from mini_kube.kubelet.cgroups.limits import (
    Limits,
    container_limits,
    milli_cpu_to_quota,
    milli_cpu_to_shares,
    pod_limits,
    qos_class,
    shares_to_weight,
)
from mini_kube.kubelet.cgroups.tree import owner, sweep
from mini_kube.kubelet.cgroups.v1 import V1Driver
from mini_kube.kubelet.cgroups.v2 import V2Driver


def _pod(*containers: dict, inits: tuple = (), qos: str | None = None) -> dict:
    pod = {"metadata": {"uid": "u-1"}, "spec": {"containers": list(containers), "initContainers": list(inits)}}
    if qos:
        pod["status"] = {"qosClass": qos}
    return pod


def _c(**resources) -> dict:
    """A container as the API server stores it: requests default to limits."""
    resources["requests"] = {**resources.get("limits", {}), **resources.get("requests", {})}
    return {"name": "c", "resources": resources}


def test_upstream_conversions():
    assert [milli_cpu_to_shares(m) for m in (0, 1, 100, 250, 1000, 300_000)] == [2, 2, 102, 256, 1024, 262_144]
    assert [milli_cpu_to_quota(m) for m in (0, 5, 200, 1500)] == [None, 1000, 20_000, 150_000]
    assert [shares_to_weight(s) for s in (2, 1024, 262_144)] == [1, 39, 10_000]


def test_container_settings():
    limited = container_limits({"requests": {"cpu": "100m", "memory": "10Mi"}, "limits": {"cpu": "0.5", "memory": "50Mi"}})
    assert limited == Limits(memory=50 << 20, cpu_quota=50_000, cpu_shares=102, oom_group=True)
    assert container_limits({"limits": {"cpu": "2"}}).cpu_shares == 2048  # no request: shares from the limit
    assert container_limits({}) == Limits(cpu_shares=2, oom_group=True)


def test_absurd_quantities_saturate():
    """The API server stores 1e2147483647 as upstream does; counting it must not build a 2-billion-digit int."""
    limited = container_limits({"requests": {"cpu": "1e-9"}, "limits": {"cpu": "1e2147483647", "memory": "10e999"}})
    assert (limited.memory, limited.cpu_shares) == (2**63 - 1, 2)
    assert limited.cpu_quota == milli_cpu_to_quota(2**63 - 1)


def test_pod_settings_sum_containers_and_need_every_limit():
    both = _pod(_c(requests={"cpu": "100m"}, limits={"cpu": "200m", "memory": "64Mi"}),
                _c(requests={"cpu": "300m"}, limits={"cpu": "300m", "memory": "1Gi"}))
    assert pod_limits(both) == Limits(memory=(64 << 20) + (1 << 30), cpu_quota=50_000, cpu_shares=409)
    partly = _pod(_c(limits={"cpu": "200m", "memory": "64Mi"}), _c(requests={"cpu": "100m"}))
    assert pod_limits(partly, pids=100) == Limits(memory=None, cpu_quota=None, cpu_shares=307, pids=100)
    big_init = _pod(_c(limits={"cpu": "200m", "memory": "64Mi"}), inits=[_c(limits={"cpu": "1", "memory": "1Gi"})])
    assert pod_limits(big_init) == Limits(memory=1 << 30, cpu_quota=100_000, cpu_shares=1024)
    assert pod_limits(_pod(_c())) == Limits(cpu_shares=2)


def test_qos_from_status_or_computed():
    assert qos_class(_pod(_c(), qos="Guaranteed")) == "Guaranteed"
    assert qos_class(_pod(_c(limits={"cpu": "1", "memory": "1Gi"}, requests={"cpu": "1000m", "memory": "1Gi"}))) \
        == "Guaranteed"
    assert qos_class(_pod(_c(limits={"memory": "1Gi"}))) == "Burstable"
    assert qos_class(_pod(_c(requests={"cpu": "0"}))) == "BestEffort"


def test_v2_files(tmp_path):
    (tmp_path / "cgroup.controllers").write_text("cpuset cpu io memory hugetlb pids rdma misc\n")
    (tmp_path / "cgroup.subtree_control").write_text("memory\n")
    driver = V2Driver(tmp_path)
    path = f"{ROOT}/x/pod1/c1"
    (tmp_path / ROOT / "x" / "pod1" / "c1").mkdir(parents=True)
    (tmp_path / path / "memory.oom.group").write_text("0\n")
    driver.create(path, Limits(memory=50 << 20, cpu_quota=20_000, cpu_shares=102, pids=64, oom_group=True))
    assert (tmp_path / "cgroup.subtree_control").read_text() == "+cpu +pids"  # memory was on already
    files = {f: (tmp_path / path / f).read_text() for f in ("memory.max", "cpu.max", "cpu.weight", "pids.max",
                                                             "memory.oom.group")}
    assert files == {"memory.max": str(50 << 20), "cpu.max": "20000 100000", "cpu.weight": "4", "pids.max": "64",
                     "memory.oom.group": "1"}
    assert driver.procs_files(path) == [str(tmp_path / path / "cgroup.procs")]
    (tmp_path / path / "memory.events").write_text("low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\noom_group_kill 1\n")
    (tmp_path / path / "cpu.stat").write_text("usage_usec 2000\nuser_usec 1500\nsystem_usec 500\nnr_periods 10\n"
                                              "nr_throttled 8\nthrottled_usec 700\n")
    assert driver.oom_kills(path) == 1
    assert driver.cpu_stat(path) == {"usage_ns": 2_000_000, "nr_periods": 10, "nr_throttled": 8,
                                     "throttled_ns": 700_000}


def test_v1_files(tmp_path):
    mounts_ = {c: tmp_path / c for c in ("memory", "cpu", "pids")}
    mounts_["cpuacct"] = mounts_["cpu"]  # mounted together, as on many machines
    driver = V1Driver(mounts_)
    path = f"{ROOT}/x/pod1"
    assert len(driver.directories(path)) == 3
    driver.create(path, Limits(memory=1 << 20, cpu_quota=1000, cpu_shares=2, pids=10))
    read = {f: (tmp_path / c / path / f).read_text() for c, f in (
        ("memory", "memory.limit_in_bytes"), ("cpu", "cpu.shares"), ("cpu", "cpu.cfs_period_us"),
        ("cpu", "cpu.cfs_quota_us"), ("pids", "pids.max"))}
    assert read == {"memory.limit_in_bytes": "1048576", "cpu.shares": "2", "cpu.cfs_period_us": "100000",
                    "cpu.cfs_quota_us": "1000", "pids.max": "10"}
    (tmp_path / "memory" / path / "memory.oom_control").write_text("oom_kill_disable 0\nunder_oom 0\noom_kill 2\n")
    assert driver.oom_kills(path) == 2


def _mountinfo(tmp_path, *lines: str) -> str:
    path = tmp_path / "mountinfo"
    path.write_text("".join(f"{i} 1 0:{i} / {line}\n" for i, line in enumerate(lines, 30)))
    return str(path)


def test_detect_v1_v2_and_nothing_writable(tmp_path):
    for name in ("memory", "cpu,cpuacct", "unified"):
        (tmp_path / name).mkdir()
    hybrid = _mountinfo(tmp_path, f"{tmp_path}/memory rw - cgroup cgroup rw,memory",
                        f"{tmp_path}/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct",
                        f"{tmp_path}/unified rw - cgroup2 cgroup2 rw", "/proc rw - proc proc rw")
    assert [m[0] for m in mounts(hybrid)] == ["cgroup", "cgroup", "cgroup2"]
    driver, why = detect(hybrid)
    assert isinstance(driver, V1Driver) and why == ""
    assert driver.mounts == {"memory": tmp_path / "memory", "cpu": tmp_path / "cpu,cpuacct",
                             "cpuacct": tmp_path / "cpu,cpuacct"}
    assert (tmp_path / "memory" / ROOT).is_dir()
    (tmp_path / "unified" / "cgroup.controllers").write_text("cpu memory pids\n")
    driver, why = detect(_mountinfo(tmp_path, f"{tmp_path}/unified rw - cgroup2 cgroup2 rw"))
    assert isinstance(driver, V2Driver) and driver.root == tmp_path / "unified"
    gone = _mountinfo(tmp_path, f"{tmp_path}/absent/memory rw - cgroup cgroup rw,memory")
    driver, why = detect(gone)
    assert driver is None and "not writable" in why and "absent" in why
    assert detect(_mountinfo(tmp_path, "/proc rw - proc proc rw")) == (None, "no cgroup hierarchy mounted")


def test_sweep_removes_only_what_dead_processes_left(tmp_path):
    driver = V2Driver(tmp_path)
    dead = tmp_path / ROOT / "proc-999999999-1" / "mini-kube" / "kubepods" / "podx"
    mine = tmp_path / ROOT / owner() / "mini-kube" / "kubepods"
    restarted = tmp_path / ROOT / f"proc-{os.getpid()}-1"  # this pid, another start time: a reused pid
    foreign = tmp_path / ROOT / "something-else"
    for directory in (dead, mine, restarted, foreign):
        directory.mkdir(parents=True)
    assert sorted(sweep(driver)) == sorted(["proc-999999999-1", restarted.name])
    assert not dead.parents[2].exists() and not restarted.exists()
    assert mine.is_dir() and foreign.is_dir()


def test_v2_join_kill_and_remove_on_a_real_unified_hierarchy():
    """This machine's cgroup2 mount has none of our controllers, but its cgroups are real: a process joins one
    by writing 0, cgroup.kill ends it, and the subtree is removed."""
    import subprocess
    import time
    from pathlib import Path

    unified = next((p for fstype, p, _ in mounts() if fstype == "cgroup2"), None)
    if unified is None or not os.access(unified, os.W_OK):
        pytest.skip("no writable cgroup2 mount here")
    driver = V2Driver(unified)
    path = f"{ROOT}/test-{os.getpid()}/pod/c"
    driver.create(path)
    try:
        files = driver.procs_files(path)

        def join() -> None:
            for name in files:
                Path(name).write_text("0")

        sleeper = subprocess.Popen(["sleep", "300"], preexec_fn=join)
        assert f"0::/{path}\n" in Path(f"/proc/{sleeper.pid}/cgroup").read_text()
        assert driver.processes(f"{ROOT}/test-{os.getpid()}") == {sleeper.pid}
        deadline = time.monotonic() + 10
        while not driver.remove(f"{ROOT}/test-{os.getpid()}"):
            assert time.monotonic() < deadline
            time.sleep(0.02)
        assert sleeper.wait(10) == -9 and not driver.exists(f"{ROOT}/test-{os.getpid()}")
    finally:
        driver.remove(f"{ROOT}/test-{os.getpid()}")
