"""`agnhost test-webserver`: a file server of the container's `/` on `--port` (80), with upstream's CORS and
cache headers (Go's http.FileServer: directory listings, 404 `404 page not found`)."""

from __future__ import annotations

import html
import mimetypes
import os
import posixpath
import threading
import urllib.parse

from .flags import Flag, parse_or_exit
from .serving import GoHandler, serve_in_background

FLAGS = {"port": Flag(int, 80)}
HEADERS = {
    "Cache-Control": "private",
    "Access-Control-Allow-Origin": "*",
    "Access-Control-Allow-Credentials": "true",
    "Access-Control-Allow-Methods": "GET, POST, OPTIONS",
    "Access-Control-Allow-Headers": "DNT,X-Mx-ReqToken,Keep-Alive,User-Agent,X-Requested-With,Cache-Control,"
                                    "Content-Type",
}
ROOT = "/"


def listing(directory: str) -> str:
    """Go's directory listing: `<pre>` with one link per entry, sorted by name, directories with a `/`."""
    lines = ["<!doctype html>", '<meta name="viewport" content="width=device-width">', "<pre>"]
    for entry in sorted(os.scandir(directory), key=lambda e: e.name):
        name = entry.name + ("/" if entry.is_dir() else "")
        lines.append(f'<a href="{urllib.parse.quote(name)}">{html.escape(name)}</a>')
    return "\n".join(lines) + "\n</pre>\n"


class Handler(GoHandler):
    """Serve the file the path names, as http.FileServer(http.Dir("/"))."""

    def handle_request(self) -> None:
        path = posixpath.normpath("/" + urllib.parse.unquote(urllib.parse.urlsplit(self.path).path))
        local = os.path.join(ROOT, path.lstrip("/"))
        try:
            if os.path.isdir(local):
                index = os.path.join(local, "index.html")
                if not os.path.isfile(index):
                    self.reply(listing(local), content_type="text/html; charset=utf-8", headers=HEADERS)
                    return
                local = index
            with open(local, "rb") as handle:
                data = handle.read()
        except PermissionError:
            self.reply("403 Forbidden\n", 403, "text/plain; charset=utf-8",
                       {**HEADERS, "X-Content-Type-Options": "nosniff"})
            return
        except OSError:
            self.reply("404 page not found\n", 404, "text/plain; charset=utf-8",
                       {**HEADERS, "X-Content-Type-Options": "nosniff"})
            return
        kind = mimetypes.guess_type(local)[0]
        if kind and kind.startswith("text/"):
            kind += "; charset=utf-8"
        self.reply(data, content_type=kind, headers=HEADERS)


def main(argv: list[str]) -> int:
    """Serve files forever."""
    opts = parse_or_exit("test-webserver", FLAGS, argv)
    serve_in_background(opts["port"], Handler)
    threading.Event().wait()
    return 0
