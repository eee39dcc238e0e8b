"""Port-forwarding over SPDY carried in a WebSocket (kubectl 1.31+: subprotocol `SPDY/3.1+portforward.k8s.io`),
as the kubelet serves it: the client opens an error stream and a data stream per connection (headers
`streamtype`, `port`, `requestid`); the data stream is joined to localhost:port inside the Pod; a failure is
written on the error stream; each side's end is a FIN."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp

from ..machinery.spdy import GOAWAY, PING, RST_STREAM, SYN_STREAM, Codec

Connect = Callable[[int], Awaitable[tuple[asyncio.StreamReader, asyncio.StreamWriter]]]


class _Session:
    def __init__(self, ws: Any, connect: Connect) -> None:
        self.ws = ws
        self.connect = connect
        self.codec = Codec()
        self.lock = asyncio.Lock()
        self.pairs: dict[str, dict[str, Any]] = {}
        self.writers: dict[int, asyncio.StreamWriter] = {}
        self.pending: dict[int, list[bytes | None]] = {}  # data that came before the connection was made
        self.tasks: set[asyncio.Task[None]] = set()

    async def send(self, data: bytes) -> None:
        with contextlib.suppress(ConnectionResetError, RuntimeError):
            await self.ws.send_bytes(data)

    async def run(self) -> None:
        async for message in self.ws:
            if message.type != aiohttp.WSMsgType.BINARY:
                if message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.ERROR):
                    break
                continue
            for frame in self.codec.feed(message.data):
                if frame.kind == SYN_STREAM:
                    await self._open(frame.stream, frame.headers or {})
                elif frame.kind == 0:
                    self._data(frame.stream, frame.payload, bool(frame.flags & 1))
                elif frame.kind == PING:
                    await self.send(Codec.ping(frame.payload))
                elif frame.kind == RST_STREAM:
                    writer = self.writers.pop(frame.stream, None)
                    if writer is not None:
                        writer.close()
                elif frame.kind == GOAWAY:
                    break
        for writer in self.writers.values():
            writer.close()
        for task in self.tasks:
            task.cancel()

    async def _open(self, stream: int, headers: dict[str, str]) -> None:
        async with self.lock:
            await self.send(self.codec.syn_reply(stream))
        pair = self.pairs.setdefault(headers.get("requestid", str(stream)), {})
        pair[headers.get("streamtype", "data")] = stream
        pair["port"] = headers.get("port", "0")
        if "data" in pair and "error" in pair:
            self.pending.setdefault(pair["data"], [])
            task = asyncio.create_task(self._forward(int(pair["port"]), pair["data"], pair["error"]))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)

    def _data(self, stream: int, payload: bytes, fin: bool) -> None:
        writer = self.writers.get(stream)
        if writer is None:
            if stream in self.pending:
                self.pending[stream] += [payload] + ([None] if fin else [])
            return
        if payload:
            writer.write(payload)
        if fin and writer.can_write_eof():
            writer.write_eof()

    async def _forward(self, port: int, data: int, error: int) -> None:
        try:
            reader, writer = await self.connect(port)
        except OSError as exc:
            await self.send(Codec.data(error, f"error forwarding port {port} to pod: {exc}".encode(), fin=True))
            await self.send(Codec.data(data, b"", fin=True))
            return
        self.writers[data] = writer
        for chunk in self.pending.pop(data, []):
            if chunk is None:
                if writer.can_write_eof():
                    writer.write_eof()
            elif chunk:
                writer.write(chunk)
        try:
            while True:
                chunk = await reader.read(1 << 16)
                if not chunk:
                    break
                await self.send(Codec.data(data, chunk))
        except OSError:
            pass
        finally:
            await self.send(Codec.data(data, b"", fin=True))
            await self.send(Codec.data(error, b"", fin=True))
            self.writers.pop(data, None)
            writer.close()


async def serve_spdy_port_forward(ws: Any, connect: Connect) -> None:
    await _Session(ws, connect).run()
