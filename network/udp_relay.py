"""A UDP relay: a bound socket whose every client address gets a session, a socket connected to the target the
caller chooses for it, whose replies go back to the client from the relay's own address.

Raw sockets on the event loop's readiness callbacks (up to `BATCH` datagrams per wake-up), no task or transport
per session. A session ends after `timeout` seconds without traffic either way, and at once when its target
answers with an error (ICMP port unreachable), so the client's next datagram chooses again. A datagram that
cannot be sent at once (a full socket), or for which there is no target, is dropped, as UDP may.

Budgets: a listener holds at most `max_sessions` (4096) sessions, one client address at most
`max_sessions_per_client` (1024) of them (one socket each); a datagram that would open one more is dropped
(counted in `over_budget`), so a flood of source ports costs a bounded number of descriptors and leaves room for
the other clients.

The policy is a subclass's: `choose(client)` (required), and `dial_socket` and `opened` when it needs them;
`end(session)` ends a session early (kube-proxy's removed endpoints).
"""

from __future__ import annotations

import asyncio
import logging
import socket
import time
from typing import Any

from .relay import Address, family_of

log = logging.getLogger("mini-kube.network.relay")
MAX_DATAGRAM = 65535
BATCH = 64  # datagrams read per wake-up before yielding to the loop
TIMEOUT = 30.0
MAX_SESSIONS = 4096  # sessions (sockets) one listener holds at most
MAX_SESSIONS_PER_CLIENT = 1024  # of them, for one client address


class Session:
    """One client's flow: its address, its target and the socket connected to it, and when it was last used."""

    __slots__ = ("client", "target", "sock", "last")

    def __init__(self, client: Any, target: Any, sock: socket.socket) -> None:
        self.client = client
        self.target = target
        self.sock = sock
        self.last = time.monotonic()


class UdpRelay:
    """Receives on the bound socket `sock`; each client address is a session kept on one target until idle
    for `timeout` seconds (looked for every `sweep_every`, by default half the timeout)."""

    def __init__(self, sock: socket.socket | None = None, name: str = "", timeout: float = TIMEOUT,
                 sweep_every: float | None = None) -> None:
        self.sock = sock
        self.name = name  # for log lines
        self.timeout = timeout
        self.sweep_every = sweep_every if sweep_every is not None else timeout / 2
        self.sessions: dict[Any, Session] = {}
        self.max_sessions = MAX_SESSIONS
        self.max_sessions_per_client = MAX_SESSIONS_PER_CLIENT
        self.per_client: dict[str, int] = {}  # sessions by client address
        self.over_budget = 0  # datagrams dropped for want of a session
        self._loop: asyncio.AbstractEventLoop | None = None
        self._sweeper: asyncio.TimerHandle | None = None

    # -- policy ----------------------------------------------------------------------------------------------
    def choose(self, client: Any) -> tuple[Any, Address] | None:
        """The target for a new session of `client` and its address; None drops the datagram."""
        raise NotImplementedError

    def dial_socket(self, target: Any, address: Address) -> socket.socket:
        """A non-blocking UDP socket to reach `target` at `address` with."""
        sock = socket.socket(family_of(address[0]), socket.SOCK_DGRAM)
        sock.setblocking(False)
        return sock

    def opened(self, session: Session) -> None:
        """A new session, its socket connected to its target."""

    # -- relaying --------------------------------------------------------------------------------------------
    async def start(self) -> None:
        assert self.sock is not None
        self.sock.setblocking(False)
        self._loop = asyncio.get_running_loop()
        self._loop.add_reader(self.sock.fileno(), self._readable)

    def _readable(self) -> None:
        assert self.sock is not None
        now = time.monotonic()
        for _ in range(BATCH):
            try:
                data, client = self.sock.recvfrom(MAX_DATAGRAM)
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:
                log.debug("%s: receive failed: %s", self.name, exc)
                return
            session = self.sessions.get(client)
            if session is None:
                session = self._open(client)
                if session is None:
                    continue  # no target: dropped
            session.last = now
            try:
                session.sock.send(data)
            except (BlockingIOError, InterruptedError):
                pass  # the target's socket is full: dropped, as UDP may
            except OSError as exc:  # e.g. ECONNREFUSED left by an ICMP error: the next datagram re-chooses
                log.debug("%s: send to %s failed: %s", self.name, session.target, exc)
                self.end(session)

    def _open(self, client: Any) -> Session | None:
        host = client[0] if isinstance(client, tuple) else str(client)
        held = self.per_client.get(host, 0)
        if len(self.sessions) >= self.max_sessions or held >= self.max_sessions_per_client:
            self.over_budget += 1
            return None
        chosen = self.choose(client)
        if chosen is None:
            return None
        target, address = chosen
        try:
            sock = self.dial_socket(target, address)
        except OSError as exc:
            log.warning("%s: no socket for %s: %s", self.name, target, exc)
            return None
        try:
            sock.connect(address)
        except OSError as exc:
            sock.close()
            log.debug("%s: %s: %s", self.name, target, exc)
            return None
        session = self.sessions[client] = Session(client, target, sock)
        self.per_client[host] = held + 1
        assert self._loop is not None
        self._loop.add_reader(sock.fileno(), self._reply, session)
        if self._sweeper is None:
            self._sweeper = self._loop.call_later(self.sweep_every, self._sweep)
        self.opened(session)
        return session

    def _reply(self, session: Session) -> None:
        assert self.sock is not None
        for _ in range(BATCH):
            try:
                data = session.sock.recv(MAX_DATAGRAM)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:  # ICMP unreachable from the target: end the session
                self.end(session)
                return
            session.last = time.monotonic()
            try:
                self.sock.sendto(data, session.client)
            except (BlockingIOError, InterruptedError):
                pass
            except OSError as exc:
                log.debug("%s: reply to %s failed: %s", self.name, session.client, exc)

    def end(self, session: Session) -> None:
        """End `session` (its client's next datagram opens a new one)."""
        if self.sessions.get(session.client) is session:
            del self.sessions[session.client]
            host = session.client[0] if isinstance(session.client, tuple) else str(session.client)
            left = self.per_client.get(host, 1) - 1
            if left > 0:
                self.per_client[host] = left
            else:
                self.per_client.pop(host, None)
        if self._loop is not None:
            self._loop.remove_reader(session.sock.fileno())
        session.sock.close()

    def _sweep(self) -> None:
        self._sweeper = None
        cutoff = time.monotonic() - self.timeout
        for session in [s for s in self.sessions.values() if s.last < cutoff]:
            self.end(session)
        if self.sessions and self._loop is not None:
            self._sweeper = self._loop.call_later(self.sweep_every, self._sweep)

    def close(self) -> None:
        if self._loop is not None and self.sock is not None:
            self._loop.remove_reader(self.sock.fileno())
        for session in list(self.sessions.values()):
            self.end(session)
        if self._sweeper is not None:
            self._sweeper.cancel()
            self._sweeper = None
        if self.sock is not None:
            self.sock.close()
            self.sock = None
