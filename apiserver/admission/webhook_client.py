"""Calling admission (and conversion) webhooks over HTTPS: where `clientConfig` points, its trust roots,
timeouts, Go-like errors.

A `url` is called as given. A `service` reference is addressed as `https://<name>.<namespace>.svc:<port><path>`
(the name the serving certificate must carry) and connected to, in order:
1. an ExternalName service's external name;
2. the first ready address of the service's EndpointSlices (label `kubernetes.io/service-name`), else of its
   Endpoints object, on the target port of the service port named by `service.port` (upstream calls this
   `--enable-aggregator-routing`);
3. otherwise the service's clusterIP and port.
Pod and Service addresses exist only in the cluster network, which the API server is not on: an endpoint on a
node (it has a nodeName) and a clusterIP are reached through a kubelet's HTTP CONNECT tunnel (`egress`; the
endpoint's own node first), TLS end to end through it. Loopback addresses (hostNetwork Pods) and endpoints that
name no node (written by hand) are dialled directly.
Errors read like the Go client's (`Post "https://...?timeout=10s": dial tcp ...: connect: connection refused`).
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import logging
import ssl
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import aiohttp
import orjson

from ..egress import Tunnel, tunnel
from ..registry.reader import ObjectReader

log = logging.getLogger("mini-kube.admission")

STATUS_TEXT = {
    400: "the server rejected our request for an unknown reason",
    401: "the server has asked for the client to provide credentials",
    403: "the server does not allow access to the requested resource",
    404: "the server could not find the requested resource",
    405: "the server does not allow this method on the requested resource",
    415: "the server does not support the media type of the request",
    429: "the server has received too many requests and has asked us to try again later",
}


class CallError(Exception):
    """Calling the webhook failed (subject to its failurePolicy); the text follows `failed calling webhook "x": `."""


@dataclass(frozen=True, slots=True)
class Target:
    url: str  # what is dialled
    shown: str  # what errors show (the service DNS name for service references)
    server_hostname: str | None  # TLS name to verify when dialling an address
    host_header: str | None
    tunnel: Tunnel | None = None  # the kubelet that carries the connection into the cluster network


@dataclass(frozen=True, slots=True)
class Address:
    """An endpoint of a service: where it listens and the node it is on ("" when it names none)."""

    ip: str
    port: int
    node: str = ""


def _port_of(service: dict[str, Any], port: int) -> dict[str, Any] | None:
    return next((p for p in (service.get("spec") or {}).get("ports") or () if p.get("port") == port), None)


def _slice_address(registry: ObjectReader, namespace: str, name: str, port_name: str) -> Address | None:
    res = registry.resources.lookup("discovery.k8s.io", "v1", "endpointslices")
    if res is None:
        return None
    for entry in registry.cache.list(res.key_prefix, namespace):
        slice_ = entry.obj
        if ((slice_.get("metadata") or {}).get("labels") or {}).get("kubernetes.io/service-name") != name:
            continue
        ports = slice_.get("ports") or []
        port = next((p for p in ports if (p.get("name") or "") == port_name), ports[0] if len(ports) == 1 else None)
        if port is None or not port.get("port"):
            continue
        for endpoint in slice_.get("endpoints") or ():
            if (endpoint.get("conditions") or {}).get("ready") is False or not endpoint.get("addresses"):
                continue
            return Address(endpoint["addresses"][0], int(port["port"]), endpoint.get("nodeName") or "")
    return None


def _endpoints_address(registry: ObjectReader, namespace: str, name: str, port_name: str) -> Address | None:
    res = registry.resources.lookup("", "v1", "endpoints")
    entry = registry.find(res, namespace, name) if res is not None else None
    for subset in (entry.obj.get("subsets") or ()) if entry is not None else ():
        ports = subset.get("ports") or []
        port = next((p for p in ports if (p.get("name") or "") == port_name), ports[0] if len(ports) == 1 else None)
        addresses = subset.get("addresses") or []
        if port is not None and port.get("port") and addresses and addresses[0].get("ip"):
            return Address(addresses[0]["ip"], int(port["port"]), addresses[0].get("nodeName") or "")
    return None


def _host(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def resolve(registry: ObjectReader, client_config: dict[str, Any], timeout: int) -> Target:
    """Where to send the review (CallError when a service reference cannot be resolved)."""
    query = f"?timeout={timeout}s"
    if client_config.get("url"):
        url = client_config["url"] + query
        return Target(url, url, None, None)
    ref = client_config.get("service") or {}
    namespace, name = ref.get("namespace") or "", ref.get("name") or ""
    port, path = int(ref.get("port") or 443), ref.get("path") or ""
    dns = f"{name}.{namespace}.svc"
    shown = f"https://{dns}:{port}{path}{query}"
    svc_res = registry.resources.lookup("", "v1", "services")
    entry = registry.find(svc_res, namespace, name) if svc_res is not None else None
    if entry is None:
        raise CallError(f'failed to call webhook: Post "{shown}": service "{name}" not found')
    spec = entry.obj.get("spec") or {}
    if spec.get("type") == "ExternalName" and spec.get("externalName"):
        url = f"https://{_host(spec['externalName'])}:{port}{path}{query}"
        return Target(url, shown, dns, f"{dns}:{port}")
    svc_port = _port_of(entry.obj, port)
    if svc_port is None:
        raise CallError(f'failed to call webhook: Post "{shown}": no service port {port} found for service "{name}"')
    port_name = svc_port.get("name") or ""
    address = _slice_address(registry, namespace, name, port_name) or \
        _endpoints_address(registry, namespace, name, port_name)
    in_cluster = address is not None and bool(address.node)
    if address is None and spec.get("clusterIP") not in (None, "", "None"):
        address, in_cluster = Address(spec["clusterIP"], port), True
    if address is None:
        raise CallError(f'failed to call webhook: Post "{shown}": no endpoints available for service "{name}"')
    url = f"https://{_host(address.ip)}:{address.port}{path}{query}"
    via = None
    if in_cluster and not _is_loopback(address.ip):
        via = tunnel(registry, address.node or None)
        if via is None:
            raise CallError(f'failed to call webhook: Post "{shown}": no node can reach the cluster network')
    return Target(url, shown, dns, f"{dns}:{port}", via)


def _is_loopback(ip: str) -> bool:
    try:
        return ipaddress.ip_address(ip).is_loopback
    except ValueError:
        return False


def _describe(exc: BaseException, target: Target) -> str:
    """The Go net/http wording of a failed call, after `Post "<url>": `."""
    dialled = urlsplit(target.url).netloc
    if isinstance(exc, TimeoutError | aiohttp.ServerTimeoutError):
        return "context deadline exceeded"
    if isinstance(exc, aiohttp.ClientHttpProxyError):  # the tunnel's dial failed: its reason is the dial's error
        return exc.message or f"proxy answered {exc.status}"
    if isinstance(exc, aiohttp.ClientConnectorCertificateError):
        cert_error = exc.certificate_error
        text = getattr(cert_error, "verify_message", "") or str(cert_error)
        if getattr(cert_error, "verify_code", 0) == 62 or "mismatch" in text.lower():
            name = target.server_hostname or urlsplit(target.url).hostname
            return f"tls: failed to verify certificate: x509: certificate is not valid for {name}"
        return "tls: failed to verify certificate: x509: certificate signed by unknown authority"
    if isinstance(exc, aiohttp.ClientConnectorError):
        os_error = exc.os_error
        if isinstance(os_error, ConnectionRefusedError):
            return f"dial tcp {dialled}: connect: connection refused"
        reason = getattr(os_error, "strerror", None) or str(os_error)
        return f"dial tcp {dialled}: connect: {reason.lower()}"
    if isinstance(exc, aiohttp.ClientSSLError | ssl.SSLError):
        return f"remote error: tls: {getattr(exc, 'reason', None) or exc}"
    if isinstance(exc, aiohttp.ServerDisconnectedError):
        return "EOF"
    return str(exc) or type(exc).__name__


def _status_message(status: int, body: bytes) -> str:
    """What the Go REST client reports for a non-2xx answer."""
    try:
        decoded = orjson.loads(body)
    except orjson.JSONDecodeError:
        decoded = None
    if isinstance(decoded, dict) and decoded.get("kind") == "Status" and decoded.get("message"):
        return str(decoded["message"])
    if status in STATUS_TEXT:
        return STATUS_TEXT[status]
    text = body.decode("utf-8", "replace").strip()
    return f'an error on the server ("{text}") has prevented the request from succeeding'


class WebhookClient:
    """One aiohttp session (connections kept alive) and an SSLContext per caBundle."""

    def __init__(self, registry: ObjectReader) -> None:
        self.registry = registry
        self._session: aiohttp.ClientSession | None = None
        self._contexts: dict[str, ssl.SSLContext] = {}

    def _ssl(self, ca_bundle: str | None) -> ssl.SSLContext:
        key = ca_bundle or ""
        context = self._contexts.get(key)
        if context is None:
            try:
                pem = base64.b64decode(ca_bundle, validate=True).decode() if ca_bundle else None
                context = ssl.create_default_context(cadata=pem) if pem else ssl.create_default_context()
            except (binascii.Error, UnicodeDecodeError, ssl.SSLError, ValueError):
                raise CallError("could not get REST client: unable to load root certificates: unable to parse "
                                "bytes as PEM block") from None
            self._contexts[key] = context
        return context

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0, keepalive_timeout=30))
        return self._session

    async def post(self, client_config: dict[str, Any], body: dict[str, Any], timeout: int) -> Any:
        """POST an AdmissionReview; the decoded answer, or CallError."""
        target = resolve(self.registry, client_config, timeout)
        context = self._ssl(client_config.get("caBundle"))
        headers = {"Content-Type": "application/json", "Accept": "application/json",
                   "User-Agent": "kube-apiserver-admission"}
        if target.host_header:
            headers["Host"] = target.host_header
        via = target.tunnel
        try:
            async with self._client().post(target.url, data=orjson.dumps(body), headers=headers, ssl=context,
                                           server_hostname=target.server_hostname,
                                           proxy=via.proxy if via else None,
                                           proxy_headers=via.headers if via else None,
                                           timeout=aiohttp.ClientTimeout(total=timeout)) as resp:
                raw = await resp.read()
                status = resp.status
        except (TimeoutError, aiohttp.ClientError, OSError, ssl.SSLError) as exc:
            raise CallError(f'failed to call webhook: Post "{target.shown}": {_describe(exc, target)}') from None
        if not 200 <= status < 300:
            raise CallError(f"failed to call webhook: {_status_message(status, raw)}")
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise CallError(f"failed to call webhook: couldn't get version/kind; json parse error: {exc}") from None

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
