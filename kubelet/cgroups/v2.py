"""cgroup v2: one unified hierarchy. Each level above a container enables the memory, cpu and pids controllers for
its children (cgroup.subtree_control); limits go to memory.max (memory.swap.max 0: no swap), memory.oom.group,
cpu.max (`quota period`), cpu.weight (from shares, as runc converts them) and pids.max; OOM kills are counted in
memory.events (`oom_kill`); cgroup.kill ends a subtree at once where the kernel has it."""

from __future__ import annotations

import contextlib
from pathlib import Path

from .driver import Driver, read_keyed, write
from .limits import PERIOD_US, Limits, shares_to_weight

CONTROLLERS = ("memory", "cpu", "pids")


class V2Driver(Driver):
    version = "v2"

    def __init__(self, root: Path) -> None:
        self.root = root  # the unified mount point, e.g. Path("/sys/fs/cgroup")

    def directories(self, path: str) -> list[Path]:
        return [self.root / path]

    def controllers(self, directory: Path) -> list[str]:
        """The controllers of ours that `directory` may hand to its children."""
        try:
            offered = (directory / "cgroup.controllers").read_text().split()
        except OSError:
            return []
        return [c for c in CONTROLLERS if c in offered]

    def _delegate(self, directory: Path) -> None:
        wanted = self.controllers(directory)
        try:
            enabled = (directory / "cgroup.subtree_control").read_text().split()
        except OSError:
            enabled = []
        missing = [c for c in wanted if c not in enabled]
        if missing:
            write(directory / "cgroup.subtree_control", " ".join(f"+{c}" for c in missing))

    def create(self, path: str, limits: Limits | None = None) -> None:
        directory = self.root
        for part in Path(path).parts:
            self._delegate(directory)  # a parent's controllers reach the child only when it hands them on
            directory = directory / part
            directory.mkdir(exist_ok=True)
        if limits is None:
            return
        if limits.memory is not None:
            write(directory / "memory.max", limits.memory)
            if (directory / "memory.swap.max").exists():
                write(directory / "memory.swap.max", 0)
        if limits.oom_group and (directory / "memory.oom.group").exists():
            write(directory / "memory.oom.group", 1)
        if limits.cpu_shares is not None:
            write(directory / "cpu.weight", shares_to_weight(limits.cpu_shares))
        if limits.cpu_quota is not None:
            write(directory / "cpu.max", f"{limits.cpu_quota} {PERIOD_US}")
        if limits.pids is not None:
            write(directory / "pids.max", limits.pids)

    def oom_kills(self, path: str) -> int:
        return read_keyed(self.root / path / "memory.events").get("oom_kill", 0)

    def cpu_stat(self, path: str) -> dict[str, int]:
        stat = read_keyed(self.root / path / "cpu.stat")
        return {"usage_ns": stat.get("usage_usec", 0) * 1000, "nr_periods": stat.get("nr_periods", 0),
                "nr_throttled": stat.get("nr_throttled", 0), "throttled_ns": stat.get("throttled_usec", 0) * 1000}

    def kill(self, path: str) -> None:
        kill_file = self.root / path / "cgroup.kill"
        if kill_file.exists():
            with contextlib.suppress(OSError):
                write(kill_file, 1)
        super().kill(path)
