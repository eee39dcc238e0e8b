"""The Node object a kubelet registers and the status it keeps posting: capacity and allocatable, addresses,
daemon endpoints, nodeInfo and the four conditions, with upstream's reasons and messages."""

from __future__ import annotations

import os
import platform
import uuid
from functools import cache
from typing import Any

from mini_kube.machinery.times import now_rfc3339

from .userns import host_supports

KUBELET_VERSION = "v1.32.0"
ARCH = {"x86_64": "amd64", "aarch64": "arm64", "armv7l": "arm"}.get(platform.machine(), platform.machine())

CONDITIONS = [
    ("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
    ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
    ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
    ("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
]


@cache
def _os_image() -> str:
    try:
        with open("/etc/os-release", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("PRETTY_NAME="):
                    return line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return platform.system()


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read().strip().replace("-", "")
    except OSError:
        return uuid.uuid4().hex


def machine_memory() -> int:
    try:
        with open("/proc/meminfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 8 << 30


def default_capacity() -> dict[str, str]:
    return {"cpu": str(os.cpu_count() or 1), "ephemeral-storage": "61202244Ki", "hugepages-1Gi": "0",
            "hugepages-2Mi": "0", "memory": f"{machine_memory() // 1024}Ki", "pods": "110"}


def node_object(name: str, address: str, pod_cidr: str, port: int, capacity: dict[str, str],
                labels: dict[str, str], taints: list[dict[str, Any]], runtime: str) -> dict[str, Any]:
    """The Node as first registered."""
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": {
            "beta.kubernetes.io/arch": ARCH, "beta.kubernetes.io/os": "linux", "kubernetes.io/arch": ARCH,
            "kubernetes.io/hostname": name, "kubernetes.io/os": "linux", **labels},
            "annotations": {"node.alpha.kubernetes.io/ttl": "0",
                            "volumes.kubernetes.io/controller-managed-attach-detach": "true"}},
        "spec": {"podCIDR": pod_cidr, "podCIDRs": [pod_cidr], **({"taints": taints} if taints else {})},
        "status": node_status(name, address, port, capacity, runtime, None),
    }


def node_status(name: str, address: str, port: int, capacity: dict[str, str], runtime: str,
                previous: dict[str, Any] | None) -> dict[str, Any]:
    """The status to post; condition transition times kept from `previous` when unchanged."""
    stamp = now_rfc3339()
    old = {c.get("type"): c for c in (previous or {}).get("conditions") or ()}
    conditions = []
    for kind, status, reason, message in CONDITIONS:
        before = old.get(kind) or {}
        conditions.append({"lastHeartbeatTime": stamp,
                           "lastTransitionTime": before.get("lastTransitionTime") if before.get("status") == status
                           else stamp, "message": message, "reason": reason, "status": status, "type": kind})
    features = {"features": {"supplementalGroupsPolicy": True}, "runtimeHandlers": [{"name": "", "features": {
        "recursiveReadOnlyMounts": False, "userNamespaces": host_supports()}}]} if runtime == "process" else {}
    return {
        **features,  # what the runtime supports: the process runtime applies supplementalGroupsPolicy, and user
        # namespaces where the kernel can (recursive read-only mounts it does not make)
        "addresses": [{"address": address, "type": "InternalIP"}, {"address": name, "type": "Hostname"}],
        "allocatable": dict(capacity), "capacity": dict(capacity), "conditions": conditions,
        "daemonEndpoints": {"kubeletEndpoint": {"Port": port}},
        "images": [],
        "nodeInfo": {"architecture": ARCH, "bootID": _read("/proc/sys/kernel/random/boot_id"),
                     "containerRuntimeVersion": f"{runtime}://0.1.0", "kernelVersion": platform.release(),
                     "kubeProxyVersion": KUBELET_VERSION, "kubeletVersion": KUBELET_VERSION,
                     "machineID": _read("/etc/machine-id"), "operatingSystem": "linux", "osImage": _os_image(),
                     "systemUUID": str(uuid.uuid5(uuid.NAMESPACE_DNS, name))},
    }


_NODE_EVENTS = {("MemoryPressure", "False"): "NodeHasSufficientMemory",
                ("MemoryPressure", "True"): "NodeHasInsufficientMemory",
                ("DiskPressure", "False"): "NodeHasNoDiskPressure", ("DiskPressure", "True"): "NodeHasDiskPressure",
                ("PIDPressure", "False"): "NodeHasSufficientPID", ("PIDPressure", "True"): "NodeHasInsufficientPID"}


def status_events(previous: dict[str, Any] | None, status: dict[str, Any]) -> list[str]:
    """The reasons of the events upstream's node status setters record as `status` replaces `previous`: a
    pressure condition new or changed (NodeHasSufficientMemory...), Ready changed (NodeReady, NodeNotReady; not
    when it is new)."""
    old = {c.get("type"): c.get("status") for c in (previous or {}).get("conditions") or ()}
    reasons = []
    for condition in status.get("conditions") or ():
        kind, value = condition["type"], condition["status"]
        if old.get(kind) == value:
            continue
        if kind == "Ready":
            if kind in old:
                reasons.append("NodeReady" if value == "True" else "NodeNotReady")
        elif (kind, value) in _NODE_EVENTS:
            reasons.append(_NODE_EVENTS[kind, value])
    return reasons
