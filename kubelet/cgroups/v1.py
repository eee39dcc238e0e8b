"""cgroup v1: a hierarchy per controller (memory, cpu, cpuacct, pids; cpu and cpuacct often mounted together).
Limits go to memory.limit_in_bytes (and memory.memsw.limit_in_bytes, so swap cannot stretch it), cpu.shares,
cpu.cfs_period_us/cpu.cfs_quota_us and pids.max; OOM kills are counted in memory.oom_control (`oom_kill`)."""

from __future__ import annotations

import contextlib
from pathlib import Path

from .driver import Driver, read_keyed, write
from .limits import PERIOD_US, Limits

CONTROLLERS = ("memory", "cpu", "cpuacct", "pids")


class V1Driver(Driver):
    version = "v1"

    def __init__(self, mounts: dict[str, Path]) -> None:
        self.mounts = mounts  # controller -> mount point, e.g. {"memory": Path("/sys/fs/cgroup/memory")}

    def _roots(self) -> list[Path]:
        return list(dict.fromkeys(self.mounts.values()))

    def directories(self, path: str) -> list[Path]:
        return [root / path for root in self._roots()]

    def _at(self, controller: str, path: str) -> Path | None:
        root = self.mounts.get(controller)
        return None if root is None else root / path

    def create(self, path: str, limits: Limits | None = None) -> None:
        for directory in self.directories(path):
            directory.mkdir(parents=True, exist_ok=True)
        if limits is None:
            return
        memory = self._at("memory", path)
        if memory is not None and limits.memory is not None:
            write(memory / "memory.limit_in_bytes", limits.memory)
            if (memory / "memory.memsw.limit_in_bytes").exists():
                write(memory / "memory.memsw.limit_in_bytes", limits.memory)
        cpu = self._at("cpu", path)
        if cpu is not None:
            if limits.cpu_shares is not None:
                write(cpu / "cpu.shares", limits.cpu_shares)
            if limits.cpu_quota is not None:
                write(cpu / "cpu.cfs_period_us", PERIOD_US)
                write(cpu / "cpu.cfs_quota_us", limits.cpu_quota)
        pids = self._at("pids", path)
        if pids is not None and limits.pids is not None:
            write(pids / "pids.max", limits.pids)

    def oom_kills(self, path: str) -> int:
        memory = self._at("memory", path)
        return 0 if memory is None else read_keyed(memory / "memory.oom_control").get("oom_kill", 0)

    def cpu_stat(self, path: str) -> dict[str, int]:
        out = {"usage_ns": 0, "nr_periods": 0, "nr_throttled": 0, "throttled_ns": 0}
        account = self._at("cpuacct", path)
        if account is not None:
            with contextlib.suppress(OSError, ValueError):
                out["usage_ns"] = int((account / "cpuacct.usage").read_text())
        cpu = self._at("cpu", path)
        if cpu is not None:
            stat = read_keyed(cpu / "cpu.stat")
            out.update(nr_periods=stat.get("nr_periods", 0), nr_throttled=stat.get("nr_throttled", 0),
                       throttled_ns=stat.get("throttled_time", 0))
        return out
