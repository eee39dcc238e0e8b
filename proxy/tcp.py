"""TCP forwarding: a listener per (address, port) that splices every accepted connection to an endpoint.

Bytes never enter Python: each direction of a forwarded connection is a kernel pipe, filled from one socket and
drained into the other with splice(2), driven by the event loop's readiness callbacks (no task, no transport
per connection). Backpressure comes with it: a direction stops reading while its pipe (up to 1 MiB) cannot be
drained into a full socket. An EOF shuts down the other socket's write half once the pipe is empty
(half-close); the connection closes when both directions have ended; an error (a reset) on either socket
resets the other (SO_LINGER 0). No endpoint, or none that accepts in time, resets the client at once."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import fcntl
import logging
import os
import socket
import struct
from typing import TYPE_CHECKING, Any

from .model import Endpoint

if TYPE_CHECKING:
    from .server import PortState

log = logging.getLogger("mini-kube.proxy")
PIPE_SIZE = 1 << 20
CONNECT_TIMEOUTS = (0.25, 0.5, 1.0, 2.0)  # one try per endpoint, as upstream's userspace proxy
ACCEPT_BATCH = 64
ACCEPT_PAUSE = 0.1  # seconds without accepting after accept() failed (out of file descriptors)
_SPLICE_FLAGS = os.SPLICE_F_MOVE | os.SPLICE_F_NONBLOCK
_LINGER_RST = struct.pack("ii", 1, 0)
_F_SETPIPE_SZ = getattr(fcntl, "F_SETPIPE_SZ", 1031)


def reset_socket(sock: socket.socket) -> None:
    """Close with a TCP RST (SO_LINGER 0), not an orderly FIN."""
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, _LINGER_RST)
    sock.close()


def _pipe() -> tuple[int, int, int]:
    """A non-blocking pipe as large as allowed: (read fd, write fd, capacity)."""
    read_fd, write_fd = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        size = fcntl.fcntl(write_fd, _F_SETPIPE_SZ, PIPE_SIZE)
    except OSError:
        size = 65536
    return read_fd, write_fd, size


class _Direction:
    """src -> pipe -> dst."""

    __slots__ = ("conn", "src", "dst", "read_fd", "write_fd", "size", "pending", "eof", "done", "reading",
                 "waiting")

    def __init__(self, conn: _Connection, src: socket.socket, dst: socket.socket) -> None:
        self.conn = conn
        self.src, self.dst = src.fileno(), dst.fileno()
        self.read_fd, self.write_fd, self.size = _pipe()
        self.pending = 0  # bytes in the pipe
        self.eof = self.done = self.reading = self.waiting = False

    def start(self) -> None:
        self.reading = True
        self.conn.loop.add_reader(self.src, self.readable)

    def readable(self) -> None:
        try:
            moved = os.splice(self.src, self.write_fd, self.size - self.pending, flags=_SPLICE_FLAGS)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            self.conn.fail(exc)
            return
        if moved == 0:
            self.eof = True
            self._stop_reading()
        self.pending += moved
        self.flush()

    def flush(self) -> None:
        while self.pending:
            try:
                moved = os.splice(self.read_fd, self.dst, self.pending, flags=_SPLICE_FLAGS)
            except (BlockingIOError, InterruptedError):  # dst is full: wait until it drains
                self._stop_reading()
                if not self.waiting:
                    self.waiting = True
                    self.conn.loop.add_writer(self.dst, self.writable)
                return
            except OSError as exc:
                self.conn.fail(exc)
                return
            self.pending -= moved
        if self.eof:
            if not self.done:
                self.done = True
                self.conn.shutdown_write(self.dst)
                self.conn.direction_done()
        elif not self.reading:
            self.start()

    def writable(self) -> None:
        self.waiting = False
        self.conn.loop.remove_writer(self.dst)
        self.flush()

    def _stop_reading(self) -> None:
        if self.reading:
            self.reading = False
            self.conn.loop.remove_reader(self.src)

    def close(self) -> None:
        self._stop_reading()
        if self.waiting:
            self.waiting = False
            self.conn.loop.remove_writer(self.dst)
        os.close(self.read_fd)
        os.close(self.write_fd)


class _Connection:
    """A client socket spliced to an endpoint socket."""

    __slots__ = ("loop", "client", "backend", "up", "down", "ended", "closed")

    def __init__(self, loop: asyncio.AbstractEventLoop, client: socket.socket, backend: socket.socket) -> None:
        self.loop = loop
        self.client, self.backend = client, backend
        self.up = _Direction(self, client, backend)
        self.down = _Direction(self, backend, client)
        self.ended = 0
        self.closed = False
        self.up.start()
        self.down.start()

    def shutdown_write(self, fd: int) -> None:
        sock = self.client if fd == self.client.fileno() else self.backend
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_WR)

    def direction_done(self) -> None:
        self.ended += 1
        if self.ended == 2:
            self.close()

    def fail(self, exc: OSError) -> None:
        """An error on either socket (a reset, a broken pipe): reset both."""
        if exc.errno not in (errno.ECONNRESET, errno.EPIPE, errno.ETIMEDOUT):
            log.debug("forwarded connection failed: %s", exc)
        self.close(reset=True)

    def close(self, reset: bool = False) -> None:
        if self.closed:
            return
        self.closed = True
        self.up.close()
        self.down.close()
        for sock in (self.client, self.backend):
            if reset:
                reset_socket(sock)
            else:
                sock.close()


class _Dial:
    """Connects a freshly accepted client to an endpoint (trying others that refuse), then splices."""

    __slots__ = ("listener", "client", "peer", "tried", "sock", "timer", "endpoint")

    def __init__(self, listener: TcpListener, client: socket.socket, peer: tuple[Any, ...]) -> None:
        self.listener, self.client, self.peer = listener, client, peer
        self.tried: list[Endpoint] = []
        self.sock: socket.socket | None = None
        self.timer: asyncio.TimerHandle | None = None
        self.endpoint: Endpoint | None = None

    def next(self) -> None:
        listener = self.listener
        if len(self.tried) >= len(CONNECT_TIMEOUTS):
            self.give_up()
            return
        endpoint = listener.state.pick(listener.kind, self.peer[0], tuple(self.tried))
        if endpoint is None:
            self.give_up()
            return
        self.tried.append(endpoint)
        self.endpoint = endpoint
        try:
            sock = self.sock = listener.maker.socket(endpoint.ip, socket.SOCK_STREAM)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            code = sock.connect_ex(endpoint.address)
        except OSError as exc:
            code = exc.errno or errno.EIO
        if code == 0:
            self.connected()
        elif code in (errno.EINPROGRESS, errno.EAGAIN):
            listener.loop.add_writer(sock.fileno(), self.writable)
            self.timer = listener.loop.call_later(CONNECT_TIMEOUTS[len(self.tried) - 1], self.timed_out)
        else:
            self.failed(code)

    def writable(self) -> None:
        assert self.sock is not None
        self.listener.loop.remove_writer(self.sock.fileno())
        if self.timer is not None:
            self.timer.cancel()
        code = self.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        if code:
            self.failed(code)
        else:
            self.connected()

    def timed_out(self) -> None:
        assert self.sock is not None
        self.listener.loop.remove_writer(self.sock.fileno())
        self.failed(errno.ETIMEDOUT)

    def failed(self, code: int) -> None:
        log.debug("%s: endpoint %s failed: %s", self.listener.state.port.name, self.endpoint, os.strerror(code))
        if self.sock is not None:
            self.sock.close()
            self.sock = None
        self.next()

    def connected(self) -> None:
        assert self.sock is not None
        self.listener.state.note(self.listener, self.peer, self.endpoint)
        _Connection(self.listener.loop, self.client, self.sock)

    def give_up(self) -> None:
        self.listener.state.note(self.listener, self.peer, None)
        reset_socket(self.client)


class TcpListener:
    """Accepts on one socket for one ServicePort: `kind` "internal" (a ClusterIP) or "external" (a NodePort)."""

    protocol = "TCP"

    def __init__(self, state: PortState, kind: str, sock: socket.socket, maker: Any) -> None:
        self.state = state
        self.kind = kind
        self.sock = sock
        self.maker = maker
        self.address: tuple[str, int] = sock.getsockname()[:2]
        self.loop: asyncio.AbstractEventLoop = None  # type: ignore[assignment]
        self._paused: asyncio.TimerHandle | None = None

    async def start(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.sock.setblocking(False)
        self.loop.add_reader(self.sock.fileno(), self._accept)

    def _accept(self) -> None:
        for _ in range(ACCEPT_BATCH):
            try:
                client, peer = self.sock.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:  # e.g. EMFILE: pause accepting for a moment (the socket stays readable)
                log.warning("%s: accept on %s:%s failed: %s", self.state.port.name, *self.address, exc)
                self.loop.remove_reader(self.sock.fileno())
                self._paused = self.loop.call_later(ACCEPT_PAUSE, self._resume)
                return
            client.setblocking(False)
            client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            _Dial(self, client, peer).next()

    def _resume(self) -> None:
        self._paused = None
        self.loop.add_reader(self.sock.fileno(), self._accept)

    def endpoints_changed(self) -> None:
        """Nothing to do: new connections read the balancer; connections in flight are left alone."""

    def close(self) -> None:
        """Stop accepting; connections already forwarded go on until they end."""
        if self._paused is not None:
            self._paused.cancel()
        elif self.loop is not None:
            self.loop.remove_reader(self.sock.fileno())
        self.sock.close()
