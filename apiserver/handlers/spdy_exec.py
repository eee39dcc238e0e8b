"""exec and attach over raw SPDY/3.1, as client-go's SPDY executor speaks them (the e2e framework's
`ExecCommandInContainer`, kubectl before 1.30 or with `KUBECTL_REMOTE_COMMAND_WEBSOCKETS=false`): the request is an
HTTP/1.1 upgrade to `SPDY/3.1`; the API server answers `101 Switching Protocols` with the `X-Stream-Protocol-Version`
it chose (v4.channel.k8s.io) and takes the connection over. The client opens one SPDY stream per channel (header
`streamtype`: error, stdin, stdout, stderr, resize, as the query's flags ask); each is relayed to the matching channel
of a WebSocket to the kubelet, and the kubelet's final v4 Status (Success, or NonZeroExitCode with an ExitCode cause)
is written on the error stream before every stream ends and the session goes away.

The connection is taken from aiohttp with asyncio's public `Transport.set_protocol` after the 101 is written; the
replaced protocol still learns when the connection is lost."""

from __future__ import annotations

import asyncio
import contextlib

import aiohttp
from aiohttp import web

from ...machinery.spdy import GOAWAY, PING, RST_STREAM, SYN_STREAM, Codec
from .. import errors

PROTOCOL = "v4.channel.k8s.io"
STDIN, STDOUT, STDERR, ERROR, RESIZE, CLOSE = 0, 1, 2, 3, 4, 255
CHANNELS = {"stdin": STDIN, "stdout": STDOUT, "stderr": STDERR, "error": ERROR, "resize": RESIZE}
STREAM_TIMEOUT = 30.0  # upstream's wait for the client's streams
READ_LIMIT = 1 << 20  # bytes queued from the client before its reads are paused


def is_spdy_upgrade(request: web.Request) -> bool:
    return request.headers.get("Upgrade", "").lower() == "spdy/3.1"


def _flag(request: web.Request, name: str) -> bool:
    return request.query.get(name, "").lower() in ("1", "true")


def expected_streams(request: web.Request) -> set[str]:
    """The streams upstream's server waits for, from the request's flags."""
    tty = _flag(request, "tty")
    wanted = {"error"}
    wanted |= {"stdin"} if _flag(request, "stdin") else set()
    wanted |= {"stdout"} if _flag(request, "stdout") else set()
    wanted |= {"stderr"} if _flag(request, "stderr") and not tty else set()
    wanted |= {"resize"} if tty else set()
    return wanted


def negotiate(request: web.Request) -> str:
    """The stream protocol both sides speak, or 403 as upstream's `unable to negotiate protocol`."""
    offered = [p.strip() for value in request.headers.getall("X-Stream-Protocol-Version", ())
               for p in value.split(",") if p.strip()]
    if PROTOCOL not in offered:
        raise errors.StatusError(403, "Forbidden", f"unable to upgrade: unable to negotiate protocol: client "
                                 f"supports {offered}, server supports [{PROTOCOL}]", {})
    return PROTOCOL


class _Connection(asyncio.Protocol):
    """The taken-over connection: bytes in are queued (reads paused past READ_LIMIT), writes wait while the
    transport's buffer is full; the connection's loss is passed on to the protocol it replaced."""

    def __init__(self, transport: asyncio.Transport, replaced: asyncio.BaseProtocol) -> None:
        self.transport = transport
        self.replaced = replaced
        self.incoming: asyncio.Queue[bytes] = asyncio.Queue()
        self.queued = 0
        self.paused = False
        self.writable = asyncio.Event()
        self.writable.set()
        self.lost = False

    def data_received(self, data: bytes) -> None:
        self.incoming.put_nowait(data)
        self.queued += len(data)
        if self.queued > READ_LIMIT and not self.paused:
            self.paused = True
            self.transport.pause_reading()

    async def read(self) -> bytes:
        data = await self.incoming.get()
        self.queued -= len(data)
        if self.paused and self.queued <= READ_LIMIT // 2:
            self.paused = False
            self.transport.resume_reading()
        return data

    def eof_received(self) -> bool | None:
        self.incoming.put_nowait(b"")
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        self.writable.set()
        self.incoming.put_nowait(b"")
        self.replaced.connection_lost(exc)

    def pause_writing(self) -> None:
        self.writable.clear()

    def resume_writing(self) -> None:
        self.writable.set()

    async def write(self, data: bytes) -> None:
        await self.writable.wait()
        if not self.lost:
            self.transport.write(data)


class _Session:
    """One SPDY exec session relayed to one kubelet WebSocket."""

    def __init__(self, connection: _Connection, upstream: aiohttp.ClientWebSocketResponse,
                 wanted: set[str]) -> None:
        self.connection = connection
        self.upstream = upstream
        self.wanted = wanted
        self.codec = Codec()
        self.streams: dict[str, int] = {}
        self.kinds: dict[int, str] = {}
        self.ready = asyncio.Event()

    async def run(self) -> None:
        reading = asyncio.create_task(self._from_client())
        try:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._ready_or_gone(reading), STREAM_TIMEOUT)
            if self.ready.is_set():
                await self._from_kubelet()
        finally:
            reading.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reading
            await self.upstream.close()
            await self.connection.write(Codec.goaway(0))
            self.connection.transport.close()

    async def _ready_or_gone(self, reading: asyncio.Task[None]) -> None:
        waiting = asyncio.create_task(self.ready.wait())
        try:
            await asyncio.wait([waiting, reading], return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiting.cancel()

    async def _from_client(self) -> None:
        while data := await self.connection.read():
            for frame in self.codec.feed(data):
                if frame.kind == SYN_STREAM:
                    kind = (frame.headers or {}).get("streamtype", "")
                    await self.connection.write(self.codec.syn_reply(frame.stream))
                    self.streams[kind] = frame.stream
                    self.kinds[frame.stream] = kind
                    if self.wanted <= self.streams.keys():
                        self.ready.set()
                elif frame.kind == 0:
                    await self._to_kubelet(self.kinds.get(frame.stream, ""), frame.payload, bool(frame.flags & 1))
                elif frame.kind == PING:
                    await self.connection.write(Codec.ping(frame.payload))
                elif frame.kind == RST_STREAM and self.kinds.get(frame.stream) == "stdin":
                    await self._to_kubelet("stdin", b"", True)
                elif frame.kind == GOAWAY:
                    break

    async def _to_kubelet(self, kind: str, payload: bytes, fin: bool) -> None:
        if kind not in ("stdin", "resize") or self.upstream.closed:
            return
        with contextlib.suppress(ConnectionResetError, RuntimeError):
            if payload:
                await self.upstream.send_bytes(bytes([CHANNELS[kind]]) + payload)
            if fin and kind == "stdin" and self.upstream.protocol == "v5.channel.k8s.io":
                await self.upstream.send_bytes(bytes([CLOSE, STDIN]))

    async def _from_kubelet(self) -> None:
        ids = {CHANNELS[kind]: stream for kind, stream in self.streams.items()}
        if STDERR not in ids and STDOUT in ids:
            ids[STDERR] = ids[STDOUT]  # a terminal has one output
        async for message in self.upstream:
            if message.type != aiohttp.WSMsgType.BINARY:
                if message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED, aiohttp.WSMsgType.ERROR):
                    break
                continue
            data: bytes = message.data
            stream = ids.get(data[0]) if data else None
            if stream is not None and len(data) > 1:
                await self.connection.write(Codec.data(stream, data[1:]))
            if self.connection.lost:
                return
        for kind in ("stdout", "stderr", "error"):
            if kind in self.streams:
                await self.connection.write(Codec.data(self.streams[kind], b"", fin=True))


async def relay(session: aiohttp.ClientSession, url: str, params: list[tuple[str, str]],
                headers: dict[str, str], request: web.Request) -> web.StreamResponse:
    """Answer a SPDY/3.1 upgrade for exec or attach at `url` (the kubelet's WebSocket endpoint)."""
    protocol = negotiate(request)
    wanted = expected_streams(request)
    if wanted == {"error"}:
        raise errors.bad_request("you must specify at least 1 of stdin, stdout, stderr")
    try:
        upstream = await session.ws_connect(url, params=params, protocols=("v5.channel.k8s.io", PROTOCOL),
                                            headers=headers, max_msg_size=16 << 20, autoping=True)
    except aiohttp.WSServerHandshakeError as exc:
        raise errors.StatusError(exc.status if exc.status < 500 else 500, "BadRequest", exc.message, {}) from None
    except aiohttp.ClientError as exc:
        raise errors.StatusError(503, "ServiceUnavailable", f"error dialing backend: {exc}", {}) from None
    try:
        response = web.StreamResponse(status=101, headers={"Connection": "Upgrade", "Upgrade": "SPDY/3.1",
                                                           "X-Stream-Protocol-Version": protocol})
        await response.prepare(request)  # a StreamResponse writes its headers at once
        transport = request.transport
        if transport is None or transport.is_closing():
            return response
        connection = _Connection(transport, transport.get_protocol())
        transport.set_protocol(connection)
    except BaseException:
        await upstream.close()
        raise
    await _Session(connection, upstream, wanted).run()
    response.force_close()
    return response
