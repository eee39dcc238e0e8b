"""`agnhost serve-hostname`: the hostname over HTTP (the default), raw TCP or UDP on `--port` (9376)."""

from __future__ import annotations

import contextlib
import signal
import socket
import threading
import time

from .flags import Flag, parse_or_exit
from .serving import GoHandler, bind_address, hostname, log, serve_in_background

FLAGS = {"tcp": Flag(bool, False), "udp": Flag(bool, False), "http": Flag(bool, True), "close": Flag(bool, False),
         "port": Flag(int, 9376)}
AWAIT_DELETION = 60.0
"""Seconds it keeps running after SIGTERM, as upstream's (the kubelet kills it when the grace period ends)."""


def serve_tcp(listener: socket.socket, name: bytes) -> None:
    """Each connection gets the hostname and is closed."""
    while True:
        conn, peer = listener.accept()
        log(f"TCP request from {peer[0]}:{peer[1]}")
        with contextlib.suppress(OSError):
            conn.sendall(name)
        conn.close()


def serve_udp(sock: socket.socket, name: bytes) -> None:
    """Each datagram gets the hostname back."""
    while True:
        _data, peer = sock.recvfrom(16)
        log(f"UDP request from {peer[0]}:{peer[1]}")
        sock.sendto(name, peer)


def listen(kind: int, port: int) -> socket.socket:
    """A TCP listener or UDP socket on the port, or Go's fatal log line and exit 1."""
    sock = socket.socket(socket.AF_INET, kind)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((bind_address(), port))
    except OSError as error:
        what = "net.Listen()" if kind == socket.SOCK_STREAM else "ListenUDP()"
        log(f"Error from {what}: {error.strerror}")
        raise SystemExit(1) from None
    if kind == socket.SOCK_STREAM:
        sock.listen(128)
    return sock


def main(argv: list[str]) -> int:
    """Serve until SIGTERM, then wait for deletion."""
    opts = parse_or_exit("serve-hostname", FLAGS, argv)
    if opts["http"] and (opts["tcp"] or opts["udp"]):
        log("Can't server TCP/UDP mode and HTTP mode at the same time")
        return 1
    name, port = hostname(), opts["port"]
    terminated = threading.Event()
    signal.signal(signal.SIGTERM, lambda _signum, _frame: terminated.set())
    if opts["tcp"]:
        threading.Thread(target=serve_tcp, args=(listen(socket.SOCK_STREAM, port), name.encode()),
                         daemon=True).start()
    if opts["udp"]:
        threading.Thread(target=serve_udp, args=(listen(socket.SOCK_DGRAM, port), name.encode()),
                         daemon=True).start()
    if opts["http"]:
        close = opts["close"]

        class Handler(GoHandler):
            def handle_request(self) -> None:
                log(f"HTTP request from {self.client_address[0]}:{self.client_address[1]}")
                self.reply(name, headers={"Connection": "close"} if close else None)

        serve_in_background(port, Handler)
    log(f"Serving on port {port}.")
    while not terminated.wait(1.0):
        pass
    log("Shutting down after receiving signal: terminated.")
    log("Awaiting pod deletion.")
    time.sleep(AWAIT_DELETION)
    return 0
