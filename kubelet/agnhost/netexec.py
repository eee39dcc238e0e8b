"""`agnhost netexec`: the HTTP endpoints (`/hostname`, `/clientip`, `/echo`, `/exit`, `/shell`, `/dial`,
`/healthz`, `/readyz`, `/header`, `/redirect`, `/shutdown`, `/`) and the UDP server (`hostname`, `echo MSG`,
`clientip`) the conformance tests talk to, with upstream's answers and status codes. SCTP (`--sctp-port`) is
accepted and not served: the host's Python has no SCTP sockets."""

from __future__ import annotations

import datetime
import http.client
import json
import os
import signal
import socket
import ssl
import subprocess
import threading
import time
import urllib.parse

from mini_kube.machinery.duration import parse_go_duration

from .flags import Flag, parse_or_exit
from .serving import GoHandler, Server, bind_address, hostname, log, serve_in_background

FLAGS = {"http-port": Flag(int, 8080), "tls-cert-file": Flag(str, ""), "tls-private-key-file": Flag(str, ""),
         "udp-port": Flag(int, 8081), "sctp-port": Flag(int, -1), "http-override": Flag(str, ""),
         "udp-listen-addresses": Flag(str, ""), "delay-shutdown": Flag(int, 0)}
SHELL = "/bin/sh"
DIAL_TIMEOUT = 5.0
STARTED = time.monotonic()
READY = threading.Event()
"""Set once the UDP server listens (upstream's serverReady): /healthz and /readyz answer 200 from then on."""
TERMINATING = threading.Event()


def go_json(value: object) -> str:
    """encoding/json's output: compact, keys sorted, `<`, `>`, `&` escaped."""
    text = json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    for char, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"),
                          ("\u2029", "\\u2029")):
        text = text.replace(char, escaped)
    return text


def go_now() -> str:
    """`time.Now().String()`: local time to the nanosecond, zone, and the monotonic reading."""
    now = datetime.datetime.now().astimezone()
    nanos = f"{now.microsecond:06d}000".rstrip("0")
    zone = now.strftime("%z")
    return (now.strftime("%Y-%m-%d %H:%M:%S") + (f".{nanos}" if nanos else "") + f" {zone} {now.tzname()}"
            + f" m=+{time.monotonic() - STARTED:.9f}")


def canonical(key: str) -> str:
    """textproto.CanonicalMIMEHeaderKey: `x-forwarded-for` -> `X-Forwarded-For`."""
    return "-".join(part[:1].upper() + part[1:].lower() for part in key.split("-"))


def socket_address(address: tuple) -> str:
    """Go's `ip:port` (`[ip]:port` for IPv6)."""
    host, port = address[0], address[1]
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def dial_http(request: str, host: str, port: int) -> str:
    """GET http://host:port/request with a 5 s timeout: the body, or Go's client error as the exception text."""
    url = f"http://{socket_address((host, port))}/{request}"
    conn = http.client.HTTPConnection(host, port, timeout=DIAL_TIMEOUT)
    try:
        conn.request("GET", "/" + request, headers={"User-Agent": "Go-http-client/1.1",
                                                    "Accept-Encoding": "gzip"})
        return conn.getresponse().read().decode(errors="replace")
    except TimeoutError:
        raise OSError(f'Get "{url}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)') from None
    except ConnectionRefusedError:
        raise OSError(f'Get "{url}": dial tcp {socket_address((host, port))}: connect: connection refused') from None
    except OSError as error:
        raise OSError(f'Get "{url}": dial tcp {socket_address((host, port))}: '
                      f"{(error.strerror or str(error)).lower()}") from None
    finally:
        conn.close()


def dial_udp(request: str, host: str, port: int) -> str:
    """Send `request` in one datagram and read one answer within 5 s."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_DGRAM) as sock:
        try:
            sock.connect((host, port))
        except OSError as error:
            raise OSError(f"udp dial failed. err:dial udp {socket_address((host, port))}: {error.strerror}") from None
        local = socket_address(sock.getsockname())
        sock.settimeout(DIAL_TIMEOUT)
        try:
            sock.send(request.encode())
        except OSError as error:
            raise OSError(f"udp connection write failed. err:write udp {local}->{socket_address((host, port))}: "
                          f"{(error.strerror or '').lower()}") from None
        try:
            data = sock.recv(2048)
        except TimeoutError:
            raise OSError(f"reading from udp connection failed. err:'read udp {local}->"
                          f"{socket_address((host, port))}: i/o timeout'") from None
        except OSError as error:
            raise OSError(f"reading from udp connection failed. err:'read udp {local}->"
                          f"{socket_address((host, port))}: {(error.strerror or '').lower()}'") from None
        if not data:
            raise OSError("reading from udp connection failed. err:'<nil>'")
        return data.decode(errors="replace")


def resolve(host: str, port: str) -> tuple[str, int]:
    """net.ResolveTCPAddr's job: an IP (resolving a name) and a port number, or ValueError with Go's message."""
    joined = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    if not port.isdigit() or int(port) > 65535:
        raise ValueError(f'address {joined}: invalid port' if port else f"address {joined}: missing port in address")
    try:
        info = socket.getaddrinfo(host or "127.0.0.1", int(port), type=socket.SOCK_STREAM)
    except OSError:
        raise ValueError(f"lookup {host}: no such host") from None
    return str(info[0][4][0]), int(port)


class Handler(GoHandler):
    """netexec's ServeMux."""

    override = ""
    server_ref: Server | None = None

    def form(self) -> dict[str, str]:
        """r.FormValue's view: the first value of each query (and urlencoded body) parameter."""
        values: dict[str, str] = {}
        length = int(self.headers.get("Content-Length") or 0)
        if length and self.headers.get_content_type() == "application/x-www-form-urlencoded":
            body = self.rfile.read(length).decode(errors="replace")
            for key, value in urllib.parse.parse_qsl(body, keep_blank_values=True):
                values.setdefault(key, value)
        for key, value in urllib.parse.parse_qsl(urllib.parse.urlsplit(self.path).query, keep_blank_values=True):
            values.setdefault(key, value)
        return values

    def error(self, message: str, status: int) -> None:
        """http.Error: the message and a newline as text/plain, nosniff."""
        self.reply(message + "\n", status, "text/plain; charset=utf-8", {"X-Content-Type-Options": "nosniff"})

    def handle_request(self) -> None:
        if self.override:
            self.path = self.override
        route = urllib.parse.urlsplit(self.path).path
        handler = {
            "/clientip": self.clientip, "/header": self.header, "/dial": self.dial, "/echo": self.echo,
            "/exit": self.exit, "/healthz": self.healthz, "/readyz": self.readyz, "/hostname": self.hostname,
            "/hostName": self.hostname, "/redirect": self.redirect, "/shell": self.shell,
            "/shutdown": self.shutdown, "/upload": self.upload,
        }.get(route, self.root)
        handler()

    def root(self) -> None:
        log("GET /")
        self.reply(f"NOW: {go_now()}")

    def clientip(self) -> None:
        log("GET /clientip")
        self.reply(socket_address(self.client_address))

    def hostname(self) -> None:
        log(f"GET {urllib.parse.urlsplit(self.path).path}")
        self.reply(hostname())

    def echo(self) -> None:
        form = self.form()
        msg, code = form.get("msg", ""), form.get("code", "")
        log(f"GET /echo?msg={msg}&code={code}")
        if code:
            try:
                status = int(code)
            except ValueError:
                self.reply(f"argument 'code' must be an integer or empty, got {json.dumps(code)}\n")
                return
            self.reply(msg, status)
            return
        self.reply(msg)

    def header(self) -> None:
        key = self.form().get("key", "")
        headers: dict[str, list[str]] = {}
        for name, value in self.headers.items():
            if name.lower() != "host":  # Go keeps Host out of r.Header
                headers.setdefault(canonical(name), []).append(value)
        if key:
            log(f"GET /header?key={key}")
            self.reply(headers.get(canonical(key), [""])[0])
            return
        log("GET /header")
        self.reply(go_json(headers))

    def healthz(self) -> None:
        log("GET /healthz")
        self.reply(b"", 200 if READY.is_set() else 412)

    def readyz(self) -> None:
        log("GET /readyz")
        if TERMINATING.is_set():
            self.reply("shutting down", 503)
        elif READY.is_set():
            self.reply("ok")
        else:
            self.reply(b"", 412)

    def shutdown(self) -> None:
        log("GET /shutdown")
        os._exit(0)

    def exit(self) -> None:
        form = self.form()
        wait_text, timeout_text, code_text = form.get("wait", ""), form.get("timeout", ""), form.get("code", "")
        log(f"GET /exit?code={code_text}&timeout={timeout_text}&wait={wait_text}")
        try:
            timeout = parse_go_duration(timeout_text) / 1e9 if timeout_text else 0.0
        except ValueError:
            self.reply(f"argument 'timeout' must be a valid golang duration or empty, got {json.dumps(timeout_text)}\n")
            return
        try:
            wait = parse_go_duration(wait_text) / 1e9 if wait_text else 0.0
        except ValueError:
            self.reply(f"argument 'wait' must be a valid golang duration or empty, got {json.dumps(wait_text)}\n")
            return
        try:
            code = int(code_text) if code_text else 0
        except ValueError:
            self.reply(f"argument 'code' must be an integer [0-127] or empty, got {json.dumps(code_text)}\n")
            return
        time.sleep(max(wait, 0.0))
        if timeout <= 0:
            os._exit(code & 0xFF)
        server = self.server_ref
        threading.Thread(target=graceful_exit, args=(server, code, timeout), daemon=True).start()
        self.reply(b"", headers={"Connection": "close"})

    def redirect(self) -> None:
        form = self.form()
        location, code_text = form.get("location", ""), form.get("code", "")
        log(f"{self.command} /redirect?msg={location}&code={code_text}")
        status = 302
        if code_text:
            try:
                status = int(code_text)
            except ValueError:
                self.reply(f"argument 'code' must be an integer or empty, got {json.dumps(code_text)}\n")
                return
        if not urllib.parse.urlsplit(location).scheme and not location.startswith("/"):
            base = urllib.parse.urlsplit(self.path).path
            location = base.rsplit("/", 1)[0] + "/" + location
        body = (f'<a href="{location}">{http.client.responses.get(status, "")}</a>.\n\n'
                if self.command in ("GET", "HEAD") else "")
        self.reply(body, status, "text/html; charset=utf-8" if body else None, {"Location": location})

    def shell(self) -> None:
        form = self.form()
        command = form.get("shellCommand") or form.get("cmd", "")
        log(f"GET /shell?cmd={command}")
        output: dict[str, str] = {}
        try:
            done = subprocess.run([SHELL, "-c", command], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  stdin=subprocess.DEVNULL, check=False)
            if done.stdout:
                output["output"] = done.stdout.decode(errors="replace")
            if done.returncode > 0:
                output["error"] = f"exit status {done.returncode}"
            elif done.returncode < 0:
                output["error"] = f"signal: {signal.Signals(-done.returncode).name[3:].lower()}"
        except OSError as error:
            output["error"] = f"fork/exec {SHELL}: {(error.strerror or '').lower()}"
        log(f"Output: map{output}")
        self.reply(go_json(output))

    def upload(self) -> None:
        log("GET /upload")
        self.reply(go_json({"error": "Unable to upload file."}))

    def dial(self) -> None:
        query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(self.path).query, keep_blank_values=True))
        host, port, request = query.get("host", ""), query.get("port", ""), query.get("request", "")
        protocol, tries_text = query.get("protocol", ""), query.get("tries", "")
        log(f"GET /dial?host={host}&protocol={protocol}&port={port}&request={request}&tries={tries_text}")
        tries = 1
        if tries_text:
            try:
                tries = int(tries_text)
            except ValueError:
                self.error(f'tries parameter is invalid. strconv.Atoi: parsing {json.dumps(tries_text)}: '
                           "invalid syntax", 400)
                return
        if not request:
            self.error("request parameter not specified. <nil>", 400)
            return
        dialers = {"": dial_http, "http": dial_http, "udp": dial_udp}
        if protocol.lower() not in dialers and protocol.lower() != "sctp":
            self.error(f"unsupported protocol. {protocol}", 400)
            return
        try:
            address = resolve(host, port)
        except ValueError as error:
            self.error(f"host and/or port param are invalid. {error}", 400)
            return
        dialer = dialers.get(protocol.lower())
        errors, responses, last = [], [], ""
        for _ in range(tries):
            try:
                if dialer is None:
                    raise OSError("sctp dial failed. err:protocol not supported")
                last = dialer(request, *address)
                responses.append(last)
            except OSError as error:
                last = ""
                errors.append(str(error))
        output: dict[str, list[str]] = {}
        if last:
            output["responses"] = responses
        if errors:
            output["errors"] = errors
        self.reply(go_json(output))


def graceful_exit(server: Server | None, code: int, timeout: float) -> None:
    """Stop accepting, give connections up to `timeout` to finish, then exit with `code`."""
    if server is not None:
        finished = threading.Thread(target=server.shutdown, daemon=True)
        finished.start()
        finished.join(timeout)
        log("Graceful shutdown completed with: <nil>")
    os._exit(code & 0xFF)


def serve_udp(address: str, port: int) -> None:
    """Answer `hostname`, `echo MSG` and `clientip` datagrams."""
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_DGRAM)
    try:
        sock.bind((address or bind_address(), port))
    except OSError as error:
        log(f"Error occurred: failed to create listener for UDP address :{port}:{error}")
        os._exit(1)
    log(f"Started UDP server on port {address} {port}")
    READY.set()
    while True:
        data, peer = sock.recvfrom(2048)
        text = data.decode(errors="replace").strip().lower()
        if text == "hostname":
            log("Sending udp hostName response")
            sock.sendto(hostname().encode(), peer)
        elif text.startswith("echo "):
            answer = text.split(" ", 1)[1]
            log(f"Echoing {answer} to UDP client {socket_address(peer)}")
            sock.sendto(answer.encode(), peer)
        elif text == "clientip":
            log(f"Sending clientip back to UDP client {socket_address(peer)}")
            sock.sendto(socket_address(peer).encode(), peer)
        elif text:
            log(f"Unknown UDP command received from {socket_address(peer)}: {text}")


def on_sigterm(delay: int) -> None:
    """/readyz answers 503 from now on; exit 0 after `--delay-shutdown` seconds."""
    TERMINATING.set()
    if delay > 0:
        log(f"Sleeping {delay} seconds before terminating...")
        time.sleep(delay)
    os._exit(0)


def main(argv: list[str]) -> int:
    """Serve HTTP (and UDP) until /exit, /shutdown or SIGTERM."""
    opts = parse_or_exit("netexec", FLAGS, argv)
    signal.signal(signal.SIGTERM, lambda _signum, _frame: threading.Thread(
        target=on_sigterm, args=(opts["delay_shutdown"],), daemon=True).start())
    if opts["udp_port"] != -1:
        addresses = sorted(set(opts["udp_listen_addresses"].split(","))) if opts["udp_listen_addresses"] else [""]
        for address in addresses:
            threading.Thread(target=serve_udp, args=(address, opts["udp_port"]), daemon=True).start()
    Handler.override = opts["http_override"]
    wrap = None
    if opts["tls_cert_file"]:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(opts["tls_cert_file"], opts["tls_private_key_file"] or None)
        wrap = lambda sock: context.wrap_socket(sock, server_side=True)  # noqa: E731
    Handler.server_ref = serve_in_background(opts["http_port"], Handler, wrap)
    log(f"Started HTTP server on port {opts['http_port']}")  # once it listens
    threading.Event().wait()
    return 0
