"""Resource limits through cgroups: find the hierarchies this machine has (v1 controllers, or the unified v2 one)
and whether mini-kube may write them (`detect`); `tree.PodCgroups` lays out a node's Pod and container cgroups."""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path

from . import v1, v2
from .driver import Driver

ROOT = "mini-kube"  # the cgroup, at the top of each hierarchy, under which everything of mini-kube's lives


def _unescape(text: str) -> str:
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), text)


def mounts(mountinfo: str = "/proc/self/mountinfo") -> list[tuple[str, Path, set[str]]]:
    """(fstype, mount point, options) of every cgroup and cgroup2 mount."""
    found = []
    with contextlib.suppress(OSError), open(mountinfo, encoding="utf-8") as handle:
        for line in handle:
            fields = line.split()
            if "-" not in fields:
                continue
            tail = fields[fields.index("-") + 1:]
            if len(tail) >= 3 and tail[0] in ("cgroup", "cgroup2"):
                found.append((tail[0], Path(_unescape(fields[4])), set(tail[2].split(","))))
    return found


def _writable(directory: Path) -> str:
    """'' when mini-kube's root cgroup can be made (or is there) under `directory`, else why not."""
    try:
        (directory / ROOT).mkdir(exist_ok=True)
        return ""
    except OSError as exc:
        return f"{directory}: {exc.strerror}"


def detect(mountinfo: str = "/proc/self/mountinfo") -> tuple[Driver | None, str]:
    """The driver for this machine's cgroups, or None and why limits cannot be enforced."""
    found = mounts(mountinfo)
    legacy: dict[str, Path] = {}
    for fstype, point, options in found:
        for controller in v1.CONTROLLERS:
            if fstype == "cgroup" and controller in options:
                legacy.setdefault(controller, point)
    if "memory" in legacy or "cpu" in legacy:
        problems = {c: _writable(p) for c, p in legacy.items()}
        usable = {c: p for c, p in legacy.items() if not problems[c]}
        if "memory" in usable or "cpu" in usable:
            return v1.V1Driver(usable), ""
        return None, "cgroup v1 not writable (" + "; ".join(sorted(set(problems.values()))) + ")"
    unified = next((p for fstype, p, _ in found if fstype == "cgroup2"), None)
    if unified is None:
        return None, "no cgroup hierarchy mounted"
    driver = v2.V2Driver(unified)
    if not driver.controllers(unified):
        return None, f"cgroup v2 at {unified} offers none of memory, cpu, pids"
    problem = _writable(unified) or _delegates(driver)
    return (driver, "") if not problem else (None, f"cgroup v2 not writable ({problem})")


def _delegates(driver: v2.V2Driver) -> str:
    """'' when a cgroup under mini-kube's root gets the controllers (a parent holding processes of its own, as a
    container's namespaced root may, cannot hand them on), else why not."""
    probe = f"{ROOT}/probe-{os.getpid()}"
    try:
        driver.create(probe)
        return ""
    except OSError as exc:
        return f"controllers not delegated: {exc.strerror}"
    finally:
        driver.remove(probe)


__all__ = ["ROOT", "Driver", "detect", "mounts"]
