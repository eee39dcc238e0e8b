"""What agnhost's webhook servers (`webhook`, `crd-conversion-webhook`) share: the serving certificate loaded as
tls.LoadX509KeyPair loads it (a failure is klog.Fatal: the line on stderr, exit 255), an HTTPS server on `:PORT`
whose handshakes happen on the request's own thread (a slow client holds up no other), and klog's line format."""

from __future__ import annotations

import os
import socket
import ssl
import sys
import time

from .serving import GoHandler, Server, serve_in_background


def klog(severity: str, source: str, message: str) -> None:
    """One klog line on stderr: `E1128 08:07:51.123456       7 main.go:61] message`."""
    now = time.time()
    stamp = time.strftime("%m%d %H:%M:%S", time.localtime(now)) + f".{int(now % 1 * 1e6):06d}"
    sys.stderr.write(f"{severity}{stamp} {os.getpid():>7} {source}] {message}\n")
    sys.stderr.flush()


def fatal(source: str, message: str) -> None:
    """klog.Fatal: log the line and exit 255."""
    klog("F", source, message)
    raise SystemExit(255)


def server_context(cert_file: str, key_file: str, source: str) -> ssl.SSLContext:
    """A TLS server context for the key pair (Go's error words when a file is missing or unreadable)."""
    for path in (cert_file, key_file):
        if not os.path.isfile(path):
            fatal(source, f"open {path}: no such file or directory")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        context.load_cert_chain(cert_file, key_file)
    except (ssl.SSLError, OSError):
        fatal(source, "tls: failed to find any PEM data in certificate input")
    context.set_alpn_protocols(["http/1.1"])
    return context


class TlsServer(Server):
    """The threading server whose failed handshakes are logged as Go's net/http logs them, not as tracebacks."""

    def handle_error(self, request: object, client_address: tuple) -> None:
        error = sys.exc_info()[1]
        host, port = client_address[0], client_address[1]
        sys.stderr.write(time.strftime("%Y/%m/%d %H:%M:%S ") + f"http: TLS handshake error from {host}:{port}: "
                         f"{error}\n")


def serve_tls(port: int, handler: type[GoHandler], context: ssl.SSLContext) -> Server:
    """Listen on `port` and serve HTTPS on a daemon thread; each connection's handshake runs on its own thread."""

    def wrap(sock: socket.socket) -> socket.socket:
        return context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)

    return serve_in_background(port, handler, wrap, server_class=TlsServer)
