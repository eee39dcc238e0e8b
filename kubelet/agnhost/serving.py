"""What the HTTP subcommands share: Go's net/http answers (Date, Content-Type, Content-Length, keep-alive) on a
threading server bound as agnhost binds (`:PORT`), and the log lines Go's `log` package writes."""

from __future__ import annotations

import http.server
import os
import socket
import sys
import threading
import time
from collections.abc import Callable

BIND_ADDRESS_ENV = "AGNHOST_BIND_ADDRESS"


def log(message: str) -> None:
    """One line as Go's standard logger writes it: `2006/01/02 15:04:05 message` on stderr."""
    sys.stderr.write(time.strftime("%Y/%m/%d %H:%M:%S ") + message.rstrip("\n") + "\n")
    sys.stderr.flush()


def bind_address() -> str:
    """Every address of the network namespace (`:PORT` in Go) unless the environment names one."""
    return os.environ.get(BIND_ADDRESS_ENV, "0.0.0.0")


def hostname() -> str:
    """`os.Hostname()`: the container's UTS name (its Pod's hostname)."""
    return socket.gethostname()


class GoHandler(http.server.BaseHTTPRequestHandler):
    """A request handler answering as Go's net/http does; subclasses implement `handle_request`."""

    protocol_version = "HTTP/1.1"
    server_version = ""
    sys_version = ""

    def handle_request(self) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    def do_GET(self) -> None:  # noqa: N802 - the http.server name
        self.handle_request()

    do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = do_HEAD = do_GET

    def version_string(self) -> str:
        return ""

    def send_header(self, keyword: str, value: str) -> None:
        if keyword.lower() == "server" and not value:
            return
        super().send_header(keyword, value)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """A request net/http cannot read (a bad request line, headers too large): Go's plain answer, whatever
        the request line said (`HTTP/1.1 400 Bad Request`, text, the connection closed), where http.server would
        answer a one-word line (HTTP/0.9) with an HTML page and no status line."""
        text = f"{code} {http.HTTPStatus(code).phrase}"
        self.wfile.write(f"HTTP/1.1 {text}\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"
                         f"{text}".encode())
        self.close_connection = True

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the http.server signature
        """Quiet: each subcommand logs what its Go source logs."""

    def reply(self, body: bytes | str, status: int = 200, content_type: str | None = None,
              headers: dict[str, str] | None = None) -> None:
        """One complete answer: status, Go's headers and body (text/plain when the body is text, as Go sniffs)."""
        data = body.encode() if isinstance(body, str) else body
        self.send_response(status)
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        if data or content_type:
            self.send_header("Content-Type", content_type or sniff(data))
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)
        if headers and headers.get("Connection") == "close":
            self.close_connection = True


def sniff(data: bytes) -> str:
    """Go's http.DetectContentType for the bodies agnhost writes (text, JSON text, HTML)."""
    head = data.lstrip()[:512].lower()
    if head.startswith((b"<!doctype html", b"<html", b"<head", b"<body", b"<h1", b"<p", b"<div", b"<a ")):
        return "text/html; charset=utf-8"
    if all(b >= 0x20 or b in b"\t\n\r\x0c\x1b" for b in data[:512]):
        return "text/plain; charset=utf-8"
    return "application/octet-stream"


class Server(http.server.ThreadingHTTPServer):
    """A threading HTTP server whose request threads never keep the process alive."""

    daemon_threads = True
    allow_reuse_address = True


def serve_in_background(port: int, handler: type[GoHandler],
                        wrap: Callable[[socket.socket], socket.socket] | None = None,
                        server_class: type[Server] = Server) -> Server:
    """Listen on `port` now (failing as Go's ListenAndServe does, with its log line and exit 1) and serve on a
    daemon thread."""
    try:
        server = server_class((bind_address(), port), handler)
    except OSError as error:
        log(f"listen tcp :{port}: bind: {error.strerror.lower() if error.strerror else error}")
        raise SystemExit(1) from None
    if wrap is not None:
        server.socket = wrap(server.socket)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server
