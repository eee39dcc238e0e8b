"""`agnhost liveness`: HTTP on 8080 whose `/healthz` answers 200 `ok` for 10 seconds after the start, then 500
`error: <seconds>`; `/started` says how long it has run (a Go duration) and `/redirect?loc=` redirects."""

from __future__ import annotations

import threading
import time
import urllib.parse

from .flags import parse_or_exit
from .serving import GoHandler, serve_in_background

PORT = 8080
HEALTHY_FOR = 10.0


def go_duration(seconds: float) -> str:
    """`time.Duration.String()` for a positive duration: `1.5s`, `2m3.000000001s`, `450ms`."""
    nanos = round(seconds * 1e9)
    if nanos < 1000:
        return f"{nanos}ns"
    if nanos < 1_000_000:
        return f"{nanos / 1e3:.3f}".rstrip("0").rstrip(".") + "µs"
    if nanos < 1_000_000_000:
        return f"{nanos / 1e6:.6f}".rstrip("0").rstrip(".") + "ms"
    hours, rest = divmod(nanos, 3_600_000_000_000)
    minutes, rest = divmod(rest, 60_000_000_000)
    secs = f"{rest // 1_000_000_000}.{rest % 1_000_000_000:09d}".rstrip("0").rstrip(".") + "s"
    if hours:
        return f"{hours}h{minutes}m{secs}"
    return f"{minutes}m{secs}" if minutes else secs


def main(argv: list[str]) -> int:
    """Serve until killed."""
    parse_or_exit("liveness", {}, argv)
    started = time.monotonic()

    class Handler(GoHandler):
        def handle_request(self) -> None:
            url = urllib.parse.urlsplit(self.path)
            elapsed = time.monotonic() - started
            if url.path == "/started":
                self.reply(go_duration(elapsed))
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
