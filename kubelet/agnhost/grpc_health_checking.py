"""`agnhost grpc-health-checking`: the standard gRPC health service (grpc.health.v1.Health) on `--port` (5000),
over HTTP/2 (h2), with TLS when `--tls-cert-file` and `--tls-private-key-file` are given. `Check` of `--service`
("" by default) answers SERVING until `--delay-unhealthy-sec` (never when negative) and NOT_SERVING after, or as
`/make-serving` and `/make-not-serving` on `--http-port` (8080) last forced; another service is NOT_FOUND, `Watch`
UNIMPLEMENTED; as upstream's."""

from __future__ import annotations

import socket
import ssl
import struct
import threading
import time
from datetime import UTC, datetime

import h2.config
import h2.connection
import h2.events
import h2.exceptions
from mini_kube.machinery.duration import format_go_duration

from .flags import Flag, parse_or_exit
from .serving import GoHandler, bind_address, log, serve_in_background

FLAGS = {"port": Flag(int, 5000), "http-port": Flag(int, 8080), "delay-unhealthy-sec": Flag(int, -1),
         "service": Flag(str, ""), "tls-cert-file": Flag(str, ""), "tls-private-key-file": Flag(str, "")}
HEALTH = "grpc.health.v1.Health"
SERVING, NOT_SERVING = 1, 2  # HealthCheckResponse.ServingStatus
NOT_FOUND, UNIMPLEMENTED, INTERNAL = 5, 12, 13  # gRPC status codes


class Health:
    """The checker's state: when it started, and what /make-serving or /make-not-serving forced."""

    def __init__(self, service: str, delay_unhealthy: int) -> None:
        self.service = service
        self.delay_unhealthy = delay_unhealthy
        self.started = time.monotonic()
        self.started_at = datetime.now(UTC)
        self.force_unhealthy: bool | None = None

    def since_start(self) -> str:
        return format_go_duration(int((time.monotonic() - self.started) * 1e9))

    def check(self, service: str) -> tuple[int, str, int]:
        """(gRPC status code, its message, serving status)."""
        log(f"Serving the Check request for health check, started at {self.started_at:%Y-%m-%d %H:%M:%S.%f} "
            "+0000 UTC")
        if service != self.service:
            return NOT_FOUND, "unknown service", 0
        elapsed = time.monotonic() - self.started
        if self.force_unhealthy or (self.delay_unhealthy >= 0 and elapsed >= self.delay_unhealthy):
            return 0, "", NOT_SERVING
        return 0, "", SERVING


def varint(data: bytes, pos: int) -> tuple[int, int]:
    """A protobuf varint at `pos`: (value, next position); ValueError when cut short."""
    value = shift = 0
    while True:
        if pos >= len(data) or shift > 63:
            raise ValueError("truncated varint")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, pos


def requested_service(message: bytes) -> str:
    """HealthCheckRequest.service (field 1, a string); other fields skipped; ValueError when malformed."""
    pos, found = 0, ""
    while pos < len(message):
        key, pos = varint(message, pos)
        field, wire = key >> 3, key & 7
        if wire == 0:
            _, pos = varint(message, pos)
        elif wire == 2:
            length, pos = varint(message, pos)
            if pos + length > len(message):
                raise ValueError("truncated field")
            if field == 1:
                found = message[pos:pos + length].decode()
            pos += length
        elif wire in (1, 5):
            pos += 8 if wire == 1 else 4
        else:
            raise ValueError(f"wire type {wire}")
    return found


def response_message(status: int) -> bytes:
    """HealthCheckResponse{status} (the default, UNKNOWN, is not written)."""
    return bytes((0x08, status)) if status else b""


class Connection:
    """One client connection: HTTP/2 frames in, unary answers out."""

    def __init__(self, sock: socket.socket, health: Health) -> None:
        self.sock = sock
        self.health = health
        self.h2 = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False, header_encoding="utf-8"))
        self.paths: dict[int, str] = {}
        self.bodies: dict[int, bytearray] = {}

    def serve(self) -> None:
        try:
            self.h2.initiate_connection()
            self.flush()
            while data := self.sock.recv(65536):
                for event in self.h2.receive_data(data):
                    self.on(event)
                self.flush()
        except (OSError, h2.exceptions.ProtocolError, ssl.SSLError):
            pass
        finally:
            self.sock.close()

    def flush(self) -> None:
        if pending := self.h2.data_to_send():
            self.sock.sendall(pending)

    def on(self, event: h2.events.Event) -> None:
        if isinstance(event, h2.events.RequestReceived):
            paths = [value for name, value in event.headers or () if name in (":path", b":path")]
            self.paths[event.stream_id] = paths[0].decode() if paths and isinstance(paths[0], bytes) else (
                str(paths[0]) if paths else "")
            self.bodies[event.stream_id] = bytearray()
        elif isinstance(event, h2.events.DataReceived):
            self.bodies.setdefault(event.stream_id, bytearray()).extend(event.data or b"")
            self.h2.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
        elif isinstance(event, h2.events.StreamEnded):
            self.answer(event.stream_id, self.paths.pop(event.stream_id, ""), bytes(self.bodies.pop(event.stream_id,
                                                                                                    b"")))

    def answer(self, stream: int, path: str, body: bytes) -> None:
        """Route `path` (`/package.Service/Method`) as grpc-go does and answer on `stream`."""
        service, _, method = path.lstrip("/").partition("/")
        if service != HEALTH:
            return self.fail(stream, UNIMPLEMENTED, f"unknown service {service}")
        if method == "Watch":
            return self.fail(stream, UNIMPLEMENTED, "unimplemented")
        if method != "Check":
            return self.fail(stream, UNIMPLEMENTED, f"unknown method {method} for service {service}")
        try:
            if len(body) < 5 or body[0] != 0:
                raise ValueError("not one uncompressed message")
            (length,) = struct.unpack(">I", body[1:5])
            name = requested_service(body[5:5 + length])
        except (ValueError, UnicodeDecodeError) as error:
            return self.fail(stream, INTERNAL, f"grpc: error unmarshalling request: {error}")
        code, message, status = self.health.check(name)
        if code:
            return self.fail(stream, code, message)
        reply = response_message(status)
        self.h2.send_headers(stream, [(":status", "200"), ("content-type", "application/grpc")])
        self.h2.send_data(stream, b"\x00" + struct.pack(">I", len(reply)) + reply)
        self.h2.send_headers(stream, [("grpc-status", "0"), ("grpc-message", "")], end_stream=True)
        return None

    def fail(self, stream: int, code: int, message: str) -> None:
        """A trailers-only answer with the status."""
        self.h2.send_headers(stream, [(":status", "200"), ("content-type", "application/grpc"),
                                      ("grpc-status", str(code)), ("grpc-message", message)], end_stream=True)


def serve_grpc(listener: socket.socket, health: Health, context: ssl.SSLContext | None) -> None:
    while True:
        conn, _peer = listener.accept()

        def run(conn: socket.socket = conn) -> None:
            try:
                sock = context.wrap_socket(conn, server_side=True) if context is not None else conn
            except (OSError, ssl.SSLError):
                conn.close()
                return
            Connection(sock, health).serve()

        threading.Thread(target=run, daemon=True).start()


def main(argv: list[str]) -> int:
    """Serve the health service and the HTTP switches until killed."""
    opts = parse_or_exit("grpc-health-checking", FLAGS, argv)
    cert, key = opts["tls_cert_file"], opts["tls_private_key_file"]
    if bool(cert) != bool(key):
        log("Both --tls-cert-file and --tls-private-key-file must be set")
        return 1
    health = Health(opts["service"], opts["delay_unhealthy_sec"])

    class Handler(GoHandler):
        def handle_request(self) -> None:
            path = self.path.split("?", 1)[0]
            if path in ("/make-not-serving", "/make-serving"):
                log("Mark as unhealthy" if path == "/make-not-serving" else "Mark as healthy")
                health.force_unhealthy = path == "/make-not-serving"
                self.reply(health.since_start())
            else:
                self.reply("404 page not found\n", 404, "text/plain; charset=utf-8",
                           {"X-Content-Type-Options": "nosniff"})

    log(f"Http server starting to listen on :{opts['http_port']}")
    serve_in_background(opts["http_port"], Handler)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((bind_address(), opts["port"]))
        listener.listen(128)
    except OSError as error:
        log(f"Error while starting the listening service listen tcp :{opts['port']}: bind: "
            f"{(error.strerror or '').lower()}")
        return 1
    context = None
    if cert:
        try:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(cert, key)
            context.set_alpn_protocols(["h2"])
        except (OSError, ssl.SSLError) as error:
            log(f"Failed to generate credentials {error}")
            return 1
    log(f"gRPC server starting to listen on :{opts['port']}")
    serve_grpc(listener, health, context)
    return 0
