"""Host ports a Pod claims on its node, and when two claims conflict (the scheduler's NodePorts filter and the
kubelet's admission share this rule): the same port and protocol, and the same hostIP or either one 0.0.0.0."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

HostPort = tuple[str, str, int]  # hostIP, protocol, hostPort


def host_ports(pod: dict[str, Any]) -> list[HostPort]:
    """(hostIP, protocol, hostPort) of every container port that claims a host port."""
    spec = pod.get("spec") or {}
    ports = []
    for container in list(spec.get("containers") or ()) + list(spec.get("initContainers") or ()):
        for port in container.get("ports") or ():
            if port.get("hostPort"):
                ports.append((port.get("hostIP") or "0.0.0.0", port.get("protocol") or "TCP", int(port["hostPort"])))
    return ports


def ports_conflict(wanted: Iterable[HostPort], used: Iterable[HostPort]) -> bool:
    used = list(used)
    return any(port == used_port and protocol == used_protocol and (ip == used_ip or "0.0.0.0" in (ip, used_ip))
               for ip, protocol, port in wanted for used_ip, used_protocol, used_port in used)
