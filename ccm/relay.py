"""The data plane of the fake cloud's load balancers: a TCP listener that joins each accepted connection to a
backend (the first one of `candidates(client)` that accepts), and a UDP listener that relays each client's flow
to one backend.

TCP runs on the event loop's readiness callbacks with raw sockets (no task, transport or stream per
connection): each direction is a kernel pipe filled and drained with splice(2), so bytes never enter Python;
a full destination stops reading from the source (backpressure), an EOF is passed on as a half-close once the
pipe is empty, an error on either side resets both, and a connection no backend takes is reset at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import fcntl
import os
import socket
import struct
import time
from collections.abc import Callable
from typing import Any

Backend = tuple[str, int]
Recorder = Callable[[Any, Backend, Any], None]  # (client address, backend, the relay's own address towards it)
DIAL_TIMEOUT = 1.0
PIPE_SIZE = 1 << 20
ACCEPT_BATCH = 64
_SPLICE_FLAGS = os.SPLICE_F_MOVE | os.SPLICE_F_NONBLOCK
_LINGER_RST = struct.pack("ii", 1, 0)
_F_SETPIPE_SZ = getattr(fcntl, "F_SETPIPE_SZ", 1031)
UDP_IDLE_TIMEOUT = 30.0


def reset(transport: asyncio.BaseTransport) -> None:
    """Close a TCP transport with RST (SO_LINGER 0), so the client sees `connection reset` at once."""
    sock = transport.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, _LINGER_RST)
    transport.abort()  # type: ignore[attr-defined]


def reset_socket(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, _LINGER_RST)
    sock.close()


class _Flow:
    """One direction of a relayed connection: src -> a kernel pipe -> dst, moved with splice(2) when the event
    loop says src is readable (or dst writable again); bytes never enter Python."""

    __slots__ = ("conn", "src", "dst", "read_fd", "write_fd", "size", "pending", "eof", "done", "reading",
                 "waiting")

    def __init__(self, conn: _Relayed, src: socket.socket, dst: socket.socket) -> None:
        self.conn, self.src, self.dst = conn, src.fileno(), dst.fileno()
        self.read_fd, self.write_fd = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        try:
            self.size = fcntl.fcntl(self.write_fd, _F_SETPIPE_SZ, PIPE_SIZE)
        except OSError:
            self.size = 65536
        self.pending = 0
        self.eof = self.done = self.reading = self.waiting = False

    def read_more(self) -> None:
        if not self.reading:
            self.reading = True
            self.conn.loop.add_reader(self.src, self.readable)

    def _pause(self) -> None:
        if self.reading:
            self.reading = False
            self.conn.loop.remove_reader(self.src)

    def readable(self) -> None:
        if self.pending >= self.size:  # the pipe is full: wait for the destination
            self._pause()
            return
        try:
            moved = os.splice(self.src, self.write_fd, self.size - self.pending, flags=_SPLICE_FLAGS)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self.conn.close(reset=True)
            return
        if moved == 0:
            self.eof = True
            self._pause()
        self.pending += moved
        self.flush()

    def flush(self) -> None:
        while self.pending:
            try:
                self.pending -= os.splice(self.read_fd, self.dst, self.pending, flags=_SPLICE_FLAGS)
            except (BlockingIOError, InterruptedError):  # dst is full: backpressure until it drains
                self._pause()
                if not self.waiting:
                    self.waiting = True
                    self.conn.loop.add_writer(self.dst, self.writable)
                return
            except OSError:
                self.conn.close(reset=True)
                return
        if self.eof:
            if not self.done:  # half-close: pass the EOF on once everything before it has gone
                self.done = True
                self.conn.half_closed(self.dst)
        elif self.pending < self.size:
            self.read_more()

    def writable(self) -> None:
        self.waiting = False
        self.conn.loop.remove_writer(self.dst)
        self.flush()

    def close(self) -> None:
        self._pause()
        if self.waiting:
            self.waiting = False
            self.conn.loop.remove_writer(self.dst)
        os.close(self.read_fd)
        os.close(self.write_fd)


class _Relayed:
    """A client socket joined to a backend socket, both ways."""

    __slots__ = ("loop", "client", "backend", "flows", "ended", "closed")

    def __init__(self, loop: asyncio.AbstractEventLoop, client: socket.socket, backend: socket.socket) -> None:
        self.loop, self.client, self.backend = loop, client, backend
        self.flows = (_Flow(self, client, backend), _Flow(self, backend, client))
        self.ended = 0
        self.closed = False
        for flow in self.flows:
            flow.read_more()

    def half_closed(self, fd: int) -> None:
        with contextlib.suppress(OSError):
            (self.client if fd == self.client.fileno() else self.backend).shutdown(socket.SHUT_WR)
        self.ended += 1
        if self.ended == 2:
            self.close()

    def close(self, reset: bool = False) -> None:
        """Both directions ended (a FIN each way), or an error on either side (then both are reset)."""
        if self.closed:
            return
        self.closed = True
        for flow in self.flows:
            flow.close()
        for sock in (self.client, self.backend):
            if reset:
                reset_socket(sock)
            else:
                sock.close()


class _Dial:
    """Connects an accepted client to the first backend that accepts (non-blocking, each try bounded)."""

    __slots__ = ("listener", "client", "peer", "backends", "sock", "timer", "backend")

    def __init__(self, listener: TcpListener, client: socket.socket, peer: Any) -> None:
        self.listener, self.client, self.peer = listener, client, peer
        self.backends = iter(listener.candidates(peer))
        self.sock: socket.socket | None = None
        self.timer: asyncio.TimerHandle | None = None
        self.backend: Backend | None = None

    def next(self) -> None:
        self.backend = next(self.backends, None)
        if self.backend is None:
            self.listener.refused += 1
            reset_socket(self.client)
            return
        sock = self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setblocking(False)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        code = sock.connect_ex(self.backend)
        if code == 0:
            self.connected()
        elif code in (errno.EINPROGRESS, errno.EAGAIN):
            self.listener.loop.add_writer(sock.fileno(), self.writable)
            self.timer = self.listener.loop.call_later(DIAL_TIMEOUT, self.timed_out)
        else:
            self.failed()

    def writable(self) -> None:
        assert self.sock is not None
        self.listener.loop.remove_writer(self.sock.fileno())
        if self.timer is not None:
            self.timer.cancel()
        if self.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR):
            self.failed()
        else:
            self.connected()

    def timed_out(self) -> None:
        assert self.sock is not None
        self.listener.loop.remove_writer(self.sock.fileno())
        self.failed()

    def failed(self) -> None:
        assert self.backend is not None
        self.listener.on_failure(self.backend)
        if self.sock is not None:
            self.sock.close()
            self.sock = None
        self.next()

    def connected(self) -> None:
        assert self.sock is not None and self.backend is not None
        self.listener.record(self.peer, self.backend, self.sock.getsockname())
        _Relayed(self.listener.loop, self.client, self.sock)


class TcpListener:
    """Accepts on ip:port and relays every connection to a backend from `candidates(client)` (tried in order)."""

    def __init__(self, ip: str, port: int, candidates: Callable[[Any], list[Backend]],
                 on_failure: Callable[[Backend], None], on_connection: Recorder) -> None:
        self.ip, self.port = ip, port
        self.candidates = candidates
        self.on_failure = on_failure
        self.record = on_connection
        self.sock: socket.socket | None = None
        self.loop: asyncio.AbstractEventLoop = None  # type: ignore[assignment]
        self.accepted = self.refused = 0

    async def start(self) -> None:
        self.loop = asyncio.get_running_loop()
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((self.ip, self.port))
            sock.listen(1024)
        except OSError:
            sock.close()
            raise
        sock.setblocking(False)
        self.sock = sock
        self.loop.add_reader(sock.fileno(), self._accept)

    def _accept(self) -> None:
        assert self.sock is not None
        for _ in range(ACCEPT_BATCH):
            try:
                client, peer = self.sock.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                return
            client.setblocking(False)
            client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.accepted += 1
            _Dial(self, client, peer).next()

    async def close(self) -> None:
        """Stop accepting; connections already relayed go on until either side closes them."""
        if self.sock is not None:
            self.loop.remove_reader(self.sock.fileno())
            self.sock.close()
            self.sock = None


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
