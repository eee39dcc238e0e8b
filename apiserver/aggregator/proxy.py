"""Forwarding a request to an extension API server (upstream's proxyHandler): to its Service's endpoint (through
a kubelet's tunnel when it is in the cluster network), TLS verified against the APIService's caBundle for the
name `<service>.<namespace>.svc`, presenting the aggregator's front-proxy client certificate, the caller named
in X-Remote-User / X-Remote-Group / X-Remote-Extra-* and its own credentials withheld. Answers, watches
included, stream back as they come."""

from __future__ import annotations

import base64
import binascii
import ssl
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit

import aiohttp
from aiohttp import web
from multidict import CIMultiDict

from ..admission.webhook_client import CallError, Target, resolve
from ..errors import StatusError
from ..registry.reader import ObjectReader

HOP_BY_HOP = {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer",
              "transfer-encoding", "upgrade", "host", "content-length"}
WITHHELD = ("authorization", "impersonate-", "x-remote-")  # the caller's credentials and forged identities


@dataclass(frozen=True, slots=True)
class ServiceRef:
    """Where an APIService's server is: its Service, the port, its CA bundle (base64) and whether TLS is checked."""

    namespace: str
    name: str
    port: int
    ca_bundle: str
    insecure: bool

    @classmethod
    def of(cls, apiservice: dict[str, Any]) -> ServiceRef | None:
        spec = apiservice.get("spec") or {}
        service = spec.get("service")
        if not isinstance(service, dict):
            return None
        return cls(str(service.get("namespace") or ""), str(service.get("name") or ""),
                   int(service.get("port") or 443), str(spec.get("caBundle") or ""),
                   bool(spec.get("insecureSkipTLSVerify")))


def unavailable(message: str = "service unavailable") -> StatusError:
    return StatusError(503, "ServiceUnavailable", message, {})


class ProxyClient:
    """One aiohttp session and an SSLContext per CA bundle, each with the front-proxy client certificate."""

    def __init__(self, objects: ObjectReader, client_cert: tuple[str, str] | None) -> None:
        self.objects = objects
        self.client_cert = client_cert  # (certificate file, key file)
        self._session: aiohttp.ClientSession | None = None
        self._contexts: dict[tuple[str, bool], ssl.SSLContext] = {}

    def _ssl(self, ref: ServiceRef) -> ssl.SSLContext:
        key = (ref.ca_bundle, ref.insecure)
        context = self._contexts.get(key)
        if context is None:
            try:
                pem = base64.b64decode(ref.ca_bundle, validate=True).decode() if ref.ca_bundle else None
            except (binascii.Error, UnicodeDecodeError):
                pem = None
            context = ssl.create_default_context(cadata=pem) if pem else ssl.create_default_context()
            if ref.insecure:
                context.check_hostname = False
                context.verify_mode = ssl.CERT_NONE
            if self.client_cert is not None:
                context.load_cert_chain(*self.client_cert)
            self._contexts[key] = context
        return context

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0, keepalive_timeout=30),
                                                  auto_decompress=False)
        return self._session

    def target(self, ref: ServiceRef) -> Target:
        """Where the Service's server answers (CallError when it cannot be reached)."""
        return resolve(self.objects, {"service": {"namespace": ref.namespace, "name": ref.name, "port": ref.port}},
                       30)

    def request(self, ref: ServiceRef, target: Target, method: str, path_qs: str, headers: Any,
                data: bytes | None, timeout: aiohttp.ClientTimeout) -> Any:
        """The aiohttp request (an async context manager) to `path_qs` of the server."""
        split = urlsplit(target.url)
        if target.host_header:
            headers["Host"] = target.host_header
        via = target.tunnel
        return self._client().request(method, f"{split.scheme}://{split.netloc}{path_qs}", data=data,
                                      headers=headers, ssl=self._ssl(ref),
                                      server_hostname=None if ref.insecure else target.server_hostname,
                                      proxy=via.proxy if via else None, proxy_headers=via.headers if via else None,
                                      timeout=timeout, allow_redirects=False)

    async def forward(self, request: web.Request, ref: ServiceRef, user: Any) -> web.StreamResponse:
        """Send `request` on as `user`; its answer, streamed."""
        try:
            target = self.target(ref)
        except CallError as exc:
            raise unavailable(str(exc).removeprefix("failed to call webhook: ")) from None
        headers: CIMultiDict[str] = CIMultiDict()
        for key, value in request.headers.items():
            lower = key.lower()
            if lower not in HOP_BY_HOP and not lower.startswith(WITHHELD):
                headers.add(key, value)
        headers.add("X-Remote-User", getattr(user, "name", ""))
        for group in getattr(user, "groups", ()) or ():
            headers.add("X-Remote-Group", group)
        for key, values in (getattr(user, "extra", None) or {}).items():
            for value in values:
                headers.add(f"X-Remote-Extra-{quote(key, safe='')}", value)
        body = await request.read() if request.can_read_body else None
        response: web.StreamResponse | None = None
        try:
            async with self.request(ref, target, request.method, request.path_qs, headers, body,
                                    aiohttp.ClientTimeout(total=None, sock_connect=10)) as answer:
                response = web.StreamResponse(status=answer.status, reason=answer.reason)
                for key, value in answer.headers.items():
                    if key.lower() not in HOP_BY_HOP:
                        response.headers.add(key, value)
                await response.prepare(request)
                async for chunk in answer.content.iter_any():
                    await response.write(chunk)
                await response.write_eof()
                return response
        except (TimeoutError, aiohttp.ClientError, OSError, ssl.SSLError) as exc:
            if response is not None and response.prepared:
                return response  # the answer had begun: it ends here, as a broken stream does
            raise unavailable(f"error trying to reach service: {exc or type(exc).__name__}") from None

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
