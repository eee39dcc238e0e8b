"""Test helpers: a real admission webhook server: aiohttp over TLS on 127.0.0.1, with a CA made here.

`webhook_server.handle(path, func)` makes POST /<path> answer `func(request) -> response` (an AdmissionReview
request dict in, the response dict out; `uid` is filled in); every review received is kept in
`webhook_server.reviews[path]`. Helpers build webhook configurations pointing at it.
"""

from __future__ import annotations

import asyncio
import base64
import datetime as dt
import ipaddress
import socket
import ssl
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aiohttp import web
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from mini_kube.client import ResourceRef

Handler = Callable[[dict[str, Any]], dict[str, Any]]
SERVICE_DNS = ("hooks.default.svc", "hooks.hook-system.svc")
ADM = "admissionregistration.k8s.io"
MUTATING = ResourceRef(ADM, "v1", "mutatingwebhookconfigurations", namespaced=False)
VALIDATING = ResourceRef(ADM, "v1", "validatingwebhookconfigurations", namespaced=False)
POLICIES = ResourceRef(ADM, "v1", "validatingadmissionpolicies", namespaced=False)
BINDINGS = ResourceRef(ADM, "v1", "validatingadmissionpolicybindings", namespaced=False)


def _pem_key(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def make_ca(name: str = "webhook-test-ca") -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = dt.datetime.now(dt.UTC)
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(minutes=5))
            .not_valid_after(now + dt.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    return cert, key


def make_serving_cert(ca: x509.Certificate, ca_key: ec.EllipticCurvePrivateKey,
                      names: tuple[str, ...] = SERVICE_DNS) -> tuple[bytes, bytes]:
    key = ec.generate_private_key(ec.SECP256R1())
    now = dt.datetime.now(dt.UTC)
    sans = [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost"),
            *(x509.DNSName(n) for n in names)]
    cert = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "hooks")]))
            .issuer_name(ca.subject).public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5)).not_valid_after(now + dt.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName(sans), critical=False)
            .sign(ca_key, hashes.SHA256()))
    return cert.public_bytes(serialization.Encoding.PEM), _pem_key(key)


def host_address() -> str | None:
    """A non-loopback IPv4 address of this host (None when there is none)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        try:
            sock.connect(("198.51.100.1", 9))  # no packet is sent: this only picks the outgoing interface
            address = sock.getsockname()[0]
        except OSError:
            return None
    return None if ipaddress.ip_address(address).is_loopback else address


class WebhookServer:
    """The test webhook: one aiohttp app on its own loop and thread."""

    def __init__(self) -> None:
        ca, ca_key = make_ca()
        self.ca_bundle = base64.b64encode(ca.public_bytes(serialization.Encoding.PEM)).decode()
        cert, key = make_serving_cert(ca, ca_key)
        self._dir = tempfile.TemporaryDirectory(prefix="webhook-")
        cert_file, key_file = Path(self._dir.name) / "tls.crt", Path(self._dir.name) / "tls.key"
        cert_file.write_bytes(cert)
        key_file.write_bytes(key)
        self.ssl = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.ssl.load_cert_chain(cert_file, key_file)
        self.handlers: dict[str, Handler] = {}
        self.reviews: dict[str, list[dict[str, Any]]] = {}
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="webhook-server", daemon=True)
        self.port = 0
        self.host_ip: str | None = None
        self._runner: web.AppRunner | None = None

    def url(self, path: str) -> str:
        return f"https://127.0.0.1:{self.port}/{path}"

    def handle(self, path: str, func: Handler) -> str:
        self.handlers[path] = func
        self.reviews[path] = []
        return path

    async def _serve(self, request: web.Request) -> web.Response:
        path = request.match_info["path"]
        body = await request.json()
        self.reviews.setdefault(path, []).append(body)
        func = self.handlers.get(path)
        if func is None:
            return web.Response(status=404, text="404 page not found")
        answer = func(body["request"])
        if asyncio.iscoroutine(answer):
            answer = await answer
        if isinstance(answer, web.Response):
            return answer
        if "apiVersion" in answer:  # a whole review, sent as is
            return web.json_response(answer)
        response = {"uid": body["request"]["uid"], **answer}
        return web.json_response({"apiVersion": body.get("apiVersion", "admission.k8s.io/v1"),
                                  "kind": "AdmissionReview", "response": response})

    async def _start(self) -> None:
        app = web.Application()
        app.router.add_post("/{path:.*}", self._serve)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0, ssl_context=self.ssl)
        await site.start()
        self.port = self._runner.addresses[0][1]
        self.host_ip = host_address()
        if self.host_ip:  # Endpoints may not point at loopback: also listen on this host's own address
            await web.TCPSite(self._runner, self.host_ip, self.port, ssl_context=self.ssl).start()

    def start(self) -> WebhookServer:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self.loop).result(10)
        return self

    def stop(self) -> None:
        if self._runner is not None:
            asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(5)
        self.loop.close()
        self._dir.cleanup()


def client_config(server: WebhookServer, path: str, *, ca_bundle: str | None = None) -> dict[str, Any]:
    return {"url": server.url(path), "caBundle": ca_bundle or server.ca_bundle}


def webhook(name: str, config: dict[str, Any], *, resources: tuple[str, ...] = ("configmaps",),
            operations: tuple[str, ...] = ("CREATE", "UPDATE"), groups: tuple[str, ...] = ("",),
            **extra: Any) -> dict[str, Any]:
    """One webhook entry (v1 fields, sideEffects None, AdmissionReview v1)."""
    return {"name": name, "clientConfig": config,
            "rules": [{"operations": list(operations), "apiGroups": list(groups), "apiVersions": ["*"],
                       "resources": list(resources)}],
            "sideEffects": "None", "admissionReviewVersions": ["v1"], **extra}


def configuration(kind: str, name: str, *hooks: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": f"{ADM}/v1", "kind": kind, "metadata": {"name": name}, "webhooks": list(hooks)}


def allow(request: dict[str, Any]) -> dict[str, Any]:
    return {"allowed": True}
