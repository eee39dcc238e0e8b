"""`agnhost liveness`: HTTP on 8080 whose `/healthz` answers 200 `ok` for 10 seconds after the start, then 500
`error: <seconds>`; `/started` says how long it has run (a Go duration) and `/redirect?loc=` redirects."""

from __future__ import annotations

import threading
import time
import urllib.parse

from mini_kube.machinery.duration import format_go_duration

from .flags import parse_or_exit
from .serving import GoHandler, serve_in_background

PORT = 8080
HEALTHY_FOR = 10.0


def main(argv: list[str]) -> int:
    """Serve until killed."""
    parse_or_exit("liveness", {}, argv)
    started = time.monotonic()

    class Handler(GoHandler):
        def handle_request(self) -> None:
            url = urllib.parse.urlsplit(self.path)
            elapsed = time.monotonic() - started
            if url.path == "/started":
                self.reply(format_go_duration(round(elapsed * 1e9)))
            elif url.path == "/healthz":
                if elapsed > HEALTHY_FOR:
                    self.reply(f"error: {elapsed!r}", 500)
                else:
                    self.reply("ok")
            elif url.path == "/redirect":
                location = dict(urllib.parse.parse_qsl(url.query)).get("loc", "")
                self.reply(f'<a href="{location}">Found</a>.\n\n', 302, "text/html; charset=utf-8",
                           {"Location": location})
            else:
                self.reply("404 page not found\n", 404, "text/plain; charset=utf-8",
                           {"X-Content-Type-Options": "nosniff"})

    serve_in_background(PORT, Handler)
    threading.Event().wait()
    return 0
