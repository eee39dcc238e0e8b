"""The data plane of the fake cloud's load balancers: a TCP listener that joins each accepted connection to a
backend (the first one of `candidates(client)` that accepts), and a UDP listener that relays each client's flow
to one backend.

TCP is `mini_kube.network.relay` (splice(2), backpressure, half-close, resets); the cloud's policy on top is
the order of the backends (`candidates`, from the load balancer), one second per try, a backend that refuses
reported (`on_failure`: it is taken out until its health check passes again), and every relayed connection
recorded (`on_connection`). A connection no backend takes is reset at once.
"""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Callable, Iterator
from typing import Any

from mini_kube.network.relay import Attempt, TcpRelay, listen_on

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


class _UdpFlow(asyncio.DatagramProtocol):
    """One client's flow: a socket connected to its backend, whose answers go back to the client."""

    def __init__(self, listener: UdpListener, client: Any, backend: Backend) -> None:
        self.listener, self.client, self.backend = listener, client, backend
        self.transport: asyncio.DatagramTransport | None = None
        self.pending: list[bytes] = []
        self.used = time.monotonic()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        self.listener.record(self.client, self.backend, transport.get_extra_info("sockname"))
        for data in self.pending:
            self.transport.sendto(data)
        self.pending.clear()

    def datagram_received(self, data: bytes, addr: Any) -> None:
        self.used = time.monotonic()
        if self.listener.transport is not None:
            self.listener.transport.sendto(data, self.client)

    def error_received(self, exc: Exception) -> None:  # ICMP port unreachable: the backend is gone
        self.listener.drop(self.client)

    def send(self, data: bytes) -> None:
        self.used = time.monotonic()
        if self.transport is None:
            self.pending.append(data)
        else:
            self.transport.sendto(data)

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()


class UdpListener(asyncio.DatagramProtocol):
    """Receives on ip:port; each client address is a flow kept on one backend until idle for a while."""

    def __init__(self, ip: str, port: int, candidates: Callable[[Any], list[Backend]],
                 on_connection: Recorder, idle_timeout: float = UDP_IDLE_TIMEOUT) -> None:
        self.ip, self.port = ip, port
        self.candidates = candidates
        self.record = on_connection
        self.idle_timeout = idle_timeout
        self.transport: asyncio.DatagramTransport | None = None
        self.flows: dict[Any, _UdpFlow] = {}
        self._sweeper: asyncio.Task[None] | None = None

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        await loop.create_datagram_endpoint(lambda: self, local_addr=(self.ip, self.port), reuse_port=False)
        self._sweeper = loop.create_task(self._sweep())

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def datagram_received(self, data: bytes, addr: Any) -> None:
        flow = self.flows.get(addr)
        if flow is None:
            backends = self.candidates(addr)
            if not backends:
                return  # nothing healthy: dropped, as a cloud load balancer does
            flow = self.flows[addr] = _UdpFlow(self, addr, backends[0])
            loop = asyncio.get_running_loop()
            task = loop.create_task(loop.create_datagram_endpoint(lambda: flow, remote_addr=backends[0]))
            task.add_done_callback(lambda t: t.cancelled() or t.exception() and self.drop(addr))
        flow.send(data)

    def drop(self, client: Any) -> None:
        flow = self.flows.pop(client, None)
        if flow is not None:
            flow.close()

    async def _sweep(self) -> None:
        while True:
            await asyncio.sleep(min(self.idle_timeout / 2, 5.0))
            now = time.monotonic()
            for client, flow in list(self.flows.items()):
                if now - flow.used > self.idle_timeout:
                    self.drop(client)

    def close(self) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
        for client in list(self.flows):
            self.drop(client)
        if self.transport is not None:
            self.transport.close()
            self.transport = None
