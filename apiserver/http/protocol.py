"""The connection layer under the handler chain: timeouts for clients that never send a request, Status bodies
for requests that fail before the chain sees them (an over-long URL or header), and logging that cannot flood.

- A connection must complete its first request's headers within `header_timeout` seconds (upstream:
  ReadHeaderTimeout), and an idle kept-alive connection is closed after `keepalive_timeout` (IdleTimeout).
- Parse failures answer a `Status` (400 BadRequest, 413, 431 ...), like every other error.
- Repeated errors (a client storm, the file-descriptor limit) are logged once per interval with a count.

Built on aiohttp's public low-level server: `web.Server` (its `request_factory`, connection hooks and protocol
factory), `web.RequestHandler` (its `handle_error` and `log_exception`) and `web.ServerRunner`; no aiohttp
application, so every request goes straight to the one handler chain.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, cast

import orjson
from aiohttp import web
from aiohttp.abc import AbstractStreamWriter
from aiohttp.http import HttpVersion11, RawRequestMessage
from aiohttp.streams import StreamReader

from ..ratelog import RATE_LIMITED

REASONS = {400: "BadRequest", 408: "Timeout", 413: "RequestEntityTooLarge", 414: "RequestURITooLong",
           431: "RequestHeaderFieldsTooLarge", 500: "InternalError", 503: "ServiceUnavailable"}

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def loop_exception_handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """asyncio's own errors (accept() at the file-descriptor limit repeats every second) without floods."""
    exc = context.get("exception")
    key = f"{context.get('message')}:{type(exc).__name__}"
    RATE_LIMITED.warning(key, "event loop: %s %s", context.get("message", ""), exc or "")


def status_body(status: int, message: str) -> bytes:
    """A Failure Status for an error found before the handler chain (its first line as the message)."""
    text = message.strip() or "bad request"
    return orjson.dumps({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                         "message": text.splitlines()[0], "reason": REASONS.get(status, "BadRequest"),
                         "code": status}, option=orjson.OPT_APPEND_NEWLINE)


class GuardedRequestHandler(web.RequestHandler):
    """aiohttp's connection handler with Status error bodies and rate-limited logs."""

    def log_exception(self, *args: Any, **kw: Any) -> None:
        exc = kw.get("exc_info")
        RATE_LIMITED.warning(f"request:{type(exc).__name__}", "could not handle a request: %s", exc)

    def handle_error(self, request: Any, status: int = 500, exc: BaseException | None = None,
                     message: str | None = None) -> web.StreamResponse:
        super().handle_error(request, status, exc, message)  # logs, and refuses once a response has started
        text = message or getattr(exc, "message", "") or ""
        answer = web.Response(status=status, body=status_body(status, text), content_type="application/json")
        answer.force_close()
        return answer


class GuardedServer(web.Server):
    """aiohttp's low-level server whose connections are GuardedRequestHandlers, each cut off if its first
    request's headers do not arrive within `header_timeout` seconds (0: no limit)."""

    def __init__(self, handler: Handler, *, header_timeout: float, client_max_size: int, **protocol: Any) -> None:
        # make_request makes every request a web.Request, which is what the handler chain is typed to take
        super().__init__(cast("Callable[[web.BaseRequest], Awaitable[web.StreamResponse]]", continue_expected(handler)),
                         request_factory=self.make_request, **protocol)
        self.header_timeout = header_timeout
        self.client_max_size = client_max_size
        self._protocol_options = protocol
        self._header_timers: dict[web.RequestHandler, asyncio.TimerHandle] = {}

    def __call__(self) -> web.RequestHandler:
        return GuardedRequestHandler(self, loop=asyncio.get_running_loop(), **self._protocol_options)

    def connection_made(self, handler: web.RequestHandler, transport: asyncio.Transport) -> None:
        super().connection_made(handler, transport)
        if self.header_timeout:
            self._header_timers[handler] = asyncio.get_running_loop().call_later(
                self.header_timeout, transport.close)  # a client that never finishes its headers (slowloris)

    def connection_lost(self, handler: web.RequestHandler, exc: BaseException | None = None) -> None:
        timer = self._header_timers.pop(handler, None)
        if timer is not None:
            timer.cancel()
        super().connection_lost(handler, exc)

    def make_request(self, message: RawRequestMessage, payload: StreamReader, protocol: web.RequestHandler,
                     writer: AbstractStreamWriter, task: asyncio.Task[None]) -> web.Request:
        """A request, once its headers are in: the connection's header timer is done."""
        timer = self._header_timers.pop(protocol, None)
        if timer is not None:
            timer.cancel()
        return web.Request(message, payload, protocol, writer, task, asyncio.get_running_loop(),
                           client_max_size=self.client_max_size)


def continue_expected(handler: Handler) -> Handler:
    """`Expect: 100-continue` answered before the handler reads the body (417 for other expectations)."""
    async def handle(request: web.Request) -> web.StreamResponse:
        expect = request.headers.get("Expect")
        if expect and request.version == HttpVersion11:
            if expect.lower() != "100-continue":
                return web.Response(status=417, body=status_body(417, f"Unknown Expect: {expect}"),
                                    content_type="application/json")
            await request.writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
            request.writer.output_size = 0  # the answer's own bytes start after the interim response
        return await handler(request)

    return handle
