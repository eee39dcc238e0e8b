"""The connection layer under the app: timeouts for clients that never send a request, Status bodies for
requests that fail before the app sees them (an over-long URL or header), and logging that cannot flood.

- A connection must complete its first request's headers within `header_timeout` seconds (upstream:
  ReadHeaderTimeout), and an idle kept-alive connection is closed after `idle_timeout` (IdleTimeout).
- Parse failures answer a `Status` (400 BadRequest, 413, 431 ...), like every other error.
- Repeated errors (a client storm, the file-descriptor limit) are logged once per LOG_INTERVAL with a count.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import orjson
from aiohttp import web
from aiohttp.web_protocol import RequestHandler
from aiohttp.web_server import Server

log = logging.getLogger("mini-kube.apiserver")

LOG_INTERVAL = 10.0
REASONS = {400: "BadRequest", 408: "Timeout", 413: "RequestEntityTooLarge", 414: "RequestURITooLong",
           431: "RequestHeaderFieldsTooLarge", 500: "InternalError", 503: "ServiceUnavailable"}


class RateLimitedLog:
    """Log a kind of message at most once per interval, saying how many were dropped meanwhile."""

    def __init__(self, interval: float = LOG_INTERVAL) -> None:
        self.interval = interval
        self._last: dict[str, float] = {}
        self._dropped: dict[str, int] = {}

    def warning(self, key: str, message: str, *args: Any) -> None:
        self.log(logging.WARNING, key, message, *args)

    def error(self, key: str, message: str, *args: Any, detail: str = "") -> None:
        """An error, with `detail` (a traceback) on the lines after the message."""
        self.log(logging.ERROR, key, message, *args, detail=detail)

    def log(self, level: int, key: str, message: str, *args: Any, detail: str = "") -> None:
        now = time.monotonic()
        if now - self._last.get(key, -self.interval) < self.interval:
            self._dropped[key] = self._dropped.get(key, 0) + 1
            return
        self._last[key] = now
        dropped = self._dropped.pop(key, 0)
        suffix = f" (and {dropped} more like it in the last {self.interval:.0f} s)" if dropped else ""
        log.log(level, message + suffix + ("\n%s" if detail else ""), *args, *((detail,) if detail else ()))


RATE_LIMITED = RateLimitedLog()


def loop_exception_handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """asyncio's own errors (accept() at the file-descriptor limit repeats every second) without floods."""
    exc = context.get("exception")
    key = f"{context.get('message')}:{type(exc).__name__}"
    RATE_LIMITED.warning(key, "event loop: %s %s", context.get("message", ""), exc or "")


class GuardedRequestHandler(RequestHandler):
    """aiohttp's connection handler with a header timeout, Status error bodies and rate-limited logs."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        timeout = getattr(self._manager, "header_timeout", 0)
        self._header_timer = asyncio.get_running_loop().call_later(timeout, self._no_request) if timeout else None

    def _no_request(self) -> None:
        if self._request_count == 0 and self.transport is not None:
            self.transport.close()  # a client that never finished its request's headers (slowloris)

    def connection_lost(self, exc: BaseException | None) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
        super().connection_lost(exc)

    def log_exception(self, *args: Any, **kw: Any) -> None:
        exc = kw.get("exc_info")
        RATE_LIMITED.warning(f"request:{type(exc).__name__}", "could not handle a request: %s", exc)

    def handle_error(self, request: Any, status: int = 500, exc: BaseException | None = None,
                     message: str | None = None) -> web.StreamResponse:
        response = super().handle_error(request, status, exc, message)
        text = (message or getattr(exc, "message", "") or "").strip() or "bad request"
        body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": text.splitlines()[0], "reason": REASONS.get(status, "BadRequest"), "code": status}
        answer = web.Response(status=status, body=orjson.dumps(body, option=orjson.OPT_APPEND_NEWLINE),
                              content_type="application/json")
        answer.force_close()
        del response
        return answer


class GuardedServer(Server):
    """Makes GuardedRequestHandlers."""

    header_timeout: float = 0

    def __call__(self) -> RequestHandler:
        return GuardedRequestHandler(self, loop=self._loop, **self._kwargs)


class GuardedRunner(web.AppRunner):
    """An AppRunner whose server makes GuardedRequestHandlers."""

    def __init__(self, app: web.Application, *, header_timeout: float, **kwargs: Any) -> None:
        super().__init__(app, **kwargs)
        self._header_timeout = header_timeout

    async def _make_server(self) -> Server:
        server = await super()._make_server()
        server.__class__ = GuardedServer
        server.header_timeout = self._header_timeout  # type: ignore[attr-defined]
        return server
