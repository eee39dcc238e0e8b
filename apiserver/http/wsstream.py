"""A byte stream (a container's log) sent over a WebSocket, as upstream's wsstream.Reader: the protocol chosen from
the client's offer among `binary.k8s.io` (or none: binary frames) and `base64.binary.k8s.io` (text frames,
base64), an empty first message (the ping), then one message per read of at most 2048 bytes, then a close."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import AsyncIterator

from aiohttp import web

BINARY = "binary.k8s.io"
BASE64 = "base64.binary.k8s.io"
READER_PROTOCOLS = {"": True, BINARY: True, BASE64: False}  # protocol -> binary frames
CHUNK = 2048


def is_websocket_request(request: web.Request) -> bool:
    """wsstream.IsWebSocketRequest: a `Connection: upgrade` with `Upgrade: websocket`."""
    connection = [v.strip().lower() for v in request.headers.get("Connection", "").split(",")]
    return "upgrade" in connection and request.headers.get("Upgrade", "").lower() == "websocket"


def chosen_protocol(request: web.Request) -> str | None:
    """The first protocol the client offers that the reader speaks ("" when it offers none); None if none fits."""
    offered = [p.strip() for p in request.headers.get("Sec-WebSocket-Protocol", "").split(",") if p.strip()] or [""]
    return next((p for p in offered if p in READER_PROTOCOLS), None)


async def send_stream(request: web.Request, chunks: AsyncIterator[bytes]) -> web.StreamResponse:
    """Accept the WebSocket and send `chunks` as upstream's Reader does; a client offering only protocols it does
    not speak is refused with 403, as golang.org/x/net/websocket refuses a failed handshake."""
    protocol = chosen_protocol(request)
    if protocol is None:
        return web.Response(status=403, text="")
    binary = READER_PROTOCOLS[protocol]
    socket = web.WebSocketResponse(protocols=[protocol] if protocol else ())
    await socket.prepare(request)

    async def send() -> None:
        await (socket.send_bytes(b"") if binary else socket.send_str(""))
        async for chunk in chunks:
            for start in range(0, len(chunk), CHUNK):
                part = chunk[start:start + CHUNK]
                await (socket.send_bytes(part) if binary else socket.send_str(base64.b64encode(part).decode()))

    async def ignore_receives() -> None:  # as upstream's IgnoreReceives: until the client closes
        async for _ in socket:
            pass

    tasks = [asyncio.create_task(send()), asyncio.create_task(ignore_receives())]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await socket.close()
    return socket
