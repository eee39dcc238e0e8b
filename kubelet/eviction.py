"""Local storage limits as upstream's eviction manager enforces them (localStorageEviction): a Pod whose emptyDir
volume grows past its `sizeLimit`, whose ephemeral storage (its containers' writable layers, emptyDir volumes
and logs: everything under its directory on the node's disk) grows past the sum of its containers'
`ephemeral-storage` limits, or one of whose containers (its writable layer and logs) grows past its own, is
evicted: a Warning event `Evicted`, its containers killed with a 1 s grace
period, and the Pod Failed with reason Evicted and upstream's message. Only Pods with such limits are measured,
every `housekeeping_interval` seconds, off the event loop."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from decimal import Decimal
from pathlib import Path
from typing import Any, Protocol

from mini_kube.machinery.quantity import Quantity, canonical, decimal_value, parse_quantity, scaled_value

from .volumes import volume_directory

log = logging.getLogger("mini-kube.kubelet")
GRACE = 1.0  # immediateEvictionGracePeriodSeconds
POD_MESSAGE = "Pod ephemeral local storage usage exceeds the total limit of containers {}. "
EMPTY_DIR_MESSAGE = 'Usage of EmptyDir volume "{}" exceeds the limit "{}". '
CONTAINER_MESSAGE = 'Container {} exceeded its local ephemeral storage limit "{}". '


def disk_usage(path: Path) -> int:
    """Bytes allocated under `path` (as du counts them: blocks), not following links nor crossing mounts."""
    total = 0
    try:
        device = path.lstat().st_dev
    except OSError:
        return 0
    stack = [str(path)]
    while stack:
        with contextlib.suppress(OSError), os.scandir(stack.pop()) as entries:
            for entry in entries:
                with contextlib.suppress(OSError):
                    info = entry.stat(follow_symlinks=False)
                    total += info.st_blocks * 512
                    if entry.is_dir(follow_symlinks=False) and info.st_dev == device:
                        stack.append(entry.path)
    return total


def _quantity(text: Any) -> tuple[int, str] | None:
    """(bytes, the quantity as upstream prints it) of a limit, None when absent or unreadable."""
    if text is None:
        return None
    try:
        value = decimal_value(text)
    except ValueError:
        return None
    return scaled_value(value, 0), canonical(text)


def _sum_text(total: int, first: str) -> str:
    """A sum of quantities as upstream's Quantity.Add prints it: in the first one's notation (BinarySI, DecimalSI...)."""
    parsed = parse_quantity(first)
    return str(Quantity(Decimal(total), parsed.format if parsed is not None else "DecimalSI"))


def container_limits(pod: dict[str, Any]) -> dict[str, tuple[int, str]]:
    """Each container's ephemeral-storage limit, by container name (those that set a non-zero one)."""
    found = {}
    for container in (pod.get("spec") or {}).get("containers") or ():
        limit = _quantity(((container.get("resources") or {}).get("limits") or {}).get("ephemeral-storage"))
        if limit is not None and limit[0] > 0:
            found[container.get("name", "")] = limit
    return found


def limits(pod: dict[str, Any]) -> tuple[tuple[int, str] | None, dict[str, tuple[int, str]]]:
    """The Pod's ephemeral-storage limit (the sum over its containers that set one) and its emptyDir size limits."""
    spec = pod.get("spec") or {}
    found = list(container_limits(pod).values())
    pod_limit = None
    if len(found) == 1:
        pod_limit = found[0]
    elif found:
        total = sum(b for b, _ in found)
        pod_limit = (total, _sum_text(total, found[0][1]))
    empty_dirs = {}
    for volume in spec.get("volumes") or ():
        size = _quantity((volume.get("emptyDir") or {}).get("sizeLimit"))
        if size is not None and size[0] > 0 and (volume.get("emptyDir") or {}).get("medium") != "Memory":
            empty_dirs[volume["name"]] = size
    return pod_limit, empty_dirs


def violation(pod: dict[str, Any], directory: Path) -> str:
    """Upstream's eviction message when the Pod's storage is over a limit, else ''."""
    pod_limit, empty_dirs = limits(pod)
    for name, (size, text) in empty_dirs.items():
        if disk_usage(volume_directory(directory, {"name": name, "emptyDir": {}})) > size:
            return EMPTY_DIR_MESSAGE.format(name, text)
    if pod_limit is not None and disk_usage(directory) > pod_limit[0]:
        return POD_MESSAGE.format(pod_limit[1])
    for name, (size, text) in container_limits(pod).items():  # its writable layer and its logs
        if sum(disk_usage(directory / part / name) for part in ("rootfs", "scratch", "logs")) > size:
            return CONTAINER_MESSAGE.format(name, text)
    return ""


class MeasuredPod(Protocol):
    """What the storage watch uses of a Pod's worker."""

    pod: dict[str, Any]
    name: str
    namespace: str
    terminating: bool
    finished: asyncio.Event

    @property
    def directory(self) -> Path: ...

    def evict(self, message: str) -> None: ...


def watch(worker: MeasuredPod, interval: float) -> asyncio.Task[None] | None:
    """Measure the Pod's storage every `interval` seconds while it runs, when it has limits (None otherwise)."""
    pod_limit, empty_dirs = limits(worker.pod)
    if pod_limit is None and not empty_dirs:
        return None
    return asyncio.create_task(_watch(worker, interval), name=f"storage {worker.namespace}/{worker.name}")


async def _watch(worker: MeasuredPod, interval: float) -> None:
    loop = asyncio.get_running_loop()
    while not worker.terminating and not worker.finished.is_set():
        await asyncio.sleep(interval)
        message = await loop.run_in_executor(None, violation, worker.pod, worker.directory)
        if message:
            log.info("evicting pod %s/%s: %s", worker.namespace, worker.name, message)
            worker.evict(message)
            return
