"""`agnhost nettest`: a web server on `--port` (8080) that records who wrote to it and, meanwhile, finds the
endpoints of `--service` in `--namespace` through the API server (in-cluster configuration) and writes to each:
`/write` (POST `{"Source": NAME}`) counts a contact and answers `{"Hostname":...}`, `/read` is the whole state as
indented JSON, `/status` says pass, running or fail, `/quit` exits; as upstream's."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
import urllib.error
import urllib.request
from typing import Any

from . import gojson
from .flags import Flag, parse_or_exit
from .incluster import ConfigError, InCluster, RequestError
from .serving import GoHandler, hostname, log, serve_in_background

FLAGS = {"port": Flag(int, 8080), "peers": Flag(int, 8), "service": Flag(str, "nettest"),
         "namespace": Flag(str, "default"), "delay-shutdown": Flag(int, 0)}
VERSION_FIELDS = ("Major", "Minor", "GitVersion", "GitCommit", "GitTreeState", "BuildDate", "GoVersion", "Compiler",
                  "Platform")
LOG_LIMIT = 500


class State:
    """What /read shows (upstream's State, its fields in order), behind one lock."""

    def __init__(self, name: str) -> None:
        self.hostname = name
        self.sent: dict[str, int] | None = None
        self.received: dict[str, int] | None = None
        self.errors: list[str] | None = None
        self.log: list[str] | None = None
        self.still_contacting = True
        self.lock = threading.Lock()

    def as_json(self) -> str:
        with self.lock:
            return gojson.marshal({
                "Hostname": self.hostname,
                "Sent": dict(sorted(self.sent.items())) if self.sent is not None else None,
                "Received": dict(sorted(self.received.items())) if self.received is not None else None,
                "Errors": self.errors, "Log": self.log, "StillContactingPeers": self.still_contacting}, "\t")

    def append_error(self, message: str) -> None:
        """Record an error (the lock held)."""
        self.errors = [*(self.errors or []), message]

    def logf(self, message: str) -> None:
        with self.lock:
            self.log = [*(self.log or []), message][-LOG_LIMIT:]

    def status(self, peers: int, service: str, namespace: str) -> str:
        with self.lock:
            if len(self.sent or {}) >= peers and len(self.received or {}) >= peers:
                return "pass"
            if self.still_contacting:
                return "running"
            counts = len(self.sent or {}), len(self.received or {})
        self.logf(f"Declaring failure for {namespace}/{service} with {counts[0]} sent and {counts[1]} received "
                  f"and {peers} peers")
        return "fail"

    def write(self, body: bytes) -> str:
        """/write: count the source the body names; the answer's JSON."""
        with self.lock:
            source = ""
            try:
                source = source_of(body)
            except ValueError as error:
                self.append_error(str(error))
            if not source:
                self.append_error(f"{self.hostname}: Got request with no source")
            else:
                self.received = self.received or {}
                self.received[source] = self.received.get(source, 0) + 1
            return gojson.marshal({"Hostname": self.hostname}) + "\n"

    def sent_to(self, name: str) -> None:
        with self.lock:
            self.sent = self.sent or {}
            self.sent[name] = self.sent.get(name, 0) + 1


def source_of(body: bytes) -> str:
    """The `Source` of a WritePost (Go matches field names without regard to case); ValueError as Go's decoder."""
    text = body.decode(errors="replace").strip()
    if not text:
        raise ValueError("EOF")
    try:
        value, _end = json.JSONDecoder().raw_decode(text)
    except json.JSONDecodeError:
        raise ValueError(f"invalid character {text[0]!r} looking for beginning of value") from None
    if not isinstance(value, dict):
        raise ValueError(f"json: cannot unmarshal {type(value).__name__} into Go value of type nettest.WritePost")
    key = "Source" if "Source" in value else next((k for k in value if k.lower() == "source"), None)
    found = value.get(key) if key is not None else ""
    if found is not None and not isinstance(found, str):
        raise ValueError("json: cannot unmarshal into Go struct field WritePost.Source of type string")
    return found or ""


def go_version_info(info: dict[str, Any]) -> str:
    """`%#v` of a *version.Info."""
    fields = ", ".join(f'{name}:{json.dumps(str(info.get(name[0].lower() + name[1:], "")))}'
                       for name in VERSION_FIELDS)
    return f"&version.Info{{{fields}}}"


def endpoints(client: InCluster, namespace: str, service: str) -> list[str]:
    """`http://IP:PORT` of every address and port of the service's Endpoints, sorted (a set in Go)."""
    try:
        found = json.loads(client.get(f"/api/v1/namespaces/{namespace}/endpoints/{service}"))
    except (RequestError, ValueError):
        return []  # upstream logs this into a State nobody reads
    urls = set()
    for subset in found.get("subsets") or ():
        for address in subset.get("addresses") or ():
            ip = address.get("ip", "")
            for port in subset.get("ports") or ():
                urls.add(f"http://{f'[{ip}]' if ':' in ip else ip}:{port.get('port')}")
    return sorted(urls)


def contact(url: str, state: State) -> None:
    """POST our name to a peer's /write and count its answer's hostname."""
    body = gojson.marshal({"Source": state.hostname, "Dest": url}).encode()
    request = urllib.request.Request(url + "/write", data=body, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            text = answer.read()
    except urllib.error.HTTPError as error:
        text = error.read()
    except OSError as error:
        state.logf(f'Warning: unable to contact the endpoint "{url}": Post "{url}/write": '
                   f"{getattr(error, 'reason', error)}")
        return
    try:
        name = json.loads(text).get("Hostname", "")
    except (ValueError, AttributeError) as error:
        state.logf(f"Warning: unable to unmarshal response ({text.decode(errors='replace')}) from '{url}': "
                   f"'{error}'")
        return
    state.sent_to(str(name))


def contact_others(state: State, peers: int, service: str, namespace: str) -> None:
    """Wait for the API server, then for `peers` endpoints, then write to every endpoint 15 times."""
    try:
        sleep_time = max(5, peers // 10)
        timeout = max(300, peers)
        try:
            client = InCluster.load()
        except ConfigError as error:
            log(f"Unable to create config; error: {error}")
            os._exit(1)
        start, failure = time.monotonic(), "timed out"
        while time.monotonic() - start < timeout:
            try:
                info = json.loads(client.get("/version"))
                log(f"Server version: {go_version_info(info)}")
                failure = ""
                break
            except (RequestError, ValueError) as error:
                failure = str(error)
                log(f"Unable to get server version: {error}; retrying.")
            time.sleep(1 + sleep_time)
        if failure:
            log(f"Unable to contact Kubernetes: {failure}")
            os._exit(1)
        start = time.monotonic()
        while time.monotonic() - start < timeout:
            found = endpoints(client, namespace, service)
            if len(found) >= peers:
                break
            state.logf(f"{namespace}/{service} has {len(found)} endpoints ({found}), which is less than {peers} as "
                       "expected. Waiting for all endpoints to come up.")
            time.sleep(sleep_time)
        for _ in range(15):
            for url in endpoints(client, namespace, service):
                state.logf(f"Attempting to contact {url}")
                contact(url, state)
            time.sleep(sleep_time)
    finally:
        with state.lock:
            state.still_contacting = False


def main(argv: list[str]) -> int:
    """Serve and contact the service's other Pods until /quit or a signal."""
    opts = parse_or_exit("nettest", FLAGS, argv)
    if not opts["service"]:
        log("Must provide -service flag.")
        return 1
    delay = opts["delay_shutdown"]
    if delay > 0:
        def shut_down() -> None:
            log(f"Sleeping {delay} seconds before exit ...")
            time.sleep(delay)
            os._exit(0)

        signal.signal(signal.SIGTERM, lambda _signum, _frame: threading.Thread(target=shut_down, daemon=True).start())
    state = State(hostname())
    peers, service, namespace = opts["peers"], opts["service"], opts["namespace"]
    threading.Thread(target=contact_others, args=(state, peers, service, namespace), daemon=True).start()

    class Handler(GoHandler):
        def handle_request(self) -> None:
            path = self.path.split("?", 1)[0]
            if path == "/quit":
                os._exit(0)
            elif path == "/read":
                self.reply(state.as_json())
            elif path == "/write":
                length = int(self.headers.get("Content-Length") or 0)
                self.reply(state.write(self.rfile.read(length) if length > 0 else b""))
            elif path == "/status":
                self.reply(state.status(peers, service, namespace))
            else:
                self.reply("404 page not found\n", 404, "text/plain; charset=utf-8",
                           {"X-Content-Type-Options": "nosniff"})

    serve_in_background(opts["port"], Handler)
    threading.Event().wait()
    return 0
