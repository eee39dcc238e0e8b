"""UDP forwarding: a socket per (address, port); each client address gets a session, a connected socket to
the endpoint chosen for it, whose replies go back to the client from the service address. Sessions end after
`timeout` seconds without traffic, and at once when their endpoint leaves the Service (as kube-proxy clears
the UDP conntrack entries of a removed endpoint), so the next datagram goes to a live endpoint."""

from __future__ import annotations

import asyncio
import logging
import socket
import time
from typing import TYPE_CHECKING, Any

from .model import Endpoint

if TYPE_CHECKING:
    from .server import PortState

log = logging.getLogger("mini-kube.proxy")
MAX_DATAGRAM = 65535
BATCH = 64  # datagrams read per wake-up before yielding to the loop


class _Session:
    __slots__ = ("client", "endpoint", "sock", "last")

    def __init__(self, client: tuple[Any, ...], endpoint: Endpoint, sock: socket.socket) -> None:
        self.client = client
        self.endpoint = endpoint
        self.sock = sock
        self.last = time.monotonic()


class UdpListener:
    """Receives on one socket for one ServicePort: `kind` "internal" (a ClusterIP) or "external" (a NodePort)."""

    protocol = "UDP"

    def __init__(self, state: PortState, kind: str, sock: socket.socket, maker: Any, timeout: float = 30.0) -> None:
        self.state = state
        self.kind = kind
        self.sock = sock
        self.maker = maker
        self.timeout = timeout
        self.address: tuple[str, int] = sock.getsockname()[:2]
        self.sessions: dict[tuple[Any, ...], _Session] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._sweeper: asyncio.TimerHandle | None = None

    async def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._loop.add_reader(self.sock.fileno(), self._readable)

    def _readable(self) -> None:
        now = time.monotonic()
        for _ in range(BATCH):
            try:
                data, client = self.sock.recvfrom(MAX_DATAGRAM)
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:
                log.debug("%s: receive failed: %s", self.state.port.name, exc)
                return
            session = self.sessions.get(client)
            if session is None:
                session = self._open(client)
                if session is None:
                    continue  # no endpoint: dropped
            session.last = now
            try:
                session.sock.send(data)
            except (BlockingIOError, InterruptedError):
                pass  # the endpoint's socket is full: dropped, as UDP may
            except OSError as exc:  # e.g. ECONNREFUSED left by an ICMP error: the next datagram re-chooses
                log.debug("%s: send to %s failed: %s", self.state.port.name, session.endpoint, exc)
                self._end(session)

    def _open(self, client: tuple[Any, ...]) -> _Session | None:
        endpoint = self.state.pick(self.kind, client[0])
        self.state.note(self, client, endpoint)
        if endpoint is None:
            return None
        try:
            sock = self.maker.socket(endpoint.ip, socket.SOCK_DGRAM)
        except OSError as exc:
            log.warning("%s: no socket for endpoint %s: %s", self.state.port.name, endpoint, exc)
            return None
        try:
            sock.connect(endpoint.address)
        except OSError as exc:
            sock.close()
            log.debug("%s: endpoint %s: %s", self.state.port.name, endpoint, exc)
            return None
        session = self.sessions[client] = _Session(client, endpoint, sock)
        assert self._loop is not None
        self._loop.add_reader(sock.fileno(), self._reply, session)
        if self._sweeper is None:
            self._sweeper = self._loop.call_later(self.timeout / 2, self._sweep)
        return session

    def _reply(self, session: _Session) -> None:
        for _ in range(BATCH):
            try:
                data = session.sock.recv(MAX_DATAGRAM)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:  # ICMP unreachable from the endpoint: end the session
                self._end(session)
                return
            session.last = time.monotonic()
            try:
                self.sock.sendto(data, session.client)
            except (BlockingIOError, InterruptedError):
                pass
            except OSError as exc:
                log.debug("%s: reply to %s failed: %s", self.state.port.name, session.client, exc)

    def _end(self, session: _Session) -> None:
        if self.sessions.get(session.client) is session:
            del self.sessions[session.client]
        if self._loop is not None:
            self._loop.remove_reader(session.sock.fileno())
        session.sock.close()

    def _sweep(self) -> None:
        self._sweeper = None
        cutoff = time.monotonic() - self.timeout
        for session in [s for s in self.sessions.values() if s.last < cutoff]:
            self._end(session)
        if self.sessions and self._loop is not None:
            self._sweeper = self._loop.call_later(self.timeout / 2, self._sweep)

    def endpoints_changed(self) -> None:
        """End the sessions whose endpoint is no longer among this listener's endpoints."""
        if self.sessions:
            alive = self.state.usable(self.kind)
            for session in [s for s in self.sessions.values() if s.endpoint not in alive]:
                self._end(session)

    def close(self) -> None:
        if self._loop is not None:
            self._loop.remove_reader(self.sock.fileno())
        for session in list(self.sessions.values()):
            self._end(session)
        if self._sweeper is not None:
            self._sweeper.cancel()
            self._sweeper = None
        self.sock.close()
