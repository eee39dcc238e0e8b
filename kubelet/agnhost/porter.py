"""`agnhost porter`: for each `SERVE_PORT_N=value` (and `SERVE_TLS_PORT_N`, with `CERT_FILE`/`KEY_FILE`) in the
environment, HTTP on port N answering `value` to any request (`--json-response`: `{"Method":..,"Body":..}`).
SCTP ports (`SERVE_SCTP_PORT_N`) are not served: the host's Python has no SCTP sockets."""

from __future__ import annotations

import json
import os
import ssl
import threading

from .flags import Flag, parse_or_exit
from .serving import GoHandler, log, serve_in_background

FLAGS = {"json-response": Flag(bool, False)}
TCP_PREFIX, TLS_PREFIX = "SERVE_PORT_", "SERVE_TLS_PORT_"


def handler_for(value: str, json_response: bool) -> type[GoHandler]:
    """A handler answering `value` (or the JSON with the request's method)."""

    class Handler(GoHandler):
        def handle_request(self) -> None:
            if json_response:
                body = json.dumps({"Method": self.command, "Body": value}, separators=(",", ":"))
                self.reply(body, content_type="application/json")
            else:
                self.reply(value)

    return Handler


def tls_wrapper(port: str):  # noqa: ANN201 - a socket wrapper
    """Wrap a listener with the certificate `CERT_FILE`/`KEY_FILE` (upstream's defaults: `localhost.crt/.key`)."""
    cert, key = os.environ.get("CERT_FILE") or "localhost.crt", os.environ.get("KEY_FILE") or "localhost.key"
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        context.load_cert_chain(cert, key)
    except OSError as error:
        log(f'tls server on port "{port}" with certFile="{cert}", keyFile="{key}" failed: {error}')
        return None
    return lambda sock: context.wrap_socket(sock, server_side=True)


def main(argv: list[str]) -> int:
    """Serve every port the environment names, forever."""
    opts = parse_or_exit("porter", FLAGS, argv)
    for key, value in os.environ.items():
        if key.startswith(TCP_PREFIX) and key[len(TCP_PREFIX):].isdigit():
            serve_in_background(int(key[len(TCP_PREFIX):]), handler_for(value, opts["json_response"]))
        elif key.startswith(TLS_PREFIX) and key[len(TLS_PREFIX):].isdigit():
            wrap = tls_wrapper(key[len(TLS_PREFIX):])
            if wrap is not None:
                serve_in_background(int(key[len(TLS_PREFIX):]), handler_for(value, opts["json_response"]), wrap)
    threading.Event().wait()
    return 0
