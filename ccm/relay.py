"""The data plane of the fake cloud's load balancers: a TCP listener that joins each accepted connection to a
backend (the first one of `candidates(client)` that accepts), and a UDP listener that relays each client's flow to
one backend. Both work on asyncio transports directly (no stream objects): data is written on as it arrives,
a full outgoing buffer pauses reading on the other side (backpressure), a half-close is passed on as a
half-close, and a connection no backend takes is reset at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
import time
from collections.abc import Callable
from typing import Any

Backend = tuple[str, int]
Recorder = Callable[[Any, Backend, Any], None]  # (client address, backend, the relay's own address towards it)
DIAL_TIMEOUT = 1.0
WRITE_HIGH_WATER = 1 << 20
UDP_IDLE_TIMEOUT = 30.0


def reset(transport: asyncio.BaseTransport) -> None:
    """Close a TCP connection with RST (SO_LINGER 0), so the client sees `connection reset` at once."""
    sock = transport.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    transport.abort()  # type: ignore[attr-defined]


class _Pipe(asyncio.Protocol):
    """One side of a relayed connection; `peer` is the other side."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.peer: _Pipe | None = None
        self.eof = False
        self.closed = False
        self.early: list[bytes] = []  # what arrived before the other side was joined

    def join(self, peer: _Pipe) -> None:
        self.peer = peer
        if self.early and peer.transport is not None:
            peer.transport.write(b"".join(self.early))
        self.early.clear()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        transport.set_write_buffer_limits(high=WRITE_HIGH_WATER)  # type: ignore[attr-defined]

    def data_received(self, data: bytes) -> None:
        if self.peer is None:
            self.early.append(data)
        elif self.peer.transport is not None:
            self.peer.transport.write(data)

    def eof_received(self) -> bool:
        self.eof = True
        peer = self.peer
        if peer is None:
            return True  # passed on when joined
        if peer.transport is None or peer.transport.is_closing():
            return False
        if peer.transport.can_write_eof():
            peer.transport.write_eof()  # sent once what is buffered has gone
        if peer.eof:  # both directions are finished
            peer.transport.close()
            return False
        return True

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        peer = self.peer
        if peer is not None and peer.transport is not None and not peer.transport.is_closing():
            if exc is not None:
                reset(peer.transport)
            else:
                peer.transport.close()  # flushes what is buffered first

    def pause_writing(self) -> None:
        if self.peer is not None and self.peer.transport is not None:
            self.peer.transport.pause_reading()

    def resume_writing(self) -> None:
        if self.peer is not None and self.peer.transport is not None and not self.peer.transport.is_closing():
            self.peer.transport.resume_reading()


class _Front(_Pipe):
    """The accepted (client) side: reading waits until a backend has been dialled."""

    def __init__(self, listener: TcpListener) -> None:
        super().__init__()
        self.listener = listener

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        transport.pause_reading()  # type: ignore[attr-defined]
        self.listener.accepted += 1
        task = asyncio.get_running_loop().create_task(self._dial())
        self.listener.dialling.add(task)
        task.add_done_callback(self.listener.dialling.discard)

    async def _dial(self) -> None:
        loop = asyncio.get_running_loop()
        assert self.transport is not None
        client = self.transport.get_extra_info("peername")
        for backend in self.listener.candidates(client):
            if self.closed:
                return
            try:
                async with asyncio.timeout(DIAL_TIMEOUT):  # no extra task per connection, unlike wait_for
                    _, back = await loop.create_connection(_Pipe, *backend)
            except (OSError, TimeoutError):
                self.listener.on_failure(backend)
                continue
            if self.closed:
                back.transport.close()  # type: ignore[union-attr]
                return
            self.join(back)
            back.join(self)
            if back.eof:
                back.eof_received()
            if back.closed:
                self.transport.close()
                return
            self.listener.record(client, backend, back.transport.get_extra_info("sockname"))  # type: ignore[union-attr]
            self.transport.resume_reading()
            return
        self.listener.refused += 1
        reset(self.transport)


class TcpListener:
    """Accepts on ip:port and relays every connection to a backend from `candidates(client)` (tried in order)."""

    def __init__(self, ip: str, port: int, candidates: Callable[[Any], list[Backend]],
                 on_failure: Callable[[Backend], None], on_connection: Recorder) -> None:
        self.ip, self.port = ip, port
        self.candidates = candidates
        self.on_failure = on_failure
        self.record = on_connection
        self.server: asyncio.Server | None = None
        self.dialling: set[asyncio.Task[None]] = set()
        self.accepted = self.refused = 0

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        self.server = await loop.create_server(lambda: _Front(self), self.ip, self.port, reuse_address=True,
                                               backlog=1024)

    async def close(self) -> None:
        """Stop accepting; connections already relayed go on until either side closes them."""
        if self.server is not None:
            self.server.close()
            self.server = None
        for task in list(self.dialling):
            task.cancel()


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

    async def close(self) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
        for client in list(self.flows):
            self.drop(client)
        if self.transport is not None:
            self.transport.close()
            self.transport = None
