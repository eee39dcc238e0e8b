"""TLS end to end: a tiny aiohttp server with our SSL context, verified by real curl (and kubectl) with --cacert,
with and without a client certificate."""

from __future__ import annotations

import asyncio
import json
import shutil
import socket
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web
from mini_kube.apiserver.auth.authn import AuthenticationError, Authenticator, Credentials, X509Authenticator
from mini_kube.apiserver.auth.pki import (
    Pki,
    ensure_pki,
    issue_client_cert,
    kubeconfig_yaml,
    server_ssl_context,
)
from mini_kube.apiserver.auth.reviews import self_subject_review

pytestmark = pytest.mark.skipif(shutil.which("curl") is None, reason="curl not installed")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _app(pki: Pki) -> web.Application:
    chain = Authenticator(x509_auth=X509Authenticator(pki.ca_cert))

    async def whoami(request: web.Request) -> web.Response:
        ssl_object = request.transport.get_extra_info("ssl_object") if request.transport else None
        der = ssl_object.getpeercert(binary_form=True) if ssl_object else None
        try:
            user = chain.authenticate(Credentials(der, request.headers.get("Authorization")))
        except AuthenticationError as e:
            return web.json_response(e.status_error().status(), status=401)
        return web.json_response(self_subject_review(user), status=201)

    app = web.Application()
    app.router.add_route("*", "/apis/authentication.k8s.io/v1/selfsubjectreviews", whoami)
    app.router.add_get("/whoami", whoami)
    return app


@pytest.fixture
async def server(pki: Pki) -> AsyncIterator[str]:
    runner = web.AppRunner(_app(pki))
    await runner.setup()
    port = _free_port()
    site = web.TCPSite(runner, "127.0.0.1", port, ssl_context=server_ssl_context(pki))
    await site.start()
    yield f"https://127.0.0.1:{port}"
    await runner.cleanup()


async def _run(*args: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(*args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 30)
    return proc.returncode or 0, out.decode(), err.decode()


async def test_curl_with_cacert_and_admin_cert(server: str, pki: Pki) -> None:
    rc, out, err = await _run("curl", "-sS", "--cacert", str(pki.ca_path), "--cert", str(pki.admin_cert_path),
                              "--key", str(pki.admin_key_path), f"{server}/whoami")
    assert rc == 0, err
    assert json.loads(out)["status"]["userInfo"] == {
        "username": "kubernetes-admin", "groups": ["system:masters", "system:authenticated"]}


async def test_curl_without_client_cert_is_anonymous(server: str, pki: Pki) -> None:
    rc, out, err = await _run("curl", "-sS", "--cacert", str(pki.ca_path), f"{server}/whoami")
    assert rc == 0, err
    assert json.loads(out)["status"]["userInfo"] == {"username": "system:anonymous",
                                                     "groups": ["system:unauthenticated"]}


async def test_curl_with_localhost_name_verifies(server: str, pki: Pki) -> None:
    url = server.replace("127.0.0.1", "localhost")
    rc, _, err = await _run("curl", "-sS", "--cacert", str(pki.ca_path), "--resolve",
                            f"localhost:{url.rsplit(':', 1)[1]}:127.0.0.1", f"{url}/whoami")
    assert rc == 0, err


async def test_curl_rejects_a_server_it_cannot_verify(server: str, tmp_path: Path) -> None:
    other = ensure_pki(tmp_path, ["127.0.0.1"])
    rc, _, _ = await _run("curl", "-sS", "--cacert", str(other.ca_path), f"{server}/whoami")
    assert rc == 60  # peer certificate cannot be authenticated with given CA certificates


async def test_client_cert_from_another_ca_fails_the_handshake(server: str, pki: Pki, tmp_path: Path) -> None:
    other = ensure_pki(tmp_path, ["127.0.0.1"])
    cert, key = issue_client_cert(other, "mallory", ["system:masters"])
    (tmp_path / "m.crt").write_bytes(cert)
    (tmp_path / "m.key").write_bytes(key)
    rc, out, _ = await _run("curl", "-sS", "--cacert", str(pki.ca_path), "--cert", str(tmp_path / "m.crt"),
                            "--key", str(tmp_path / "m.key"), f"{server}/whoami")
    assert rc != 0 and "system:masters" not in out


async def test_bad_bearer_token_is_401(server: str, pki: Pki) -> None:
    rc, out, err = await _run("curl", "-sS", "--cacert", str(pki.ca_path), "-H", "Authorization: Bearer nope",
                              f"{server}/whoami")
    assert rc == 0, err
    assert json.loads(out) == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                               "message": "Unauthorized", "reason": "Unauthorized", "code": 401}


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl not installed")
async def test_kubectl_auth_whoami_with_the_written_kubeconfig(server: str, pki: Pki, tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(kubeconfig_yaml(server, pki))
    rc, out, err = await _run("kubectl", "--kubeconfig", str(kubeconfig), "auth", "whoami", "-o", "json")
    assert rc == 0, err
    assert json.loads(out)["status"]["userInfo"]["username"] == "kubernetes-admin"
