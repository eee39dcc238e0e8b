"""The one HTTP client every component uses to talk to the API server (controllers, CCM, proxy, operator).

Built on aiohttp. It reads a kubeconfig (server, CA, client certificate, bearer token), and speaks
JSON to the REST API: CRUD, patch, list with paging, and watch streams.
"""

from __future__ import annotations

import base64
import ssl
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import yaml

from .refs import ResourceRef

__all__ = ["ApiClient", "ApiError", "Connection", "ResourceRef"]


class ApiError(Exception):
    """A non-2xx answer, with the Status body the server sent."""

    def __init__(self, status: int, body: dict[str, Any]) -> None:
        super().__init__(f"{status} {body.get('reason', '')}: {body.get('message', '')}")
        self.status = status
        self.body = body

    @property
    def reason(self) -> str:
        return str(self.body.get("reason", ""))


def _materialize(data_b64: str | None, path: str | None, suffix: str) -> str | None:
    if path:
        return path
    if not data_b64:
        return None
    handle = tempfile.NamedTemporaryFile("wb", suffix=suffix, delete=False)  # noqa: SIM115 - kept for ssl
    handle.write(base64.b64decode(data_b64))
    handle.close()
    return handle.name


@dataclass
class Connection:
    """Server URL plus credentials, as read from a kubeconfig."""

    server: str
    ssl_context: ssl.SSLContext | bool | None = None
    token: str | None = None

    @classmethod
    def from_kubeconfig(cls, path: str | Path, context: str | None = None) -> Connection:
        config = yaml.safe_load(Path(path).read_text())
        ctx_name = context or config.get("current-context")
        ctx = next(c["context"] for c in config["contexts"] if c["name"] == ctx_name)
        cluster = next(c["cluster"] for c in config["clusters"] if c["name"] == ctx["cluster"])
        user = next((u["user"] for u in config.get("users", []) if u["name"] == ctx.get("user")), {}) or {}
        server = cluster["server"].rstrip("/")
        ssl_ctx: ssl.SSLContext | bool | None = None
        if server.startswith("https"):
            if cluster.get("insecure-skip-tls-verify"):
                ssl_ctx = False
            else:
                ssl_ctx = ssl.create_default_context(
                    cafile=_materialize(cluster.get("certificate-authority-data"),
                                        cluster.get("certificate-authority"), ".crt"))
            cert = _materialize(user.get("client-certificate-data"), user.get("client-certificate"), ".crt")
            key = _materialize(user.get("client-key-data"), user.get("client-key"), ".key")
            if cert and key and isinstance(ssl_ctx, ssl.SSLContext):
                ssl_ctx.load_cert_chain(cert, key)
        return cls(server, ssl_ctx, user.get("token"))


class ApiClient:
    """Async Kubernetes REST client over one pooled aiohttp session."""

    def __init__(self, connection: Connection, *, user_agent: str = "mini-kube") -> None:
        self.connection = connection
        self.user_agent = user_agent
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
            connector = aiohttp.TCPConnector(ssl=self.connection.ssl_context if self.connection.ssl_context
                                             is not None else None, limit=64)
            self._session = aiohttp.ClientSession(self.connection.server, headers=headers, connector=connector,
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
        data = body if isinstance(body, bytes | str) or body is None else orjson.dumps(body)
        headers = {"Accept": accept}
        if data is not None:
            headers["Content-Type"] = content_type
        async with self.session.request(method, path, data=data, params=params, headers=headers) as response:
            raw = await response.read()
            if response.status >= 400:
                try:
                    status = orjson.loads(raw)
                except orjson.JSONDecodeError:
                    status = {"message": raw.decode(errors="replace")}
                raise ApiError(response.status, status)
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

    async def watch(self, ref: ResourceRef, namespace: str | None = None, *, resource_version: str = "",
                    timeout_seconds: int = 300, **params: str) -> AsyncIterator[dict[str, Any]]:
        """Yield watch events (`{"type": ..., "object": ...}`) until the server ends the stream."""
        query = {"watch": "1", "timeoutSeconds": str(timeout_seconds), "allowWatchBookmarks": "true", **params}
        if resource_version:
            query["resourceVersion"] = resource_version
        timeout = aiohttp.ClientTimeout(total=None, sock_read=timeout_seconds + 30)
        async with self.session.get(ref.path(namespace), params=query, timeout=timeout) as response:
            if response.status >= 400:
                raise ApiError(response.status, orjson.loads(await response.read()))
            buffer = b""
            async for chunk in response.content.iter_any():
                buffer += chunk
                while b"\n" in buffer:
                    line, buffer = buffer.split(b"\n", 1)
                    if line.strip():
                        yield orjson.loads(line)
