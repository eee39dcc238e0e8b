"""A TCP relay: a listening socket whose every accepted connection is joined to a target the caller chooses
(the first of its choices that accepts in time), with the bytes moved by the kernel.

It runs on the event loop's readiness callbacks with raw sockets (no task, transport or stream per
connection): each direction is a kernel pipe (up to 1 MiB) filled from one socket and drained into the other
with splice(2), so bytes never enter Python. A full destination stops reading from the source (backpressure);
an EOF shuts down the other socket's write half once the pipe is empty (half-close); the connection closes when
both directions have ended; an error (a reset) on either socket resets both (SO_LINGER 0). A connection that
no target takes is reset at once.

What to dial is the caller's policy, in a subclass of `TcpRelay`: `targets(peer)` yields the attempts in order
(lazily: the next is asked for only when one fails), and `connected`, `dial_failed` and `refused` hear how
each connection went.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import fcntl
import logging
import os
import socket
import struct
from collections.abc import Iterator
from typing import Any

log = logging.getLogger("mini-kube.network.relay")
Address = tuple[str, int]
Attempt = tuple[Any, Address, float]  # (the caller's target, the address to dial, seconds allowed to connect)
PIPE_SIZE = 1 << 20
BACKLOG = 1024
ACCEPT_BATCH = 64
READ_ROUNDS = 8  # splices per readiness event while data keeps coming
ACCEPT_PAUSE = 0.1  # seconds without accepting after accept() failed (out of file descriptors)
_SPLICE_FLAGS = os.SPLICE_F_MOVE | os.SPLICE_F_NONBLOCK
_LINGER_RST = struct.pack("ii", 1, 0)
_F_SETPIPE_SZ = getattr(fcntl, "F_SETPIPE_SZ", 1031)
_QUIET_ERRORS = (errno.ECONNRESET, errno.EPIPE, errno.ETIMEDOUT)


def family_of(ip: str) -> int:
    return socket.AF_INET6 if ":" in ip else socket.AF_INET


def reset_socket(sock: socket.socket) -> None:
    """Close with a TCP RST (SO_LINGER 0), not an orderly FIN."""
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, _LINGER_RST)
    sock.close()


def listen_on(sock: socket.socket, ip: str, port: int) -> socket.socket:
    """Bind `sock` to ip:port (and listen, for TCP); closes it when that fails."""
    stream = sock.type == socket.SOCK_STREAM
    try:
        if stream:  # (for UDP it would let a second socket share the address)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((ip, port))
        if stream:
            sock.listen(BACKLOG)
    except OSError:
        sock.close()
        raise
    return sock


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
        for _ in range(READ_ROUNDS):  # move what keeps arriving without a trip through the event loop
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
            if not self.reading or self.eof:
                return

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
            if not self.done:  # half-close: pass the EOF on once everything before it has gone
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
    """A client socket spliced to a target socket, both ways."""

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
        if exc.errno not in _QUIET_ERRORS:
            log.debug("relayed connection failed: %s", exc)
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
    """Connects a freshly accepted client to the first target that accepts in time, then splices."""

    __slots__ = ("relay", "client", "peer", "attempts", "sock", "timer", "target")

    def __init__(self, relay: TcpRelay, client: socket.socket, peer: Any) -> None:
        self.relay, self.client, self.peer = relay, client, peer
        self.attempts = relay.targets(peer)
        self.sock: socket.socket | None = None
        self.timer: asyncio.TimerHandle | None = None
        self.target: Any = None

    def next(self) -> None:
        relay = self.relay
        attempt = next(self.attempts, None)
        if attempt is None:
            relay.refused += 1
            relay.gave_up(self.peer)
            reset_socket(self.client)
            return
        self.target, address, timeout = attempt
        try:
            sock = self.sock = relay.dial_socket(self.target, address)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            code = sock.connect_ex(address)
        except OSError as exc:
            code = exc.errno or errno.EIO
        if code == 0:
            self.connected()
        elif code in (errno.EINPROGRESS, errno.EAGAIN) and self.sock is not None:
            relay.loop.add_writer(self.sock.fileno(), self.writable)
            self.timer = relay.loop.call_later(timeout, self.timed_out)
        else:
            self.failed(code)

    def writable(self) -> None:
        assert self.sock is not None
        self.relay.loop.remove_writer(self.sock.fileno())
        if self.timer is not None:
            self.timer.cancel()
        code = self.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        if code:
            self.failed(code)
        else:
            self.connected()

    def timed_out(self) -> None:
        assert self.sock is not None
        self.relay.loop.remove_writer(self.sock.fileno())
        self.failed(errno.ETIMEDOUT)

    def failed(self, code: int) -> None:
        self.relay.dial_failed(self.target, code)
        if self.sock is not None:
            self.sock.close()
            self.sock = None
        self.next()

    def connected(self) -> None:
        assert self.sock is not None
        self.relay.connected(self.peer, self.target, self.sock)
        _Connection(self.relay.loop, self.client, self.sock)


class TcpRelay:
    """Accepts on the listening socket `sock` and relays every connection to a target from `targets(peer)`.

    Subclasses give the policy: `targets` (required), and `dial_socket`, `connected`, `dial_failed`,
    `gave_up` when they need them."""

    def __init__(self, sock: socket.socket | None = None, name: str = "") -> None:
        self.sock = sock
        self.name = name  # for log lines
        self.loop: asyncio.AbstractEventLoop = None  # type: ignore[assignment]
        self.accepted = self.refused = 0
        self._paused: asyncio.TimerHandle | None = None

    # -- policy ----------------------------------------------------------------------------------------------
    def targets(self, peer: Any) -> Iterator[Attempt]:
        """What to dial for the client `peer`, in order; the next is asked for only when one has failed."""
        raise NotImplementedError

    def dial_socket(self, target: Any, address: Address) -> socket.socket:
        """A non-blocking socket to dial `target` at `address` with."""
        sock = socket.socket(family_of(address[0]), socket.SOCK_STREAM)
        sock.setblocking(False)
        return sock

    def connected(self, peer: Any, target: Any, sock: socket.socket) -> None:
        """`target` took the connection of `peer` (dialled from `sock`); the bytes flow from now on."""

    def dial_failed(self, target: Any, code: int) -> None:
        """`target` refused, or did not answer in time (`code`: an errno)."""
        log.debug("%s: %s failed: %s", self.name, target, os.strerror(code))

    def gave_up(self, peer: Any) -> None:
        """No target took the connection of `peer`: it is reset."""

    # -- accepting -------------------------------------------------------------------------------------------
    async def start(self) -> None:
        assert self.sock is not None
        self.loop = asyncio.get_running_loop()
        self.sock.setblocking(False)
        self.loop.add_reader(self.sock.fileno(), self._accept)

    def _accept(self) -> None:
        assert self.sock is not None
        for _ in range(ACCEPT_BATCH):
            try:
                client, peer = self.sock.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:  # e.g. EMFILE: pause accepting for a moment (the socket stays readable)
                log.warning("%s: accept failed: %s", self.name, exc)
                self.loop.remove_reader(self.sock.fileno())
                self._paused = self.loop.call_later(ACCEPT_PAUSE, self._resume)
                return
            client.setblocking(False)
            client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.accepted += 1
            _Dial(self, client, peer).next()

    def _resume(self) -> None:
        self._paused = None
        if self.sock is not None:
            self.loop.add_reader(self.sock.fileno(), self._accept)

    def close(self) -> None:
        """Stop accepting; connections already relayed go on until either side ends them."""
        if self._paused is not None:
            self._paused.cancel()
            self._paused = None
        elif self.loop is not None and self.sock is not None:
            self.loop.remove_reader(self.sock.fileno())
        if self.sock is not None:
            self.sock.close()
            self.sock = None
