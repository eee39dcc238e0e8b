"""TCP forwarding: a listener per (address, port) that relays every accepted connection to an endpoint.

The relay itself (splice(2), backpressure, half-close, resets) is `mini_kube.network.relay`; this is
kube-proxy's policy on top: the endpoint for a connection comes from the ServicePort's balancer (round robin,
session affinity, traffic policies), an endpoint that refuses is skipped for the next one (one try per endpoint,
with growing timeouts, as upstream's userspace proxy), sockets are made where the endpoint lives (the cluster
network namespace or the host), and every forwarded or refused connection is recorded. No endpoint, or none
that accepts in time, resets the client at once."""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Iterator
from typing import Any

from mini_kube.network.relay import Address, Attempt, TcpRelay

from .model import Endpoint, PortRouting

log = logging.getLogger("mini-kube.proxy")
CONNECT_TIMEOUTS = (0.25, 0.5, 1.0, 2.0)  # one try per endpoint, as upstream's userspace proxy


class TcpListener(TcpRelay):
    """Accepts on one socket for one ServicePort: `kind` "internal" (a ClusterIP) or "external" (a NodePort)."""

    protocol = "TCP"

    def __init__(self, state: PortRouting, kind: str, sock: socket.socket, maker: Any) -> None:
        super().__init__(sock, state.port.name)
        self.state = state
        self.kind = kind
        self.maker = maker
        self.address: tuple[str, int] = sock.getsockname()[:2]

    def targets(self, peer: Any) -> Iterator[Attempt]:
        tried: list[Endpoint] = []
        for timeout in CONNECT_TIMEOUTS:
            endpoint = self.state.pick(self.kind, peer[0], tuple(tried))
            if endpoint is None:
                return
            tried.append(endpoint)
            yield endpoint, endpoint.address, timeout

    def dial_socket(self, target: Endpoint, address: Address) -> socket.socket:
        return self.maker.socket(target.ip, socket.SOCK_STREAM)

    def dial_failed(self, target: Endpoint, code: int) -> None:
        log.debug("%s: endpoint %s failed: %s", self.state.port.name, target, os.strerror(code))

    def connected(self, peer: Any, target: Endpoint, sock: socket.socket) -> None:
        self.state.note(self, peer, target)

    def gave_up(self, peer: Any) -> None:
        self.state.note(self, peer, None)

    def endpoints_changed(self) -> None:
        """Nothing to do: new connections read the balancer; connections in flight are left alone."""
