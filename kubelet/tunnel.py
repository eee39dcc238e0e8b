"""HTTP CONNECT into the cluster network: how the API server reaches Pod and Service addresses (admission and
conversion webhooks behind a Service), as upstream's API server does through its `cluster` egress (a
konnectivity agent on the nodes speaking HTTP CONNECT). The API server runs in the machine's network namespace,
where Pod IPs do not exist; the kubelet opens the connection inside the cluster network's namespace and relays the
bytes, TLS included, untouched.

`CONNECT 10.244.1.5:8443 HTTP/1.1` answers `200 Connection established` and then carries the connection; a dial
that fails answers 502 with the dial's error (Go's words) as the reason phrase. Loopback and unspecified targets
are refused (403): the tunnel only leads into the cluster network, never back into a namespace's own loopback."""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress

from aiohttp import web
from mini_kube.network.namespaces import open_connection_in

DIAL_TIMEOUT = 10.0
HIGH_WATER = 1 << 20  # bytes queued towards the target before the client's reads are paused


def target_of(authority: str) -> tuple[str, int]:
    """`host:port` (IPv6 in brackets) of a CONNECT request; ValueError when it is not an IP address and port."""
    host, _, port = authority.rpartition(":")
    host = host.removeprefix("[").removesuffix("]")
    address = ipaddress.ip_address(host)
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"invalid port in {authority!r}")
    if address.is_loopback or address.is_unspecified:
        raise PermissionError(f"{authority} is not in the cluster network")
    return str(address), int(port)


def dial_error(exc: BaseException, host: str, port: int) -> str:
    """Go's `dial tcp ip:port: connect: ...` for a failed dial."""
    shown = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    if isinstance(exc, TimeoutError):
        return f"dial tcp {shown}: i/o timeout"
    reason = (getattr(exc, "strerror", None) or str(exc) or type(exc).__name__).lower()
    return f"dial tcp {shown}: connect: {reason}"


class _Client(asyncio.Protocol):
    """The taken-over client connection: what it sends goes to the target (reads paused while the target's
    buffer is full); its end ends the target's write side."""

    def __init__(self, transport: asyncio.Transport, target: asyncio.StreamWriter,
                 replaced: asyncio.BaseProtocol) -> None:
        self.transport = transport
        self.target = target
        self.replaced = replaced
        self.done = asyncio.get_running_loop().create_future()

    def data_received(self, data: bytes) -> None:
        if self.target.is_closing():
            return
        self.target.write(data)
        if self.target.transport.get_write_buffer_size() > HIGH_WATER:
            self.transport.pause_reading()
            asyncio.get_running_loop().create_task(self._resume())

    async def _resume(self) -> None:
        with contextlib.suppress(ConnectionError):
            await self.target.drain()
        if not self.transport.is_closing():
            self.transport.resume_reading()

    def eof_received(self) -> bool:
        if not self.target.is_closing() and self.target.can_write_eof():
            self.target.write_eof()
        return True  # keep our write side open: the target may still answer

    def connection_lost(self, exc: Exception | None) -> None:
        self.target.close()
        if not self.done.done():
            self.done.set_result(None)
        self.replaced.connection_lost(exc)


async def _to_client(reader: asyncio.StreamReader, client: _Client) -> None:
    """The target's bytes to the client until the target ends; then the client's connection closes."""
    transport = client.transport
    with contextlib.suppress(ConnectionError):
        while data := await reader.read(1 << 16):
            if transport.is_closing():
                return
            transport.write(data)
    transport.close()


async def connect(request: web.Request, netns: str | None) -> web.StreamResponse:
    """Answer one CONNECT: dial the target inside `netns` (the cluster network) and relay until both ends close."""
    if netns is None:
        return web.Response(status=503, reason="this node has no cluster network")
    try:
        host, port = target_of(request.raw_path)
    except PermissionError as exc:
        return web.Response(status=403, reason=str(exc))
    except ValueError as exc:
        return web.Response(status=400, reason=f"bad CONNECT target: {exc}".replace("\n", " "))
    try:
        reader, writer = await asyncio.wait_for(open_connection_in(netns, host, port), DIAL_TIMEOUT)
    except (OSError, TimeoutError) as exc:
        return web.Response(status=502, reason=dial_error(exc, host, port))
    response = web.StreamResponse(status=200, reason="Connection established")
    response.content_length = 0
    transport = request.transport
    try:
        await response.prepare(request)
        if transport is None or transport.is_closing():
            return response
        client = _Client(transport, writer, transport.get_protocol())
        transport.set_protocol(client)
        relay = asyncio.create_task(_to_client(reader, client))
        try:
            await client.done
        finally:
            relay.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await relay
    finally:
        writer.close()
    response.force_close()
    return response
