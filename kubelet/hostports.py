"""Host ports: a container port with a `hostPort` is served on the Pod's node, as the CNI portmap plugin serves it
with DNAT rules, here by relays in the kubelet's process (network/relay.py) to PodIP:containerPort:

- in the node's network namespace (the one hostNetwork Pods share), on hostIP:hostPort (all its addresses when
  hostIP is empty), so 127.0.0.1:hostPort and NodeIP:hostPort answer there as on a real node;
- in the cluster network, on the node's address when hostIP is empty or that address, where Pods' traffic to the
  node's address goes (network/cluster.py), so other Pods reach NodeIP:hostPort too;
- on the machine, on the node's address likewise (only that address: the machine's own namespace uses only
  127.0.0.0/8), where the node's NodePorts are, dialling the Pod from the cluster network.

TCP and UDP. A port that cannot be bound in the node's namespace or the cluster network (a hostNetwork Pod
already listens there) fails the Pod's sandbox, which the kubelet makes again later, as a runtime's portmap
failure does; on the machine, where the node's own servers (the kubelet's, kube-proxy's) share the address, it is
only logged. hostNetwork Pods have none: their ports are the node's already. The relays end with the Pod's
sandbox."""

from __future__ import annotations

import logging
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from mini_kube.network.namespaces import socket_in
from mini_kube.network.relay import Address, Attempt, TcpRelay, family_of, listen_on
from mini_kube.network.udp_relay import UdpRelay

log = logging.getLogger("mini-kube.kubelet")
CONNECT_TIMEOUT = 2.0


@dataclass(frozen=True)
class Mapping:
    """One container port's hostPort: (hostIP, hostPort, protocol) to the Pod's containerPort."""

    host_ip: str  # "" for all the node's addresses
    host_port: int
    protocol: str
    container_port: int


def mappings(pod: dict[str, Any]) -> list[Mapping]:
    """The Pod's hostPort mappings (TCP and UDP; SCTP is not relayed), none for a hostNetwork Pod."""
    spec = pod.get("spec") or {}
    if spec.get("hostNetwork"):
        return []
    found: list[Mapping] = []
    for container in list(spec.get("containers") or ()) + list(spec.get("initContainers") or ()):
        for port in container.get("ports") or ():
            protocol = port.get("protocol") or "TCP"
            if port.get("hostPort") and protocol in ("TCP", "UDP"):
                host_ip = port.get("hostIP") or ""
                found.append(Mapping("" if host_ip in ("0.0.0.0", "::") else host_ip, int(port["hostPort"]),
                                     protocol, int(port.get("containerPort") or port["hostPort"])))
    return found


class _TcpPort(TcpRelay):
    """Every connection to the Pod's address, dialled from the namespace `netns`."""

    def __init__(self, sock: socket.socket, netns: str, target: Address) -> None:
        super().__init__(sock, f"hostPort {sock.getsockname()[1]} -> {target[0]}:{target[1]}")
        self.netns = netns
        self.target = target

    def targets(self, peer: Any) -> Iterator[Attempt]:
        yield self.target, self.target, CONNECT_TIMEOUT

    def dial_socket(self, target: Any, address: Address) -> socket.socket:
        return socket_in(self.netns, family_of(address[0]), socket.SOCK_STREAM | socket.SOCK_NONBLOCK)


class _UdpPort(UdpRelay):
    """Every client's datagrams to the Pod's address, sent from the namespace `netns`."""

    def __init__(self, sock: socket.socket, netns: str, target: Address) -> None:
        super().__init__(sock, f"hostPort {sock.getsockname()[1]}/UDP -> {target[0]}:{target[1]}")
        self.netns = netns
        self.target = target

    def choose(self, client: Any) -> tuple[Any, Address]:
        return self.target, self.target

    def dial_socket(self, target: Any, address: Address) -> socket.socket:
        return socket_in(self.netns, family_of(address[0]), socket.SOCK_DGRAM | socket.SOCK_NONBLOCK)


Relay = _TcpPort | _UdpPort


class HostPorts:
    """The relays of a node's Pods' hostPorts, by Pod UID. `node` is the node's namespaces (NodeNamespaces),
    `cluster_netns` the cluster network's namespace, `address` the node's address."""

    def __init__(self, node: Any, cluster_netns: str | None, address: str) -> None:
        self.node = node
        self.cluster_netns = cluster_netns
        self.address = address
        self.relays: dict[str, list[Relay]] = {}

    async def open(self, uid: str, pod: dict[str, Any], ip: str) -> None:
        """Serve the Pod's hostPorts (at `ip`, its address); OSError, with nothing left open, when one cannot be."""
        wanted = mappings(pod)
        if not wanted:
            return
        holder = await self.node.ensure()
        opened: list[Relay] = []
        try:
            for mapping in wanted:
                target = (ip, mapping.container_port)
                opened.append(await _relay(holder.netns, holder.netns, mapping.host_ip or "0.0.0.0", mapping, target))
                if not (self.cluster_netns and self.address and mapping.host_ip in ("", self.address)):
                    continue
                opened.append(await _relay(self.cluster_netns, self.cluster_netns, self.address, mapping, target))
                try:
                    opened.append(await _relay(None, self.cluster_netns, self.address, mapping, target))
                except OSError as exc:
                    meta = pod.get("metadata") or {}
                    log.warning("pod %s/%s: %s on the machine (reached in the cluster network only)",
                                meta.get("namespace"), meta.get("name"), exc)
        except OSError:
            for relay in opened:
                relay.close()
            raise
        self.relays[uid] = opened

    def close(self, uid: str) -> None:
        for relay in self.relays.pop(uid, ()):
            relay.close()

    def close_all(self) -> None:
        for uid in list(self.relays):
            self.close(uid)


async def _relay(netns: str | None, dial_netns: str, bind_ip: str, mapping: Mapping, target: Address) -> Relay:
    """A relay listening in `netns` (None: the machine's own namespace) on bind_ip:hostPort, dialling `target`
    from `dial_netns`."""
    kind = socket.SOCK_STREAM if mapping.protocol == "TCP" else socket.SOCK_DGRAM
    try:
        sock = listen_on(socket_in(netns, family_of(bind_ip), kind), bind_ip, mapping.host_port)
    except OSError as exc:
        raise OSError(exc.errno, f"cannot bind hostPort {bind_ip}:{mapping.host_port}/{mapping.protocol}: "
                                 f"{exc.strerror}") from None
    relay: Relay = _TcpPort(sock, dial_netns, target) if kind == socket.SOCK_STREAM else \
        _UdpPort(sock, dial_netns, target)
    await relay.start()
    log.debug("%s on %s", relay.name, bind_ip)
    return relay
