"""UDP forwarding: a socket per (address, port) whose every client address gets a session to the endpoint
chosen for it (`mini_kube.network.udp_relay`). kube-proxy's policy on top: the endpoint comes from the
ServicePort's balancer, sockets are made where the endpoint lives, every session (or refused client) is
recorded, and sessions end at once when their endpoint leaves the Service (as kube-proxy clears the UDP
conntrack entries of a removed endpoint), so the next datagram goes to a live endpoint."""

from __future__ import annotations

import socket
from typing import Any

from mini_kube.network.udp_relay import UdpRelay

from .model import Endpoint, PortRouting


class UdpListener(UdpRelay):
    """Receives on one socket for one ServicePort: `kind` "internal" (a ClusterIP) or "external" (a NodePort)."""

    protocol = "UDP"

    def __init__(self, state: PortRouting, kind: str, sock: socket.socket, maker: Any, timeout: float = 30.0) -> None:
        super().__init__(sock, state.port.name, timeout)
        self.state = state
        self.kind = kind
        self.maker = maker
        self.address: tuple[str, int] = sock.getsockname()[:2]

    def choose(self, client: Any) -> tuple[Endpoint, tuple[str, int]] | None:
        endpoint = self.state.pick(self.kind, client[0])
        self.state.note(self, client, endpoint)
        return (endpoint, endpoint.address) if endpoint is not None else None

    def dial_socket(self, target: Endpoint, address: tuple[str, int]) -> socket.socket:
        return self.maker.socket(target.ip, socket.SOCK_DGRAM)

    def endpoints_changed(self) -> None:
        """End the sessions whose endpoint is no longer among this listener's endpoints."""
        if self.sessions:
            alive = self.state.usable(self.kind)
            for session in [s for s in self.sessions.values() if s.target not in alive]:
                self.end(session)
