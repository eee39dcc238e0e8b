"""The one HTTP client every component uses to talk to the API server (controllers, CCM, proxy, operator).

Built on aiohttp. It reads a kubeconfig (server, CA, client certificate, bearer token), and speaks
JSON to the REST API: CRUD, patch, list with paging, and watch streams.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import errno
import os
import ssl
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import orjson
from mini_kube.machinery.kubeconfig import (
    Credentials,
    KubeconfigError,
    in_cluster,
    kubeconfig_error,
    load_credentials,
)
from mini_kube.machinery.refs import ResourceRef
from mini_kube.machinery.status import (
    AlreadyExists,
    ApiError,
    BadRequest,
    Conflict,
    Forbidden,
    Gone,
    Invalid,
    NotFound,
    TooManyRequests,
    Unauthorized,
)

__all__ = ["AlreadyExists", "ApiClient", "ApiError", "BadRequest", "Conflict", "Connection", "Forbidden", "Gone",
           "Invalid", "KubeconfigError", "NotFound", "ResourceRef", "TooManyRequests", "Unauthorized"]


RETRIED_STATUSES = {429, 500, 502, 503, 504}


class TokenBucket:
    """`qps` requests per second on average, `burst` at once (client-go's default client rate limiter)."""

    def __init__(self, qps: float, burst: int) -> None:
        self.qps = qps
        self.burst = burst
        self._tokens = float(burst)
        self._stamp = time.monotonic()

    async def take(self) -> None:
        if self.qps <= 0:
            return
        while True:
            now = time.monotonic()
            self._tokens = min(self.burst, self._tokens + (now - self._stamp) * self.qps)
            self._stamp = now
            if self._tokens >= 1:
                self._tokens -= 1
                return
            await asyncio.sleep((1 - self._tokens) / self.qps)


def _load_client_certificate(ctx: ssl.SSLContext, creds: Credentials) -> None:
    """The user's client certificate and key into `ctx`. Inline data never touches a disk: ssl reads only
    files, so it is written to an anonymous memory file (memfd, read through /proc/self/fd) closed at once."""
    cert = creds.cert_file or (base64.b64decode(creds.cert_data) if creds.cert_data else None)
    key = creds.key_file or (base64.b64decode(creds.key_data) if creds.key_data else None)
    if cert is None or key is None:
        return
    with _memory_file(cert) as cert_path, _memory_file(key) as key_path:
        ctx.load_cert_chain(cert_path, key_path)


@contextlib.contextmanager
def _memory_file(content: str | bytes) -> Iterator[str]:
    """A path that reads `content`: the path itself when it is one (str), else an anonymous in-memory file
    (memfd) that is gone when the block ends; where memfd is missing, a file in a private 0700 directory removed
    when the block ends."""
    if isinstance(content, str):
        yield content
        return
    if hasattr(os, "memfd_create"):
        fd = os.memfd_create("mini-kube-client", os.MFD_CLOEXEC)
        try:
            os.write(fd, content)
            yield f"/proc/self/fd/{fd}"
        finally:
            os.close(fd)
        return
    with tempfile.TemporaryDirectory(prefix="mini-kube-client-") as folder:
        target = Path(folder) / "data"
        target.write_bytes(content)
        yield str(target)


@dataclass
class Connection:
    """Server URL plus credentials, as read from a kubeconfig."""

    server: str
    ssl_context: ssl.SSLContext | bool | None = None
    token: str | None = None
    ca_pem: bytes | None = None  # the CA bundle that verifies the server (published to namespaces)
    unix_socket: str | None = None  # dial this (plain HTTP) instead of `server`: an in-process component's loopback

    @classmethod
    def from_kubeconfig(cls, path: str | Path, context: str | None = None) -> Connection:
        """The kubeconfig's current (or named) context, read as kubectl reads it (machinery.kubeconfig);
        KubeconfigError, saying why, when it cannot be used."""
        credentials = load_credentials(path, context)
        try:
            return cls.from_credentials(credentials)
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:  # its CA or client certificate
            raise kubeconfig_error(path, exc) from exc

    @classmethod
    def from_credentials(cls, creds: Credentials) -> Connection:
        """A connection with resolved kubeconfig credentials: TLS verified with their CA (unless insecure), their
        client certificate, their bearer token."""
        ssl_ctx: ssl.SSLContext | bool | None = None
        if creds.server.startswith("https"):
            if creds.insecure:
                ssl_ctx = False
            else:
                ssl_ctx = ssl.create_default_context(
                    cadata=base64.b64decode(creds.ca_data).decode() if creds.ca_data else None,
                    cafile=None if creds.ca_data else creds.ca_file)
                _load_client_certificate(ssl_ctx, creds)
        ca_pem = base64.b64decode(creds.ca_data) if creds.ca_data else (
            Path(creds.ca_file).read_bytes() if creds.ca_file else None)
        return cls(creds.server, ssl_ctx, creds.token, ca_pem)

    @classmethod
    def in_cluster(cls) -> Connection:
        """A pod's own credentials: the service-account token and CA, KUBERNETES_SERVICE_HOST/PORT."""
        creds = in_cluster()
        if creds is None:
            raise RuntimeError("not running in a cluster: KUBERNETES_SERVICE_HOST/PORT or the token are missing")
        return cls.from_credentials(creds)


IDLE_KEEPALIVE = 60.0
"""Seconds an idle pooled connection is kept (aiohttp's default is 15 s; client-go's transport keeps them 90 s):
a component that writes every 10-60 s (leases, node status, a kubelet's bursts of Pod status) reuses its
connections instead of paying a TLS handshake on both sides each time (10% of the CPU with 100 nodes); below the
API server's 90 s idle timeout, so the client, not the server, closes a connection that is idle."""


class ApiClient:
    """Async Kubernetes REST client over one pooled aiohttp session."""

    def __init__(self, connection: Connection, *, user_agent: str = "mini-kube", qps: float = 0, burst: int = 100,
                 retries: int = 5) -> None:
        self.connection = connection
        self.user_agent = user_agent
        self.limiter = TokenBucket(qps, burst)  # qps 0: unlimited (in-process components)
        self.retries = retries
        self._session: aiohttp.ClientSession | None = None

    @classmethod
    def from_kubeconfig(cls, path: str | Path, **kwargs: Any) -> ApiClient:
        return cls(Connection.from_kubeconfig(path), **kwargs)

    @property
    def session(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            headers = {"User-Agent": self.user_agent, "Accept": "application/json"}
            if self.connection.token:
                headers["Authorization"] = f"Bearer {self.connection.token}"
            connector: aiohttp.BaseConnector
            base_url = self.connection.server
            if self.connection.unix_socket:
                connector = aiohttp.UnixConnector(self.connection.unix_socket, limit=64,
                                                  keepalive_timeout=IDLE_KEEPALIVE)
                base_url = "http://localhost"
            else:
                connector = aiohttp.TCPConnector(ssl=self.connection.ssl_context if self.connection.ssl_context
                                                 is not None else True, limit=64, keepalive_timeout=IDLE_KEEPALIVE)
            self._session = aiohttp.ClientSession(base_url, headers=headers, connector=connector,
                                                  json_serialize=lambda o: orjson.dumps(o).decode())
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()

    async def __aenter__(self) -> ApiClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def request(self, method: str, path: str, *, body: Any = None, params: dict[str, str] | None = None,
                      content_type: str = "application/json", accept: str = "application/json") -> Any:
        """One API call; 429 and 5xx answers and broken connections are retried with back-off (writes only on
        429/503, which say the request was not processed), honouring Retry-After."""
        data = body if isinstance(body, bytes | str) or body is None else orjson.dumps(body)
        headers = {"Accept": accept}
        if data is not None:
            headers["Content-Type"] = content_type
        safe = method in ("GET", "HEAD")
        delay = 0.05
        for attempt in range(self.retries + 1):
            await self.limiter.take()
            try:
                return await self._once(method, path, data, params, headers)
            except ApiError as exc:
                retry = exc.status in (429, 503) or (safe and exc.status in RETRIED_STATUSES)
                if not retry or attempt == self.retries:
                    raise
                after = exc.body.get("details", {}).get("retryAfterSeconds") if isinstance(exc.body, dict) else None
                await asyncio.sleep(float(after) if after else delay)
            except (aiohttp.ClientConnectionError, asyncio.TimeoutError) as exc:  # noqa: UP041
                # a kept-alive connection the server closed (it restarted) fails before anything is sent:
                # any request may go again once, on a new connection; otherwise only reads are retried
                stale = attempt == 0 and (isinstance(exc, aiohttp.ServerDisconnectedError) or (
                    isinstance(exc, aiohttp.ClientOSError) and exc.errno == errno.EPIPE))
                if not (safe or stale) or attempt == self.retries:
                    raise
                await asyncio.sleep(0 if stale else delay)
            delay = min(delay * 2, 2.0)
        raise AssertionError("unreachable")

    async def _once(self, method: str, path: str, data: Any, params: dict[str, str] | None,
                    headers: dict[str, str]) -> Any:
        async with self.session.request(method, path, data=data, params=params, headers=headers) as response:
            raw = await response.read()
            if response.status >= 400:
                try:
                    status = orjson.loads(raw)
                except orjson.JSONDecodeError:
                    status = {"message": raw.decode(errors="replace")}
                if response.headers.get("Retry-After") and isinstance(status, dict):
                    status.setdefault("details", {}).setdefault("retryAfterSeconds",
                                                                 response.headers["Retry-After"])
                raise ApiError.of(response.status, status)
            if not raw:
                return None
            if response.content_type == "application/json":
                return orjson.loads(raw)
            return raw.decode()

    # -- typed helpers -----------------------------------------------------------------------------
    async def get(self, ref: ResourceRef, name: str, namespace: str | None = None, subresource: str = "") -> Any:
        return await self.request("GET", ref.path(namespace, name, subresource))

    async def list(self, ref: ResourceRef, namespace: str | None = None, **params: str) -> Any:
        return await self.request("GET", ref.path(namespace), params=params or None)

    async def create(self, ref: ResourceRef, obj: dict[str, Any], namespace: str | None = None,
                     **params: str) -> Any:
        return await self.request("POST", ref.path(namespace), body=obj, params=params or None)

    async def replace(self, ref: ResourceRef, obj: dict[str, Any], namespace: str | None = None,
                      subresource: str = "") -> Any:
        return await self.request("PUT", ref.path(namespace, obj["metadata"]["name"], subresource), body=obj)

    async def patch(self, ref: ResourceRef, name: str, patch: Any, namespace: str | None = None, *,
                    patch_type: str = "application/merge-patch+json", subresource: str = "",
                    **params: str) -> Any:
        return await self.request("PATCH", ref.path(namespace, name, subresource), body=patch,
                                  content_type=patch_type, params=params or None)

    async def delete(self, ref: ResourceRef, name: str, namespace: str | None = None,
                     body: dict[str, Any] | None = None) -> Any:
        return await self.request("DELETE", ref.path(namespace, name), body=body)

    async def apply(self, ref: ResourceRef, obj: dict[str, Any], namespace: str | None = None, *,
                    field_manager: str, force: bool = False, subresource: str = "") -> Any:
        """Server-side apply of `obj` (its fields are what `field_manager` owns)."""
        params = {"fieldManager": field_manager, **({"force": "true"} if force else {})}
        return await self.request("PATCH", ref.path(namespace, obj["metadata"]["name"], subresource), body=obj,
                                  content_type="application/apply-patch+yaml", params=params)

    async def replace_status(self, ref: ResourceRef, obj: dict[str, Any], namespace: str | None = None) -> Any:
        """Write `obj`'s status through the status subresource (a conflict if it is stale)."""
        return await self.replace(ref, obj, namespace, subresource="status")

    async def watch(self, ref: ResourceRef, namespace: str | None = None, *, resource_version: str = "",
                    timeout_seconds: int = 300, **params: str) -> AsyncIterator[dict[str, Any]]:
        """Yield watch events (`{"type": ..., "object": ...}`) until the server ends the stream."""
        query = {"watch": "1", "timeoutSeconds": str(timeout_seconds), "allowWatchBookmarks": "true", **params}
        if resource_version:
            query["resourceVersion"] = resource_version
        timeout = aiohttp.ClientTimeout(total=None, sock_read=timeout_seconds + 30)
        async with self.session.get(ref.path(namespace), params=query, timeout=timeout) as response:
            if response.status >= 400:
                raise ApiError.of(response.status, orjson.loads(await response.read()))
            buffer = b""
            async for chunk in response.content.iter_any():
                buffer += chunk
                while b"\n" in buffer:
                    line, buffer = buffer.split(b"\n", 1)
                    if line.strip():
                        yield orjson.loads(line)
