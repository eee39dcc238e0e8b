"""A TCP relay: a listening socket whose every accepted connection is joined to a target the caller chooses
(the first of its choices that accepts in time), with the bytes moved by the kernel.

It works on raw sockets watched edge-triggered by the loop's `Poller` (no task, transport or stream per
connection, and no change of interest as a connection fills and drains): each direction is a kernel pipe (up to
1 MiB, reused by the next connection) filled from one socket and drained into the other with splice(2), so
bytes never enter Python. A dial on loopback usually completes within the connect call, and the client's first
bytes are moved as soon as the target has answered. A full destination stops reading from the source once the
pipe is full (backpressure);
an EOF shuts down the other socket's write half once the pipe is empty (half-close); the connection closes when
both directions have ended; an error (a reset) on either socket resets both (SO_LINGER 0). A connection that
no target takes is reset at once.

Budgets (`LIMITS`, one RelayLimits for the process): the relays of a process hold at most a share of its
open-file limit (half, at 6 descriptors a connection: two sockets, two pipes), one listener at most half of
that and one client address at most a quarter, so a flooded load balancer or Service leaves descriptors for the
API server and the other Services; a connection past a budget is reset at once (counted in `over_budget`). A
connection with no traffic either way for `idle_timeout` (15 min, as a conntrack-ish default; cloud balancers
use 350 s to an hour) is closed. accept() errors (EMFILE) pause accepting for a moment and are logged at most
once a second for the process.

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
import resource
import select
import socket
import struct
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from .poller import READABLE, WRITABLE, Poller

log = logging.getLogger("mini-kube.network.relay")
Address = tuple[str, int]
Attempt = tuple[Any, Address, float]  # (the caller's target, the address to dial, seconds allowed to connect)
PIPE_SIZE = 1 << 20
BACKLOG = 1024
ACCEPT_BATCH = 64
ROUNDS = 8  # pipe refills per direction and turn of the loop while data keeps coming
ACCEPT_PAUSE = 0.1  # seconds without accepting after accept() failed (out of file descriptors)
_SPLICE_FLAGS = os.SPLICE_F_MOVE | os.SPLICE_F_NONBLOCK
_LINGER_RST = struct.pack("ii", 1, 0)
_F_SETPIPE_SZ = getattr(fcntl, "F_SETPIPE_SZ", 1031)
_QUIET_ERRORS = (errno.ECONNRESET, errno.EPIPE, errno.ETIMEDOUT)
_IN_PROGRESS = (errno.EINPROGRESS, errno.EALREADY, errno.EAGAIN)
_CONNECTED = (0, errno.EISCONN)
_HANG_UP = select.EPOLLRDHUP | select.EPOLLHUP | select.EPOLLERR


@dataclass
class RelayLimits:
    """The relays' budgets (see the module's docstring); tests may lower them."""

    idle_timeout: float = 900.0  # seconds without traffic either way before a relayed connection is closed
    fd_share: float = 0.5  # of the process's open-file limit, for all its relays together
    fds_per_connection: int = 6  # two sockets and two pipes
    listener_share: float = 0.5  # of the relays' budget, for one listener
    client_share: float = 0.25  # of the relays' budget, for one client address (on one listener)
    max_connections: int | None = None  # the relays' budget itself, instead of the share of the fd limit
    held: int = 0  # connections held now by the relays under these limits

    def total(self) -> int:
        """The most connections all relays of the process may hold now."""
        if self.max_connections is not None:
            return self.max_connections
        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        soft = soft if soft != resource.RLIM_INFINITY else 1 << 20
        return max(int(soft * self.fd_share) // self.fds_per_connection, 1)


LIMITS = RelayLimits()
ACCEPT_WARNING_INTERVAL = 1.0  # seconds between two warnings about failing accept() calls (per process)


def raise_open_files_limit() -> int:
    """Raise the soft open-file limit to the hard one (as servers do at start); the new soft limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


class _AcceptWarnings:
    """accept() failures logged at most once per ACCEPT_WARNING_INTERVAL, with how many went unlogged."""

    def __init__(self) -> None:
        self.last = -ACCEPT_WARNING_INTERVAL
        self.unlogged = 0

    def failed(self, name: str, exc: OSError) -> None:
        now = time.monotonic()
        if now - self.last < ACCEPT_WARNING_INTERVAL:
            self.unlogged += 1
            return
        more = f" ({self.unlogged} more since the last warning)" if self.unlogged else ""
        log.warning("%s: accept failed: %s%s", name, exc, more)
        self.last, self.unlogged = now, 0


_ACCEPT_WARNINGS = _AcceptWarnings()


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


class _Pipes:
    """Kernel pipes as large as allowed, kept for reuse once a connection has ended with its pipes empty."""

    KEEP = 64

    def __init__(self) -> None:
        self.free: list[tuple[int, int, int]] = []

    def take(self) -> tuple[int, int, int]:
        """(read fd, write fd, capacity) of an empty non-blocking pipe."""
        if self.free:
            return self.free.pop()
        read_fd, write_fd = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        try:
            size = fcntl.fcntl(write_fd, _F_SETPIPE_SZ, PIPE_SIZE)
        except OSError:
            size = 65536
        return read_fd, write_fd, size

    def give(self, pipe: tuple[int, int, int], empty: bool) -> None:
        if empty and len(self.free) < self.KEEP:
            self.free.append(pipe)
        else:
            os.close(pipe[0])
            os.close(pipe[1])


_PIPES = _Pipes()  # shared by every relay of the process


class _Direction:
    """src -> pipe -> dst, moved until the kernel says EAGAIN (the sockets are watched edge-triggered)."""

    __slots__ = ("conn", "src", "dst", "read_fd", "write_fd", "size", "pending", "eof", "done",
                 "in_ready", "out_blocked", "trust_short")

    def __init__(self, conn: _Connection, src: socket.socket, dst: socket.socket) -> None:
        self.conn = conn
        self.src, self.dst = src.fileno(), dst.fileno()
        self.read_fd, self.write_fd, self.size = _PIPES.take()
        self.pending = 0  # bytes in the pipe
        self.eof = self.done = self.out_blocked = False
        self.in_ready = True  # until src says EAGAIN
        self.trust_short = False  # see pump: only while handling an input event that reported no hang-up

    def pump(self) -> None:
        """Move what can be moved now: drain the pipe into dst, refill it from src, up to `ROUNDS` times; a
        full dst stops the draining until dst reports it can take more (backpressure: src is then read only
        until the pipe is full); an EOF shuts down dst's write half once the pipe is empty (half-close)."""
        if self.done:
            return
        for _ in range(ROUNDS):
            while self.pending and not self.out_blocked:
                try:
                    self.pending -= os.splice(self.read_fd, self.dst, self.pending, flags=_SPLICE_FLAGS)
                except BlockingIOError:
                    self.out_blocked = True
                except OSError as exc:
                    self.conn.fail(exc)
                    return
            if not self.in_ready or self.eof or self.pending >= self.size:
                break
            try:
                moved = os.splice(self.src, self.write_fd, self.size - self.pending, flags=_SPLICE_FLAGS)
            except BlockingIOError:  # src is empty, or the pipe's slots are full of small pieces
                if not self.pending:
                    self.in_ready = False
                    break
                if self.out_blocked:
                    break
                continue
            except OSError as exc:
                self.conn.fail(exc)
                return
            if moved == 0:
                self.eof = True
            elif self.trust_short and not self.pending and moved < self.size >> 12:
                # a short read into an empty pipe took everything the socket held (a nonblocking TCP splice
                # reads all that is queued, and only a full pipe, a slot per page of at least a byte each,
                # cuts it short): what comes next, an EOF included, comes with a new edge, so no probe for EAGAIN
                self.in_ready = False
            self.pending += moved
        else:  # its share of this turn is used and there may be more: go on next turn (no new edge will come)
            self.conn.loop.call_soon(self.pump)
            return
        if self.eof and not self.pending:  # pass the EOF on once everything before it has gone
            self.done = True
            self.conn.direction_done(self.dst)

    def close(self) -> None:
        _PIPES.give((self.read_fd, self.write_fd, self.size), self.pending == 0)


class _Connection:
    """A client socket spliced to a target socket, both ways."""

    __slots__ = ("poller", "loop", "client", "backend", "up", "down", "ended", "closed", "relay", "peer", "last")

    def __init__(self, poller: Poller, client: socket.socket, backend: socket.socket, relay: TcpRelay,
                 peer: Any) -> None:
        self.poller, self.loop = poller, poller.loop
        self.relay, self.peer = relay, peer
        self.last = self.loop.time()  # of the last traffic either way
        relay.connections.add(self)
        self.client, self.backend = client, backend
        self.up = _Direction(self, client, backend)
        self.down = _Direction(self, backend, client)
        self.ended = 0
        self.closed = False
        poller.acquire()
        poller.redirect(backend.fileno(), self._backend_event)  # watched since it was dialled
        poller.watch(client.fileno(), self._client_event)
        self.up.pump()  # the client has most likely sent its request already

    def _client_event(self, events: int) -> None:
        self._event(events, self.up, self.down)

    def _backend_event(self, events: int) -> None:
        self._event(events, self.down, self.up)

    def _event(self, events: int, reading: _Direction, writing: _Direction) -> None:
        self.last = self.loop.time()
        if events & READABLE:
            reading.in_ready = True
            reading.trust_short = not events & _HANG_UP  # an EOF already there when the event was made: probe
            reading.pump()
            reading.trust_short = False
        if events & WRITABLE and writing.out_blocked and not self.closed:
            writing.out_blocked = False
            writing.pump()

    def shutdown_write(self, fd: int) -> None:
        sock = self.client if fd == self.client.fileno() else self.backend
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_WR)

    def direction_done(self, dst: int) -> None:
        """One way has ended: shut down `dst`'s write half, or close both once the other way has ended too
        (everything has been read from both sockets then, so the close sends a FIN, as a shutdown would)."""
        self.ended += 1
        if self.ended == 2:
            self.close()
        else:
            self.shutdown_write(dst)

    def fail(self, exc: OSError) -> None:
        """An error on either socket (a reset, a broken pipe): reset both."""
        if exc.errno not in _QUIET_ERRORS:
            log.debug("relayed connection failed: %s", exc)
        self.close(reset=True)

    def close(self, reset: bool = False) -> None:
        if self.closed:
            return
        self.closed = True
        self.up.done = self.down.done = True  # a pump already scheduled does nothing
        self.up.close()
        self.down.close()
        poller = self.poller
        for sock in (self.client, self.backend):
            poller.forget(sock.fileno())
            if reset:
                reset_socket(sock)
            else:
                sock.close()
        poller.release()
        self.relay.connections.discard(self)
        self.relay.ended(self.peer)


class _Dial:
    """Connects a freshly accepted client to the first target that accepts in time, then splices."""

    __slots__ = ("relay", "poller", "client", "peer", "attempts", "sock", "timer", "target", "address")

    def __init__(self, relay: TcpRelay, client: socket.socket, peer: Any) -> None:
        self.relay, self.client, self.peer = relay, client, peer
        assert relay.poller is not None
        self.poller = relay.poller
        self.attempts = relay.targets(peer)
        self.sock: socket.socket | None = None
        self.timer: asyncio.TimerHandle | None = None
        self.target: Any = None
        self.address: Address = ("", 0)
        self.poller.acquire()  # until the connection holds it, or the client is turned away

    def next(self) -> None:
        relay = self.relay
        attempt = next(self.attempts, None)
        if attempt is None:
            relay.refused += 1
            relay.gave_up(self.peer)
            reset_socket(self.client)
            self.poller.release()
            relay.ended(self.peer)
            return
        self.target, address, timeout = attempt
        self.address = address
        try:
            sock = self.sock = relay.dial_socket(self.target, address)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            code = sock.connect_ex(address)
            if code in _IN_PROGRESS:  # on loopback the handshake is usually over by now: ask once more
                code = sock.connect_ex(address)
        except OSError as exc:
            code = exc.errno or errno.EIO
        if code in _CONNECTED:
            self.poller.watch(sock.fileno(), self._event)
            self.connected()
        elif code in _IN_PROGRESS and self.sock is not None:
            self.poller.watch(self.sock.fileno(), self._event)
            self.timer = relay.loop.call_later(timeout, self.timed_out)
        else:
            self.failed(code)

    def _event(self, events: int) -> None:
        if self.sock is None or not events & WRITABLE:
            return
        # asked again rather than read from SO_ERROR: an event meant for an earlier socket with the same number,
        # closed in the same batch of events, must not pass for the end of this handshake
        code = self.sock.connect_ex(self.address)
        if code in _IN_PROGRESS:
            return
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        if code in _CONNECTED:
            self.connected()
        else:
            self.failed(code)

    def timed_out(self) -> None:
        self.timer = None
        self.failed(errno.ETIMEDOUT)

    def failed(self, code: int) -> None:
        self.relay.dial_failed(self.target, code)
        if self.sock is not None:
            self.poller.forget(self.sock.fileno())
            self.sock.close()
            self.sock = None
        self.next()

    def connected(self) -> None:
        sock = self.sock
        assert sock is not None
        self.sock = None  # from now on its events are the connection's
        self.relay.connected(self.peer, self.target, sock)
        _Connection(self.poller, self.client, sock, self.relay, self.peer)
        self.poller.release()


class TcpRelay:
    """Accepts on the listening socket `sock` and relays every connection to a target from `targets(peer)`.

    Subclasses give the policy: `targets` (required), and `dial_socket`, `connected`, `dial_failed`,
    `gave_up` when they need them."""

    def __init__(self, sock: socket.socket | None = None, name: str = "") -> None:
        self.sock = sock
        self.name = name  # for log lines
        self.loop: asyncio.AbstractEventLoop = None  # type: ignore[assignment]
        self.accepted = self.refused = self.over_budget = 0
        self._paused: asyncio.Handle | None = None
        self.limits = LIMITS
        self.live = 0  # connections held (dialling or relayed)
        self.per_client: dict[str, int] = {}  # of them, by client address
        self.connections: set[_Connection] = set()
        self._sweeper: asyncio.TimerHandle | None = None
        self.poller: Poller | None = None
        self._family = socket.AF_INET

    # -- policy ----------------------------------------------------------------------------------------------
    def targets(self, peer: Any) -> Iterator[Attempt]:
        """What to dial for the client `peer`, in order; the next is asked for only when one has failed."""
        raise NotImplementedError

    def dial_socket(self, target: Any, address: Address) -> socket.socket:
        """A non-blocking socket to dial `target` at `address` with."""
        return socket.socket(family_of(address[0]), socket.SOCK_STREAM | socket.SOCK_NONBLOCK)

    def connected(self, peer: Any, target: Any, sock: socket.socket) -> None:
        """`target` took the connection of `peer` (dialled from `sock`); the bytes flow from now on."""

    def dial_failed(self, target: Any, code: int) -> None:
        """`target` refused, or did not answer in time (`code`: an errno)."""
        log.debug("%s: %s failed: %s", self.name, target, os.strerror(code))

    def gave_up(self, peer: Any) -> None:
        """No target took the connection of `peer`: it is reset."""

    # -- budgets ---------------------------------------------------------------------------------------------
    def _admit(self, peer: Any) -> bool:
        """Whether a new connection from `peer` fits the budgets; counted in when it does."""
        total = self.limits.total()
        client = peer[0] if isinstance(peer, tuple) else str(peer)
        held = self.per_client.get(client, 0)
        if (self.limits.held >= total or self.live >= max(int(total * self.limits.listener_share), 1)
                or held >= max(int(total * self.limits.client_share), 1)):
            return False
        self.limits.held += 1
        self.live += 1
        self.per_client[client] = held + 1
        return True

    def ended(self, peer: Any) -> None:
        """A connection counted in by `_admit` is over."""
        client = peer[0] if isinstance(peer, tuple) else str(peer)
        self.limits.held -= 1
        self.live -= 1
        left = self.per_client.get(client, 1) - 1
        if left > 0:
            self.per_client[client] = left
        else:
            self.per_client.pop(client, None)

    def _sweep(self) -> None:
        """Close the relayed connections idle for `idle_timeout`; look again in a while."""
        timeout = self.limits.idle_timeout
        now = self.loop.time()
        for conn in [c for c in self.connections if now - c.last >= timeout]:
            conn.close()
        self._sweeper = self.loop.call_later(min(max(timeout / 4, 0.1), 60.0), self._sweep)

    # -- accepting -------------------------------------------------------------------------------------------
    async def start(self) -> None:
        assert self.sock is not None
        self.loop = asyncio.get_running_loop()
        self.poller = Poller.of(self.loop)
        self._family = self.sock.family
        self.sock.setblocking(False)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # for the sockets it accepts
        self.poller.watch(self.sock.fileno(), self._incoming)
        self._sweeper = self.loop.call_later(min(max(self.limits.idle_timeout / 4, 0.1), 60.0), self._sweep)

    def _incoming(self, events: int) -> None:
        if self._paused is None:
            self._accept()

    def _accept(self) -> None:
        """Accept until EAGAIN (the listening socket is watched edge-triggered), `ACCEPT_BATCH` per turn."""
        self._paused = None
        if self.sock is None:
            return
        for _ in range(ACCEPT_BATCH):
            try:
                # socket.accept() would look the family and type up again; _accept is CPython's, not in typeshed
                fd, peer = self.sock._accept()  # type: ignore[attr-defined]
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:  # e.g. EMFILE: try again in a moment
                _ACCEPT_WARNINGS.failed(self.name, exc)
                self._paused = self.loop.call_later(ACCEPT_PAUSE, self._accept)
                return
            client = socket.socket(self._family, socket.SOCK_STREAM, 0, fd)
            if not self._admit(peer):  # past a budget: refused at once
                self.over_budget += 1
                reset_socket(client)
                continue
            client.setblocking(False)  # (TCP_NODELAY comes from the listening socket)
            self.accepted += 1
            _Dial(self, client, peer).next()
        self._paused = self.loop.call_soon(self._accept)  # more may be waiting: go on next turn

    def close(self) -> None:
        """Stop accepting; connections already relayed go on until either side ends them."""
        if self._paused is not None:
            self._paused.cancel()
            self._paused = None
        if self._sweeper is not None:
            self._sweeper.cancel()
            self._sweeper = None
        if self.sock is not None:
            if self.poller is not None:
                self.poller.forget(self.sock.fileno())
                self.poller.release()
                self.poller = None
            self.sock.close()
            self.sock = None
