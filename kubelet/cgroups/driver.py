"""One interface over cgroup v1 (a hierarchy per controller) and v2 (one unified hierarchy): make a cgroup with
limits, the files a process writes `0` to in order to join it, its OOM kills and cpu use, and removal of a whole
subtree (its processes killed first). Paths are relative to the hierarchies' roots (`mini-kube/...`)."""

from __future__ import annotations

import abc
import contextlib
import os
import signal
from pathlib import Path

from .limits import Limits


class Driver(abc.ABC):
    version = ""

    @abc.abstractmethod
    def directories(self, path: str) -> list[Path]:
        """Where cgroup `path` lives (one directory per v1 hierarchy, one for v2)."""

    @abc.abstractmethod
    def create(self, path: str, limits: Limits | None = None) -> None:
        """Make cgroup `path` (and its parents), then apply `limits`; OSError when the kernel refuses."""

    @abc.abstractmethod
    def oom_kills(self, path: str) -> int:
        """How many processes the OOM killer killed in the cgroup since it was made."""

    @abc.abstractmethod
    def cpu_stat(self, path: str) -> dict[str, int]:
        """usage_ns, and the CFS counters nr_periods, nr_throttled, throttled_ns (0 where unknown)."""

    def procs_files(self, path: str) -> list[str]:
        """The files to write `0` to (the writer's own process) to join cgroup `path` in every hierarchy."""
        return [str(d / "cgroup.procs") for d in self.directories(path)]

    def children(self, path: str) -> list[str]:
        names: set[str] = set()
        for directory in self.directories(path):
            with contextlib.suppress(OSError):
                names.update(e.name for e in os.scandir(directory) if e.is_dir(follow_symlinks=False))
        return sorted(names)

    def exists(self, path: str) -> bool:
        return any(d.is_dir() for d in self.directories(path))

    def processes(self, path: str) -> set[int]:
        """The processes in cgroup `path` and below."""
        found: set[int] = set()
        for directory in self.directories(path):
            for dirpath, _, _ in os.walk(directory):
                with contextlib.suppress(OSError):
                    found.update(int(p) for p in Path(dirpath, "cgroup.procs").read_text().split())
        return found

    def kill(self, path: str) -> None:
        """SIGKILL every process in cgroup `path` and below."""
        for pid in self.processes(path):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)

    def remove(self, path: str) -> bool:
        """Kill what is left in cgroup `path` and below and remove the cgroups, deepest first; False while some
        cannot go yet (processes still dying): call again."""
        self.kill(path)
        gone = True
        for directory in self.directories(path):
            if not directory.is_dir():
                continue
            for dirpath, _, _ in sorted(os.walk(directory), key=lambda w: -w[0].count("/")):
                try:
                    os.rmdir(dirpath)
                except FileNotFoundError:
                    pass
                except OSError:
                    gone = False
        return gone


def write(path: Path, value: str | int) -> None:
    with open(path, "w", encoding="ascii") as handle:
        handle.write(str(value))


def read_keyed(path: Path) -> dict[str, int]:
    """A flat keyed file (`key value` lines), e.g. memory.events, cpu.stat; empty when unreadable."""
    out: dict[str, int] = {}
    with contextlib.suppress(OSError):
        for line in path.read_text().splitlines():
            key, _, value = line.partition(" ")
            with contextlib.suppress(ValueError):
                out[key] = int(value)
    return out
