"""Sysctl names as Kubernetes reads them (component-helpers' node/util/sysctl): the dotted form of a name given
with slashes, the Linux namespace a sysctl belongs to, the kubelet's safe set, and the /proc/sys path."""

from __future__ import annotations

import re

SAFE_SYSCTLS = frozenset((  # the kubelet's SafeSysctlAllowlist in 1.32 (the safe set of Pod Security's baseline)
    "kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.tcp_syncookies", "net.ipv4.ping_group_range",
    "net.ipv4.ip_unprivileged_port_start", "net.ipv4.ip_local_reserved_ports", "net.ipv4.tcp_keepalive_time",
    "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl", "net.ipv4.tcp_keepalive_probes", "net.ipv4.tcp_rmem",
    "net.ipv4.tcp_wmem"))
IPC_SYSCTLS = frozenset(("kernel.sem", "kernel.shmall", "kernel.shmmax", "kernel.shmmni", "kernel.shm_rmid_forced",
                         "kernel.shm", "kernel.msgmax", "kernel.msgmnb", "kernel.msgmni", "kernel.msg"))
NAMESPACE_PREFIXES = (("net.", "Net"), ("fs.mqueue.", "IPC"))
SWAP_SEPARATORS = str.maketrans("./", "/.")


def normalize_name(name: str) -> str:
    """A sysctl name with dots between segments: when its first separator is a slash, '/' and '.' swap."""
    first = re.search(r"[./]", name)
    if first is None or first.group() == ".":
        return name
    return name.translate(SWAP_SEPARATORS)


def namespace_of(name: str) -> str:
    """The Linux namespace a sysctl belongs to ("Net", "IPC"), or "" when it is not namespaced or unknown."""
    name = normalize_name(name).split("*", 1)[0]
    if name in IPC_SYSCTLS:
        return "IPC"
    return next((ns for prefix, ns in NAMESPACE_PREFIXES if name.startswith(prefix)), "")


def proc_path(name: str) -> str:
    """Where the sysctl is under /proc/sys (`net.ipv4.ip_forward` -> `/proc/sys/net/ipv4/ip_forward`)."""
    return "/proc/sys/" + normalize_name(name).translate(SWAP_SEPARATORS)
