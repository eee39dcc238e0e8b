"""In-process components reach their server on its loopback socket (apiserver/auth/loopback.py): no TCP
connection, so no TLS on either end, and they are the admin there. Its token is worth nothing anywhere else, and
the socket itself admits no one without it."""

from __future__ import annotations

import ssl

import aiohttp
import pytest
from mini_kube.client import ApiClient, Connection

from mini_kube.cli import client_for
from mini_kube.testing import MiniKube

REVIEW = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
REVIEWS = "/apis/authentication.k8s.io/v1/selfsubjectreviews"


@pytest.fixture(scope="module")
def kube():
    with MiniKube(controllers=False, scheduler=False, insecure_http=False) as kube:
        yield kube


def established_to(port: int) -> int:
    """TCP connections of this machine (this network namespace) established to 127.0.0.1:port, client ends."""
    count = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as f:
            for line in f.readlines()[1:]:
                fields = line.split()
                remote, state = fields[2], fields[3]
                if state == "01" and int(remote.rsplit(":", 1)[1], 16) == port:
                    count += 1
    return count


def test_in_process_clients_open_no_tcp_connection_and_are_the_admin(kube):
    port = kube.server.config.port
    before = established_to(port)

    async def go() -> dict:
        async with client_for(kube.server) as client:
            await client.request("GET", "/api/v1/namespaces/default")
            review = await client.request("POST", REVIEWS, body=REVIEW)
            assert established_to(port) == before  # the pooled connection is still open: not a TCP one
            return review

    user = kube.run(go())["status"]["userInfo"]
    assert user["username"] == "kubernetes-admin"
    assert "system:masters" in user["groups"]


def test_the_loopback_token_is_refused_over_tcp(kube):
    token = kube.server.security.loopback_token
    assert token
    no_client_cert = ssl.create_default_context(cadata=kube.server.security.pki.ca_pem.decode())
    over_tcp = Connection(kube.server.url, ssl_context=no_client_cert, token=token)

    async def go() -> None:
        async with ApiClient(over_tcp) as client:
            await client.request("GET", "/api/v1/namespaces/default")

    with pytest.raises(Exception) as caught:
        kube.run(go())
    assert getattr(caught.value, "status", None) == 401


def test_the_loopback_socket_without_the_token_is_anonymous(kube):
    async def go() -> tuple[int, int]:
        connector = aiohttp.UnixConnector(kube.server.loopback_socket)
        async with aiohttp.ClientSession("http://localhost", connector=connector) as session:
            async with session.get("/api/v1/namespaces/kube-system/secrets") as anonymous:
                pass
            async with session.get("/api/v1/namespaces/kube-system/secrets",
                                   headers={"Authorization": "Bearer not-the-token"}) as wrong:
                return anonymous.status, wrong.status

    assert kube.run(go()) == (403, 401)
