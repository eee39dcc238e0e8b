"""TCP forwarding: a listener per (address, port) that splices every accepted connection to an endpoint.

The two sockets of a forwarded connection are a pair of asyncio protocols: bytes read on one side are written
to the other at once (reads of up to 256 KiB); when a side's write buffer passes its high-water mark the other
side stops reading until it drains (backpressure, so memory stays bounded); an EOF on one side shuts down the
other side's write half (half-close), and the pair closes once both directions have ended; a reset on one side
resets the other. No endpoint, or none that accepts, resets the client at once."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import struct
import time
from typing import TYPE_CHECKING, Any

from .model import Endpoint

if TYPE_CHECKING:
    from .server import PortState

log = logging.getLogger("mini-kube.proxy")
HIGH_WATER = 1 << 20
LOW_WATER = 256 << 10
CONNECT_TIMEOUTS = (0.25, 0.5, 1.0, 2.0)  # one try per endpoint, as upstream's userspace proxy
_LINGER_RST = struct.pack("ii", 1, 0)


def reset(transport: asyncio.BaseTransport) -> None:
    """Close with a TCP RST (SO_LINGER 0), not an orderly FIN."""
    sock = transport.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, _LINGER_RST)
    transport.abort()


class _Side(asyncio.Protocol):
    """One socket of a forwarded connection."""

    __slots__ = ("transport", "peer", "eof", "closed")

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.peer: _Side | None = None
        self.eof = False
        self.closed = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        transport.set_write_buffer_limits(HIGH_WATER, LOW_WATER)  # type: ignore[attr-defined]

    def data_received(self, data: bytes) -> None:
        peer = self.peer
        if peer is not None and peer.transport is not None and not peer.closed:
            peer.transport.write(data)

    def eof_received(self) -> bool:
        self.eof = True
        peer = self.peer
        if peer is not None and peer.transport is not None and not peer.closed:
            if peer.eof:  # both directions have ended
                self.transport.close()  # type: ignore[union-attr]
                peer.transport.close()
                return True
            if peer.transport.can_write_eof():
                peer.transport.write_eof()  # after what is buffered has been sent
        return True  # keep our write half open: the other direction may still flow

    def pause_writing(self) -> None:
        if self.peer is not None and self.peer.transport is not None:
            self.peer.transport.pause_reading()

    def resume_writing(self) -> None:
        if self.peer is not None and self.peer.transport is not None and not self.peer.closed:
            self.peer.transport.resume_reading()

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        peer = self.peer
        if peer is not None and peer.transport is not None and not peer.closed:
            if exc is not None:
                reset(peer.transport)
            else:
                peer.transport.close()


class _Client(_Side):
    """The accepted side: chooses an endpoint, dials it, then forwards."""

    __slots__ = ("listener", "task")

    def __init__(self, listener: TcpListener) -> None:
        super().__init__()
        self.listener = listener
        self.task: asyncio.Task[None] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        transport.pause_reading()  # type: ignore[attr-defined]
        peer = transport.get_extra_info("peername") or ("", 0)
        endpoint = self.listener.state.balancer.pick(self.listener.kind, peer[0])
        if endpoint is None:
            self.listener.state.note(self.listener, peer, None)
            reset(transport)
            return
        self.task = asyncio.get_running_loop().create_task(self._dial(endpoint, peer))

    async def _dial(self, endpoint: Endpoint, peer: tuple[Any, ...]) -> None:
        listener, tried = self.listener, []
        loop = asyncio.get_running_loop()
        chosen: Endpoint | None = endpoint
        for timeout in CONNECT_TIMEOUTS:
            if chosen is None or self.closed:
                break
            tried.append(chosen)
            sock = listener.maker.socket(chosen.ip, socket.SOCK_STREAM)
            try:
                await asyncio.wait_for(loop.sock_connect(sock, chosen.address), timeout)
                backend = _Side()
                await loop.create_connection(lambda b=backend: b, sock=sock)
            except (OSError, TimeoutError) as exc:
                sock.close()
                log.debug("%s: endpoint %s failed: %s", listener.state.port.name, chosen, exc)
                chosen = listener.state.balancer.pick(listener.kind, peer[0], tuple(tried))
                continue
            except BaseException:
                sock.close()
                raise
            listener.state.note(listener, peer, chosen)
            if self.closed:  # the client went away while we dialled
                backend.transport.close()  # type: ignore[union-attr]
                return
            self.peer, backend.peer = backend, self
            self.transport.resume_reading()  # type: ignore[union-attr]
            return
        listener.state.note(listener, peer, None)
        if not self.closed and self.transport is not None:
            reset(self.transport)

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        self.task = None


class TcpListener:
    """Accepts on one socket for one ServicePort: `kind` "internal" (a ClusterIP) or "external" (a NodePort)."""

    protocol = "TCP"

    def __init__(self, state: PortState, kind: str, sock: socket.socket, maker: Any) -> None:
        self.state = state
        self.kind = kind
        self.sock = sock
        self.maker = maker
        self.address: tuple[str, int] = sock.getsockname()[:2]
        self.server: asyncio.base_events.Server | None = None
        self.opened = time.monotonic()

    async def start(self) -> None:
        self.server = await asyncio.get_running_loop().create_server(lambda: _Client(self), sock=self.sock)

    def close(self) -> None:
        """Stop accepting; connections already forwarded go on until they end."""
        if self.server is not None:
            self.server.close()
        else:
            self.sock.close()

    def endpoints_changed(self) -> None:
        """Nothing to do: new connections read the balancer; connections in flight are left alone."""
