"""`agnhost guestbook`: the guestbook app's three roles in one server on `--http-port` (80). A primary keeps a
key-value store (`/set`, `/get`, `/register`) and pushes each `/set` to the replicas registered with it; a replica
(`--replicaof HOST`) registers with HOST on `--backend-port` (6379) at start, copying its store; the frontend's
`/guestbook?cmd=set|get` is proxied to `agnhost-primary` (set) or `agnhost-replica` (get) on the backend port.
Answers and log lines as upstream's."""

from __future__ import annotations

import json
import os
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from . import gojson
from .flags import Flag, parse_or_exit
from .serving import GoHandler, log, serve_in_background

FLAGS = {"http-port": Flag(str, "80"), "backend-port": Flag(str, "6379"), "replicaof": Flag(str, "")}
REGISTER_TIMEOUT = 15.0
RETRY = 1.0
REQUEST_TIMEOUT = 5.0
UNSAFE = " \"<>\\^`{|}#"  # what Go's URL parser would refuse unescaped in a request the app builds itself


def join_host_port(host: str, port: str) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def dial_http(request: str, host_port: str) -> str:
    """GET http://HOST:PORT/REQUEST within 5 s: the body whatever the status, or OSError."""
    url = f"http://{host_port}/{''.join(urllib.parse.quote(c) if c in UNSAFE else c for c in request)}"
    try:
        with urllib.request.urlopen(url, timeout=REQUEST_TIMEOUT) as answer:
            return bytes(answer.read()).decode(errors="replace")
    except urllib.error.HTTPError as error:
        return bytes(error.read()).decode(errors="replace")
    except urllib.error.URLError as error:
        raise OSError(f'Get "{url}": {error.reason}') from None


def resolve(host_port: str) -> None:
    """net.ResolveTCPAddr: OSError when the host has no address."""
    host, _, port = host_port.rpartition(":")
    try:
        socket.getaddrinfo(host.strip("[]"), int(port), type=socket.SOCK_STREAM)
    except (OSError, ValueError):
        raise OSError(f"lookup {host.strip('[]')}: no such host") from None


def local_ip(host_port: str) -> str:
    """The address this Pod reaches HOST from (a UDP "dial", as upstream's getIP)."""
    host, _, port = host_port.rpartition(":")
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        try:
            sock.connect((host.strip("[]"), int(port)))
        except (OSError, ValueError):
            raise OSError(f"dial udp {host_port}: lookup {host.strip('[]')}: no such host") from None
        return str(sock.getsockname()[0])


class Guestbook:
    """The store and the replicas registered with it."""

    def __init__(self, backend_port: str) -> None:
        self.backend_port = backend_port
        self.store: dict[str, Any] = {}
        self.replicas: list[str] = []
        self.lock = threading.Lock()

    def register_with(self, primary: str) -> None:
        """A replica's start: copy the primary's store, or give up (exit 1) after 15 s."""
        host_port = join_host_port(primary, self.backend_port)
        start = time.monotonic()
        while time.monotonic() - start < REGISTER_TIMEOUT:
            try:
                host = local_ip(host_port)
            except OSError as error:
                log(f"unable to get IP {host_port}: {error}. Retrying in 1s.")
                time.sleep(RETRY)
                continue
            request = f"register?host={host}"
            log(f"Registering to primary: {host_port}/{request}")
            try:
                resolve(host_port)
            except OSError as error:
                log(f"unable to resolve {host_port}, --replicaof param and/or --backend-port param are invalid: "
                    f"{error}. Retrying in 1s.")
                time.sleep(RETRY)
                continue
            try:
                response = dial_http(request, host_port)
            except OSError as error:
                log(f"encountered error while registering to primary: {error}. Retrying in 1s.")
                time.sleep(RETRY)
                continue
            try:
                data = json.loads(response).get("data")
            except (ValueError, AttributeError) as error:
                log(f"Error while unmarshaling primary's response: {error}")
                raise SystemExit(1) from None
            if not isinstance(data, dict):
                log(f"Could not cast responseJSON: {data}")
                raise SystemExit(1)
            with self.lock:
                self.store = data
            log(f"Registered to node: {primary}")
            return
        log("Timed out while registering to primary.")
        raise SystemExit(1)

    def register(self, host: str) -> tuple[int, str]:
        log(f"GET /register?host={host}")
        with self.lock:
            body = gojson.marshal({"data": dict(sorted(self.store.items()))})
            self.replicas.append(host)
        log(f"Node '{host}' registered.")
        return 200, body

    def get(self, key: str) -> tuple[int, str]:
        log(f"GET /get?key={key}")
        with self.lock:
            value = dict(sorted(self.store.items())) if not key else self.store.get(key, "")
        return 200, gojson.marshal({"data": value})

    def set(self, key: str, value: str) -> tuple[int, str]:
        log(f"GET /set?key={key}&value={value}")
        if not key:
            return 400, "cannot set with empty key."
        with self.lock:
            self.store[key] = value
            replicas = list(self.replicas)
        for replica in replicas:
            try:
                dial_http(f"set?key={key}&value={value}", join_host_port(replica, self.backend_port))
            except OSError as error:
                return 417, f"encountered error while propagating to replica '{replica}': {error}"
        return 200, gojson.marshal({"message": "Updated"})

    def frontend(self, cmd: str, key: str, value: str) -> tuple[int, str]:
        log(f"GET /guestbook?cmd={cmd}&key={key}&value={value}")
        if cmd not in ("get", "set"):
            return 400, f"unsupported cmd: '{cmd}'"
        if cmd == "set" and not key:
            return 400, "cannot set with empty key."
        host_port = join_host_port("agnhost-replica" if cmd == "get" else "agnhost-primary", self.backend_port)
        try:
            resolve(host_port)
        except OSError as error:
            return 400, f"host and/or port param are invalid. {error}"
        try:
            return 200, dial_http(f"{cmd}?key={key}&value={value}", host_port)
        except OSError as error:
            return 417, f"encountered error: {error}"


def main(argv: list[str]) -> int:
    """Register (a replica), then serve."""
    opts = parse_or_exit("guestbook", FLAGS, argv)
    book = Guestbook(opts["backend_port"])

    class Handler(GoHandler):
        def handle_request(self) -> None:
            path, _, query = self.path.partition("?")
            values = {k: v[0] for k, v in urllib.parse.parse_qs(query, keep_blank_values=True).items()}
            if path == "/register":
                status, body = book.register(values.get("host", ""))
            elif path == "/get":
                status, body = book.get(values.get("key", ""))
            elif path == "/set":
                status, body = book.set(values.get("key", ""), values.get("value", ""))
            elif path == "/guestbook":
                status, body = book.frontend(values.get("cmd", "").lower(), values.get("key", ""),
                                             values.get("value", ""))
            else:
                status, body = 404, "404 page not found"
            if status == 200:
                self.reply(body)
            else:  # http.Error
                self.reply(body + "\n", status, "text/plain; charset=utf-8", {"X-Content-Type-Options": "nosniff"})

    try:
        port = int(opts["http_port"])
    except ValueError:
        log(f"listen tcp: address {opts['http_port']}: invalid port")
        return 1
    if opts["replicaof"]:
        def register() -> None:
            try:
                book.register_with(opts["replicaof"])
            except SystemExit:  # log.Fatal from a goroutine ends the process
                os._exit(1)

        threading.Thread(target=register, daemon=True).start()
    serve_in_background(port, Handler)
    threading.Event().wait()
    return 0
