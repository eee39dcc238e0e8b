"""The stand-in program of a container that has no command (there are no images): an HTTP server on every
port given, answering with the pod's name so traffic can be traced; with no ports it just stays up.
With `--server nginx|httpd` it answers with that server's Server header and error pages. With `--docroot DIR`
(web server images such as nginx) it serves the files there as the real server would
(index.html for a directory, 404 for what is missing), and the pod's name for `/` while there is no index.
On SIGTERM it finishes what it is serving and keeps answering until no connection has come for a moment (the
Pod's endpoint is being removed from every kube-proxy meanwhile), at most DRAIN_MAX seconds, then exits 0, as a
web server with a short preStop sleep does: a Pod deleted behind a Service fails no request.
Standard library only: it runs as `python -I -S standin.py [--server NAME] [--docroot DIR] PORT...` inside the pod's namespaces."""

import http.server
import mimetypes
import os
import posixpath
import shutil
import signal
import sys
import threading
import time
import urllib.parse

NAME = os.environ.get("HOSTNAME", "unknown")
QUIET, DRAIN_MAX = 0.3, 5.0  # seconds without a connection that end the drain after SIGTERM; its longest
ACTIVITY = {"last": 0.0, "busy": 0}  # when the latest connection came or ended, and how many are being served
ACTIVITY_LOCK = threading.Lock()
DOCROOT: str | None = None  # --docroot DIR: files are served from there
SERVERS = {  # --server NAME: the Server header and 404 page of the web server an image ships
    "nginx": ("nginx/1.27.3", b"<html>\r\n<head><title>404 Not Found</title></head>\r\n<body>\r\n<center><h1>404 Not "
              b"Found</h1></center>\r\n<hr><center>nginx/1.27.3</center>\r\n</body>\r\n</html>\r\n"),
    "httpd": ("Apache/2.4.62 (Unix)", b'<!DOCTYPE HTML PUBLIC "-//IETF//DTD HTML 2.0//EN">\n<html><head>\n<title>404 '
              b"Not Found</title>\n</head><body>\n<h1>Not Found</h1>\n<p>The requested URL was not found on this "
              b"server.</p>\n</body></html>\n"),
}
NOT_FOUND = (b"<html>\r\n<head><title>404 Not Found</title></head>\r\n<body>\r\n<center><h1>404 Not Found</h1>"
             b"</center>\r\n<hr><center>mini-kube-standin</center>\r\n</body>\r\n</html>\r\n")


class Handler(http.server.BaseHTTPRequestHandler):
    server_version = "mini-kube-standin/0.1"
    protocol_version = "HTTP/1.1"

    def version_string(self) -> str:
        return self.server_version

    def _answer(self, with_body: bool) -> None:
        if DOCROOT is not None and self._serve_file(DOCROOT, with_body):
            return
        body = f"{NAME}\n".encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Pod-Name", NAME)
        self.end_headers()
        if with_body:
            self.wfile.write(body)

    def _serve_file(self, root: str, with_body: bool) -> bool:
        """Answer from the document root `root`; False for `/` with no index (the pod's name answers then)."""
        path = posixpath.normpath(urllib.parse.unquote(urllib.parse.urlsplit(self.path).path))
        local = os.path.join(root, path.lstrip("/"))
        if os.path.isdir(local):
            local = os.path.join(local, "index.html")
            if not os.path.isfile(local) and path == "/":
                return False
        try:
            handle = open(local, "rb")  # noqa: SIM115 - closed below
        except OSError:
            self.send_response(404)
            self.send_header("Content-Type", "text/html" + ("; charset=iso-8859-1" if "Apache" in
                                                            self.server_version else ""))
            self.send_header("Content-Length", str(len(NOT_FOUND)))
            self.end_headers()
            if with_body:
                self.wfile.write(NOT_FOUND)
            return True
        with handle:
            self.send_response(200)
            self.send_header("Content-Type", mimetypes.guess_type(local)[0] or "application/octet-stream")
            self.send_header("Content-Length", str(os.fstat(handle.fileno()).st_size))
            self.send_header("X-Pod-Name", NAME)
            self.end_headers()
            if with_body:
                shutil.copyfileobj(handle, self.wfile, 1 << 16)
        return True

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

    def process_request(self, request, client_address):  # noqa: ANN001, ANN201 - the socketserver hook
        _count(+1)
        super().process_request(request, client_address)

    def shutdown_request(self, request):  # noqa: ANN001, ANN201 - called once the connection is served
        _count(-1)
        super().shutdown_request(request)


def _count(change: int) -> None:
    with ACTIVITY_LOCK:
        ACTIVITY["busy"] += change
        ACTIVITY["last"] = time.monotonic()


def drain_and_exit() -> None:
    """After SIGTERM: serve on until connections stop coming and none is open (or DRAIN_MAX passed), then exit 0."""
    deadline = time.monotonic() + DRAIN_MAX
    ACTIVITY["last"] = max(ACTIVITY["last"], time.monotonic() - QUIET / 2)
    while time.monotonic() < deadline and (ACTIVITY["busy"] > 0 or time.monotonic() - ACTIVITY["last"] < QUIET):
        time.sleep(0.02)
    os._exit(0)


def main() -> None:
    global DOCROOT, NOT_FOUND
    # SIGTERM stays pending (in every thread, which inherit the mask) until the main thread takes it below: no
    # window between testing a flag and waiting in which it could be missed
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    args = sys.argv[1:]
    if args[:1] == ["--server"]:
        Handler.server_version, NOT_FOUND = SERVERS[args[1]]
        args = args[2:]
    if args[:1] == ["--docroot"]:
        DOCROOT, args = args[1], args[2:]
    ports = [int(p) for p in args]
    for port in ports:
        server = Server(("0.0.0.0", port), Handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
    print(f"{NAME}: serving HTTP on {', '.join(map(str, ports))}" if ports else f"{NAME}: running", flush=True)
    signal.sigwait({signal.SIGTERM})
    drain_and_exit()


if __name__ == "__main__":
    main()
