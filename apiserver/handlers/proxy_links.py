"""What upstream's proxy transport (apimachinery's util/proxy Transport, wrapped around every pods/, services/
and nodes/proxy request) does to a backend's answer: the request carries `X-Forwarded-Uri`; the backend's links
to itself are made to go through the proxy again: a redirect's `Location`, and in a `text/html` body the URL
attributes of the tags that hold links (`<a href="/x">` -> `<a href="/api/v1/namespaces/NS/pods/NAME/proxy/x">`),
each start tag written back as Go's HTML tokenizer writes it; CORS headers the backend sent are dropped."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

# the attributes of each tag that hold a URL (upstream's atomsToAttrs)
URL_ATTRIBUTES: dict[str, frozenset[str]] = {tag: frozenset(names.split()) for tag, names in {
    "a": "href", "applet": "codebase", "area": "href", "audio": "src", "base": "href", "blockquote": "cite",
    "body": "background", "button": "formaction", "command": "icon", "del": "cite", "embed": "src",
    "form": "action", "frame": "longdesc src", "head": "profile", "html": "manifest", "iframe": "longdesc src",
    "img": "longdesc src usemap", "input": "src usemap formaction", "ins": "cite", "link": "href",
    "object": "classid codebase data usemap", "q": "cite", "script": "src", "source": "src",
    "video": "poster src"}.items()}
CORS_HEADERS = ("access-control-allow-credentials", "access-control-allow-headers", "access-control-allow-methods",
                "access-control-allow-origin")
GO_ESCAPES = {"&": "&amp;", "'": "&#39;", "<": "&lt;", ">": "&gt;", '"': "&#34;", "\r": "&#13;"}


def go_path_join(*parts: str) -> str:
    """Go's path.Join: the non-empty parts joined by '/', then cleaned ('' when all are empty)."""
    joined = "/".join(p for p in parts if p)
    if not joined:
        return ""
    cleaned = posixpath.normpath(joined)
    return re.sub(r"^/+", "/", cleaned)  # normpath keeps a leading '//'; Go's Clean does not


def go_escape(value: str) -> str:
    """html.EscapeString as Go's tokenizer applies it to attribute values."""
    return "".join(GO_ESCAPES.get(c, c) for c in value)


@dataclass(frozen=True)
class ProxyLinks:
    """One proxied request's rewriting: `prepend` is the request's path before the part the backend sees (the
    `.../proxy` prefix), `backend_host` the backend's host:port, `request_host` the Host the client asked."""

    prepend: str
    backend_host: str = ""
    request_host: str = ""

    @classmethod
    def for_request(cls, request_path: str, backend_path: str, backend_host: str = "",
                    request_host: str = "") -> ProxyLinks:
        """As upstream's defaultProxyTransport: the request path without the backend's path at its end."""
        suffix = backend_path
        if request_path.endswith("/") and not suffix.endswith("/"):
            suffix += "/"
        prepend = request_path[:-len(suffix)] if suffix and request_path.endswith(suffix) else request_path
        return cls(prepend, backend_host, request_host)

    def forwarded_uri(self, backend_path: str) -> str:
        """The X-Forwarded-Uri header: the path the client asked, as the proxy sees it."""
        uri = go_path_join(self.prepend, backend_path)
        return uri + "/" if backend_path.endswith("/") and not uri.endswith("/") else uri

    def rewrite_url(self, value: str) -> str:
        """A link from the backend, through the proxy when it points at the backend itself (a path, or its host
        or the client's): upstream's rewriteURL, with the proxy's own scheme and host left empty."""
        try:
            parts = urlsplit(value)
        except ValueError:
            return value
        host = parts.netloc
        if (host and host not in (self.backend_host, self.request_host)) or not parts.path.startswith("/"):
            return value
        scheme = parts.scheme
        if host != self.request_host or not host:
            scheme, host = "", ""
        path = parts.path
        if not path.startswith(self.prepend):
            path = go_path_join(self.prepend, parts.path) + ("/" if parts.path.endswith("/") else "")
        return urlunsplit((scheme, host, path, parts.query, parts.fragment))

    def headers(self, headers: dict[str, str]) -> dict[str, str]:
        """The backend's headers as the client gets them: no CORS headers; a redirect's Location rewritten."""
        out = {k: v for k, v in headers.items() if k.lower() not in CORS_HEADERS}
        for key in [k for k in out if k.lower() == "location"]:
            out[key] = self.rewrite_url(out[key])
        return out

    def body(self, headers: dict[str, str], body: bytes) -> bytes:
        """The body as the client gets it: an HTML page's links rewritten (not after a redirect)."""
        lowered = {k.lower(): v for k, v in headers.items()}
        if lowered.get("location"):
            return body
        media = lowered.get("content-type", "").split(";", 1)[0].strip()
        if media != "text/html":
            return body
        return rewrite_html(body.decode("utf-8", "surrogateescape"), self.rewrite_url).encode(
            "utf-8", "surrogateescape")


def rewrite_html(page: str, rewrite: Callable[[str], str]) -> str:
    """`page` with each start tag written as Go's Token.String() writes it, its URL attributes through
    `rewrite`; everything between tags as it was."""
    from .start_tags import StartTags  # the HTML parser (and its entity tables) load with the first page

    parser = StartTags()
    parser.feed(page)
    parser.close()
    line_starts = [0]
    for match in re.finditer("\n", page):
        line_starts.append(match.end())
    out: list[str] = []
    at = 0
    for (line, column), raw, tag, attrs, closed in parser.found:
        start = line_starts[line - 1] + column
        if start < at or page[start:start + len(raw)] != raw:
            continue  # not where the parser says: leave it
        names = URL_ATTRIBUTES.get(tag, frozenset())
        rendered = "".join(f' {key}="{go_escape(rewrite(value or "") if key in names else value or "")}"'
                           for key, value in attrs)
        out.append(page[at:start])
        out.append(f"<{tag}{rendered}{'/>' if closed else '>'}")
        at = start + len(raw)
    out.append(page[at:])
    return "".join(out)
