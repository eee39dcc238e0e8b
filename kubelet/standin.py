"""The stand-in program of a container that has no command (there are no images): an HTTP server on every
port given, answering with the pod's name so traffic can be traced; with no ports it just stays up.
Standard library only: it runs as `python -I -S standin.py PORT...` inside the pod's namespaces."""

import http.server
import os
import signal
import sys
import threading
import time

NAME = os.environ.get("HOSTNAME", "unknown")


class Handler(http.server.BaseHTTPRequestHandler):
    server_version = "mini-kube-standin/0.1"
    protocol_version = "HTTP/1.1"

    def _answer(self, with_body: bool) -> None:
        body = f"{NAME}\n".encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Pod-Name", NAME)
        self.end_headers()
        if with_body:
            self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802 - the http.server protocol
        self._answer(True)

    def do_HEAD(self) -> None:  # noqa: N802
        self._answer(False)

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        self._answer(True)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        sys.stdout.write('{} - - [{}] "{}" {}\n'.format(self.client_address[0], self.log_date_time_string(),
                                                     self.requestline, args[1] if len(args) > 1 else "-"))
        sys.stdout.flush()


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def main() -> None:
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    ports = [int(p) for p in sys.argv[1:]]
    for port in ports:
        server = Server(("0.0.0.0", port), Handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
    print(f"{NAME}: serving HTTP on {', '.join(map(str, ports))}" if ports else f"{NAME}: running", flush=True)
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main()
