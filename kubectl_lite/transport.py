"""A small blocking HTTP(S) transport on the standard library (http.client + ssl), for a CLI that must start in
milliseconds: the project's async client pulls in aiohttp, which alone costs about 0.2 s to import.

One keep-alive connection, kubeconfig credentials (CA, client certificate, bearer token, basic auth), kubectl's
`-v` request logging, and errors raised as `ApiError` with the server's Status body.
"""

from __future__ import annotations

import base64
import hashlib
import http.client
import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode, urlsplit

from mini_kube.machinery.kubeconfig import Credentials
from mini_kube.machinery.status import ApiError

if TYPE_CHECKING:
    import ssl

USER_AGENT = "kubectl-lite/v0.1.0 (linux/amd64) mini-kube"


def _key_material(data: str, suffix: str) -> str:
    """Certificate data from a kubeconfig as a private file (ssl wants paths), written once per content."""
    raw = base64.b64decode(data)
    folder = Path(os.environ.get("XDG_RUNTIME_DIR") or Path.home() / ".kube" / "cache") / "kubectl-lite-certs"
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = folder / (hashlib.sha256(raw).hexdigest()[:24] + suffix)
    if not path.exists():
        tmp = path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(raw)
        tmp.replace(path)
    return str(path)


class Transport:
    """Requests against one API server; `verbosity` follows kubectl's `-v` levels (6: requests, 8: bodies)."""

    def __init__(self, creds: Credentials, *, verbosity: int = 0, timeout: float | None = None) -> None:
        self.creds = creds
        self.verbosity = verbosity
        self.timeout = timeout
        parts = urlsplit(creds.server)
        self.scheme = parts.scheme or "https"
        self.host = parts.hostname or "localhost"
        self.port = parts.port or (443 if self.scheme == "https" else 80)
        self.prefix = parts.path.rstrip("/")
        self._conn: http.client.HTTPConnection | None = None

    # -- connection ----------------------------------------------------------------------------------------
    def ssl_context(self) -> ssl.SSLContext:
        """The TLS context the kubeconfig's CA, client certificate and insecure flag describe."""
        import ssl

        creds = self.creds
        if creds.insecure:
            context = ssl._create_unverified_context()  # noqa: S323 - insecure-skip-tls-verify asked for it
        else:
            cafile = creds.ca_file or (_key_material(creds.ca_data, ".crt") if creds.ca_data else None)
            context = ssl.create_default_context(cafile=cafile)
        cert = creds.cert_file or (_key_material(creds.cert_data, ".crt") if creds.cert_data else None)
        key = creds.key_file or (_key_material(creds.key_data, ".key") if creds.key_data else None)
        if cert and key:
            context.load_cert_chain(cert, key)
        return context

    def _connect(self) -> http.client.HTTPConnection:
        if self._conn is None:
            if self.scheme == "https":
                self._conn = http.client.HTTPSConnection(self.host, self.port, timeout=self.timeout,
                                                         context=self.ssl_context())
            else:
                self._conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        return self._conn

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def headers(self, accept: str, content_type: str | None) -> dict[str, str]:
        """The request headers: Accept, User-Agent, Content-Type and the kubeconfig's credentials."""
        headers = {"Accept": accept, "User-Agent": USER_AGENT}
        if content_type:
            headers["Content-Type"] = content_type
        if self.creds.token:
            headers["Authorization"] = f"Bearer {self.creds.token}"
        elif self.creds.username is not None:
            pair = f"{self.creds.username}:{self.creds.password or ''}".encode()
            headers["Authorization"] = "Basic " + base64.b64encode(pair).decode()
        return headers

    def url(self, path: str, params: dict[str, Any] | None = None) -> str:
        query = urlencode({k: v for k, v in (params or {}).items() if v not in (None, "")})
        return self.prefix + path + ("?" + query if query else "")

    def _log(self, level: int, message: str) -> None:
        if self.verbosity >= level:
            now = time.time()
            stamp = time.strftime("%m%d %H:%M:%S", time.localtime(now)) + f".{int(now % 1 * 1e6):06d}"
            print(f"I{stamp} {os.getpid():>7} round_trippers.go:560] {message}", file=sys.stderr)

    # -- requests -------------------------------------------------------------------------------------------
    def open(self, method: str, path: str, *, params: dict[str, Any] | None = None, body: Any = None,
             accept: str = "application/json", content_type: str | None = None) -> http.client.HTTPResponse:
        """Send a request and return the response with its body unread (for streams); raises on >= 400."""
        data: bytes | None
        if body is None or isinstance(body, bytes):
            data = body
        else:
            data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
            content_type = content_type or "application/json"
        target = self.url(path, params)
        headers = self.headers(accept, content_type)
        started = time.monotonic()
        for attempt in (1, 2):
            conn = self._connect()
            try:
                conn.request(method, target, body=data, headers=headers)
                response = conn.getresponse()
                break
            except (ConnectionError, http.client.RemoteDisconnected, http.client.CannotSendRequest):
                self.close()  # a kept-alive connection the server closed: once more on a new one
                if attempt == 2:
                    raise
        elapsed = int((time.monotonic() - started) * 1000)
        self._log(6, f"{method} {self.creds.server}{target} {response.status} {response.reason} "
                     f"in {elapsed} milliseconds")
        if self.verbosity >= 8 and data:
            self._log(8, f"Request Body: {data.decode(errors='replace')}")
        if response.status >= 400:
            raw = response.read()
            if self.verbosity >= 8:
                self._log(8, f"Response Body: {raw.decode(errors='replace')}")
            raise ApiError(response.status, _status_body(response.status, raw))
        return response

    def request(self, method: str, path: str, **kwargs: Any) -> Any:
        """A request whose JSON answer is decoded (None for an empty body)."""
        response = self.open(method, path, **kwargs)
        raw = response.read()
        if self.verbosity >= 8:
            self._log(8, f"Response Body: {raw[:1024].decode(errors='replace')}")
        if not raw:
            return None
        if "json" in (response.getheader("Content-Type") or "") or raw[:1] in (b"{", b"["):
            return json.loads(raw)
        return raw.decode(errors="replace")

    def stream_lines(self, path: str, params: dict[str, Any] | None = None,
                     accept: str = "application/json") -> Iterator[bytes]:
        """Lines of a streamed answer (watch events, followed logs) until the server ends it."""
        response = self.open("GET", path, params=params, accept=accept)
        try:
            while True:
                line = response.readline()
                if not line:
                    return
                yield line
        finally:
            self.close()  # a stream cut short leaves the connection unusable for further requests


def _status_body(status: int, raw: bytes) -> dict[str, Any]:
    try:
        body = json.loads(raw)
        if isinstance(body, dict) and body.get("kind") == "Status":
            return body
    except ValueError:
        pass
    text = raw.decode(errors="replace").strip()
    reason = {401: "Unauthorized", 403: "Forbidden", 404: "NotFound", 405: "MethodNotAllowed",
              409: "Conflict", 429: "TooManyRequests"}.get(status, "")
    return {"kind": "Status", "status": "Failure", "code": status, "reason": reason,
            "message": text or f"the server responded with the status code {status}"}
