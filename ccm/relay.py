"""The data plane of the fake cloud's load balancers: a TCP listener that joins each accepted connection to a
backend (the first one of `candidates(client)` that accepts), and a UDP listener that relays each client's flow
to one backend.

TCP is `mini_kube.network.relay` (splice(2), backpressure, half-close, resets); the cloud's policy on top is
the order of the backends (`candidates`, from the load balancer), one second per try, a backend that refuses
reported (`on_failure`: it is taken out until its health check passes again), and every relayed connection
recorded (`on_connection`). A connection no backend takes is reset at once.

UDP is `mini_kube.network.udp_relay`: a client's flow goes to the first of its candidates and ends after
`idle_timeout` seconds without traffic or when the backend answers with ICMP unreachable.
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator
from typing import Any

from mini_kube.network.relay import Attempt, TcpRelay, listen_on
from mini_kube.network.udp_relay import Session, UdpRelay

Backend = tuple[str, int]
Recorder = Callable[[Any, Backend, Any], None]  # (client address, backend, the relay's own address towards it)
DIAL_TIMEOUT = 1.0
UDP_IDLE_TIMEOUT = 30.0


class TcpListener(TcpRelay):
    """Accepts on ip:port and relays every connection to a backend from `candidates(client)` (tried in order)."""

    def __init__(self, ip: str, port: int, candidates: Callable[[Any], list[Backend]],
                 on_failure: Callable[[Backend], None], on_connection: Recorder) -> None:
        super().__init__(None, f"{ip}:{port}")
        self.ip, self.port = ip, port
        self.candidates = candidates
        self.on_failure = on_failure
        self.record = on_connection

    async def start(self) -> None:
        self.sock = listen_on(socket.socket(socket.AF_INET, socket.SOCK_STREAM), self.ip, self.port)
        await super().start()

    def targets(self, peer: Any) -> Iterator[Attempt]:
        return ((backend, backend, DIAL_TIMEOUT) for backend in self.candidates(peer))

    def dial_failed(self, target: Backend, code: int) -> None:
        self.on_failure(target)

    def connected(self, peer: Any, target: Backend, sock: socket.socket) -> None:
        self.record(peer, target, sock.getsockname())


class UdpListener(UdpRelay):
    """Receives on ip:port; each client address is a flow kept on one backend until idle for a while."""

    def __init__(self, ip: str, port: int, candidates: Callable[[Any], list[Backend]],
                 on_connection: Recorder, idle_timeout: float = UDP_IDLE_TIMEOUT) -> None:
        super().__init__(None, f"{ip}:{port}", idle_timeout, min(idle_timeout / 2, 5.0))
        self.ip, self.port = ip, port
        self.candidates = candidates
        self.record = on_connection

    async def start(self) -> None:
        self.sock = listen_on(socket.socket(socket.AF_INET, socket.SOCK_DGRAM), self.ip, self.port)
        await super().start()

    def choose(self, client: Any) -> tuple[Backend, Backend] | None:
        backends = self.candidates(client)
        return (backends[0], backends[0]) if backends else None  # nothing healthy: dropped, as a cloud LB does

    def opened(self, session: Session) -> None:
        self.record(session.client, session.target, session.sock.getsockname())
