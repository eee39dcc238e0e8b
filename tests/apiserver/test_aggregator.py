"""The aggregation layer: an APIService naming a Service is checked (Available, "all checks passed"), listed in
discovery, and its requests are forwarded to the extension server as the caller (X-Remote-User/Group, the
aggregator's front-proxy client certificate, which the server checks against the requestheader CA published in
kube-system/extension-apiserver-authentication); without endpoints it is unavailable and answers 503."""

from __future__ import annotations

import asyncio
import base64
import json
import ssl
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from cryptography.hazmat.primitives import serialization
from mini_kube.client import ResourceRef
from mini_kube.machinery.refs import NAMESPACES

from mini_kube.testing import MiniKube
from tests.admission.hooks import make_ca, make_serving_cert
from tests.helpers import eventually, kubectl

APISERVICES = ResourceRef("apiregistration.k8s.io", "v1", "apiservices", namespaced=False)
SERVICES = ResourceRef("", "v1", "services")
CONFIGMAPS = ResourceRef("", "v1", "configmaps")
RESOURCES = {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": "demo.example.com/v1", "resources": [
    {"name": "widgets", "singularName": "widget", "namespaced": True, "kind": "Widget",
     "verbs": ["get", "list"]}]}


class Extension:
    """An extension API server on 127.0.0.1: TLS for ext.aggtest.svc, client certificates of `client_ca` only."""

    def __init__(self, client_ca: str) -> None:
        ca, ca_key = make_ca("extension-ca")
        self.ca_bundle = base64.b64encode(ca.public_bytes(serialization.Encoding.PEM)).decode()
        cert, key = make_serving_cert(ca, ca_key, ("ext.aggtest.svc",))
        self._dir = tempfile.TemporaryDirectory(prefix="extension-")
        (Path(self._dir.name) / "tls.crt").write_bytes(cert)
        (Path(self._dir.name) / "tls.key").write_bytes(key)
        self.ssl = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.ssl.load_cert_chain(Path(self._dir.name) / "tls.crt", Path(self._dir.name) / "tls.key")
        self.ssl.load_verify_locations(cadata=client_ca)
        self.ssl.verify_mode = ssl.CERT_REQUIRED
        self.requests: list[dict[str, Any]] = []
        self.loop = asyncio.new_event_loop()
        self.port = 0
        threading.Thread(target=self.loop.run_forever, daemon=True).start()
        asyncio.run_coroutine_threadsafe(self._start(), self.loop).result(10)

    async def _serve(self, request: web.Request) -> web.Response:
        peer = request.transport.get_extra_info("peercert") if request.transport else None
        subject = dict(item for rdn in (peer or {}).get("subject", ()) for item in rdn)
        self.requests.append({"path": request.path, "cn": subject.get("commonName"),
                              "user": request.headers.get("X-Remote-User"),
                              "groups": request.headers.getall("X-Remote-Group", []),
                              "authorization": request.headers.get("Authorization")})
        if request.path == "/apis/demo.example.com/v1":
            return web.json_response(RESOURCES)
        if request.path == "/apis/demo.example.com/v1/namespaces/default/widgets":
            return web.json_response({"kind": "WidgetList", "apiVersion": "demo.example.com/v1", "metadata": {},
                                      "items": [{"metadata": {"name": request.headers.get("X-Remote-User")}}]})
        return web.json_response({"kind": "Status", "status": "Failure", "code": 404}, status=404)

    async def _start(self) -> None:
        app = web.Application()
        app.router.add_route("*", "/{path:.*}", self._serve)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0, ssl_context=self.ssl)
        await site.start()
        self.port = self._runner.addresses[0][1]

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._dir.cleanup()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory) -> Iterator[tuple[MiniKube, Extension]]:
    with MiniKube(insecure_http=False, data_dir=str(tmp_path_factory.mktemp("data"))) as kube:
        auth = kube.client.get(CONFIGMAPS, "extension-apiserver-authentication", "kube-system")["data"]
        assert json.loads(auth["requestheader-allowed-names"]) == ["front-proxy-client"]
        assert json.loads(auth["requestheader-username-headers"]) == ["X-Remote-User"]
        extension = Extension(auth["requestheader-client-ca-file"])
        kube.client.create(NAMESPACES, {"metadata": {"name": "aggtest"}})
        # the extension on this host's loopback: a name for it (Endpoints may not hold a loopback address)
        kube.client.create(SERVICES, {"metadata": {"name": "ext"}, "spec": {
            "type": "ExternalName", "externalName": "localhost"}}, "aggtest")
        kube.client.create(APISERVICES, {"metadata": {"name": "v1.demo.example.com"}, "spec": {
            "group": "demo.example.com", "version": "v1", "groupPriorityMinimum": 2000, "versionPriority": 200,
            "caBundle": extension.ca_bundle, "service": {"namespace": "aggtest", "name": "ext", "port": extension.port}}})
        try:
            yield kube, extension
        finally:
            extension.stop()


def _available(kube: MiniKube) -> dict[str, Any] | None:
    conditions = (kube.client.get(APISERVICES, "v1.demo.example.com").get("status") or {}).get("conditions") or []
    return next((c for c in conditions if c["type"] == "Available"), None)


def test_an_available_apiservice_is_discovered_and_served_as_the_caller(cluster) -> None:
    kube, extension = cluster
    condition = eventually(lambda: (_available(kube) or {}).get("status") == "True" and _available(kube),
                           timeout=20, explain=lambda: json.dumps(_available(kube)))
    assert (condition["reason"], condition["message"]) == ("Passed", "all checks passed")
    listed = json.loads(kubectl(kube, "get", "--raw", "/apis/demo.example.com/v1/namespaces/default/widgets").stdout)
    assert listed["items"] == [{"metadata": {"name": "kubernetes-admin"}}]
    forwarded = extension.requests[-1]
    assert forwarded["cn"] == "front-proxy-client" and forwarded["authorization"] is None
    assert forwarded["user"] == "kubernetes-admin" and "system:masters" in forwarded["groups"]
    names = kubectl(kube, "api-resources", "--api-group=demo.example.com", "-o", "name").stdout.split()
    assert names == ["widgets.demo.example.com"]
    groups = json.loads(kubectl(kube, "get", "--raw", "/apis").stdout)["groups"]
    assert {"name": "demo.example.com", "versions": [{"groupVersion": "demo.example.com/v1", "version": "v1"}],
            "preferredVersion": {"groupVersion": "demo.example.com/v1", "version": "v1"}} in groups


def test_without_its_service_it_is_unavailable_and_answers_503(cluster) -> None:
    kube, _ = cluster
    eventually(lambda: (_available(kube) or {}).get("status") == "True", timeout=20)
    kube.client.delete(SERVICES, "ext", "aggtest")
    condition = eventually(lambda: (_available(kube) or {}).get("status") == "False" and _available(kube),
                           timeout=20, explain=lambda: json.dumps(_available(kube)))
    assert (condition["reason"], condition["message"]) == ("ServiceNotFound",
                                                           'service/ext in "aggtest" is not present')
    done = kubectl(kube, "get", "--raw", "/apis/demo.example.com/v1/namespaces/default/widgets", check=False)
    assert done.returncode != 0 and "(ServiceUnavailable): service unavailable" in done.stderr, done.stderr


def test_a_deleted_apiservice_is_no_longer_served(cluster) -> None:
    kube, _ = cluster
    kube.client.delete(APISERVICES, "v1.demo.example.com")

    def gone() -> bool:
        done = kubectl(kube, "get", "--raw", "/apis/demo.example.com/v1/namespaces/default/widgets", check=False)
        groups = json.loads(kubectl(kube, "get", "--raw", "/apis").stdout)["groups"]
        return "NotFound" in done.stderr and all(g["name"] != "demo.example.com" for g in groups)

    eventually(gone, timeout=5)
