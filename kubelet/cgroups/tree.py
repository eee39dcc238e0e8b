"""A node's cgroups, laid out as upstream's kubelet does under its root:
`mini-kube/<owner>/<node>/kubepods/[burstable|besteffort/]pod<uid>/<container id>` (Guaranteed Pods directly in
kubepods). `<owner>` names the process that runs the kubelet (`proc-<pid>-<start time>`), so that clusters running
side by side keep apart, and a process that is gone is known: at the first start in a process, the cgroups of
owners that died (a crashed or SIGKILLed `mini-kube serve`) are removed, their processes killed first."""

from __future__ import annotations

import asyncio
import logging
import os
import re
import time
from typing import Any

from . import ROOT, detect
from .driver import Driver
from .limits import MIN_SHARES, Limits, container_limits, node_limits, pod_limits, qos_class

log = logging.getLogger("mini-kube.kubelet")
OWNER = re.compile(r"^proc-(\d+)-(\d+)$")
_claimed: set[str] = set()  # node cgroups in use by kubelets of this process


def start_time(pid: int) -> int | None:
    """The process's start time (clock ticks after boot), None when it does not exist."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            return int(handle.read().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def owner() -> str:
    return f"proc-{os.getpid()}-{start_time(os.getpid())}"


def sweep(driver: Driver, timeout: float = 5.0) -> list[str]:
    """Remove the cgroups of owners that no longer run; returns the owners removed."""
    removed = []
    for name in driver.children(ROOT):
        match = OWNER.match(name)
        if match is None or start_time(int(match.group(1))) == int(match.group(2)):
            continue
        deadline = time.monotonic() + timeout
        while not driver.remove(f"{ROOT}/{name}") and time.monotonic() < deadline:
            time.sleep(0.02)
        removed.append(name)
    if removed:
        log.info("removed the cgroups left by %s", ", ".join(removed))
    return removed


class PodCgroups:
    """The cgroups of one node's Pods and containers."""

    def __init__(self, driver: Driver, node: str, pids_limit: int | None = None,
                 allocatable: dict[str, str] | None = None) -> None:
        self.driver = driver
        self.pids_limit = pids_limit
        name, n = node, 1
        while f"{ROOT}/{owner()}/{name}" in _claimed:  # two kubelets of one name in one process (tests)
            n += 1
            name = f"{node}-{n}"
        self.base = f"{ROOT}/{owner()}/{name}"
        _claimed.add(self.base)
        driver.remove(self.base)  # left by an earlier kubelet of this process that did not stop
        driver.create(f"{self.base}/kubepods", node_limits(allocatable or {}, pids_limit))
        driver.create(f"{self.base}/kubepods/burstable")
        driver.create(f"{self.base}/kubepods/besteffort", Limits(cpu_shares=MIN_SHARES))

    def pod_path(self, pod: dict[str, Any]) -> str:
        qos = qos_class(pod)
        level = "" if qos == "Guaranteed" else f"/{qos.lower()}"
        return f"{self.base}/kubepods{level}/pod{pod['metadata']['uid']}"

    def create_pod(self, pod: dict[str, Any]) -> str:
        path = self.pod_path(pod)
        self.driver.create(path, pod_limits(pod, self.pids_limit))
        return path

    def create_container(self, pod_path: str, container_id: str, resources: dict[str, Any] | None) -> str:
        path = f"{pod_path}/{container_id}"
        self.driver.create(path, container_limits(resources))
        return path

    def join_files(self, path: str) -> list[str]:
        return self.driver.procs_files(path)

    def oom_killed(self, path: str) -> bool:
        return self.driver.oom_kills(path) > 0

    async def remove(self, path: str, timeout: float = 5.0) -> bool:
        """Remove cgroup `path` and below, killing what is left in them; False when it could not in time. Each
        try walks every hierarchy's directories twice: on a thread of the loop's executor, not the loop."""
        deadline = time.monotonic() + timeout
        loop = asyncio.get_running_loop()
        while not await loop.run_in_executor(None, self.driver.remove, path):
            if time.monotonic() > deadline:
                log.warning("cgroup %s not removed: processes remain", path)
                return False
            await asyncio.sleep(0.02)
        return True

    async def close(self) -> None:
        """Remove the node's cgroups (and the owner's, when no other kubelet of this process uses it)."""
        await self.remove(self.base)
        _claimed.discard(self.base)
        owner_path = self.base.rsplit("/", 1)[0]
        if not any(c.startswith(owner_path + "/") for c in _claimed):
            self.driver.remove(owner_path)


_machine: tuple[Driver | None, str] | None = None


def machine() -> tuple[Driver | None, str]:
    """This machine's cgroup driver (None, and why, when cgroups cannot be written), found once per process;
    the first call also sweeps what dead owners left."""
    global _machine
    if _machine is None:
        driver, why = detect()
        if driver is not None:
            sweep(driver)
        _machine = (driver, why)
    return _machine
