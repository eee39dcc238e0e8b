"""`Expect: 100-continue` (curl sends it for bodies over 1 MiB): the server answers `100 Continue` before the
client sends the body, then the request's own answer; an expectation it cannot meet is 417."""

from __future__ import annotations

import json
import socket

import pytest

from mini_kube.testing import MiniKube


@pytest.fixture(scope="module")
def kube():
    with MiniKube(controllers=False, scheduler=False) as cluster:
        yield cluster


def _connect(kube: MiniKube) -> socket.socket:
    host, port = kube.url.split("//")[1].split(":")
    return socket.create_connection((host, int(port)), timeout=10)


def test_the_body_is_asked_for_with_100_continue(kube):
    body = json.dumps({"metadata": {"name": "expected"}, "data": {"k": "v"}}).encode()
    with _connect(kube) as sock:
        sock.sendall(b"POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\n"
                     b"Content-Type: application/json\r\nExpect: 100-continue\r\n"
                     b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n")
        assert sock.recv(4096).startswith(b"HTTP/1.1 100 Continue\r\n\r\n")
        sock.sendall(body)
        answer = b""
        while b"\r\n\r\n" not in answer:
            answer += sock.recv(65536)
    assert answer.startswith(b"HTTP/1.1 201")
    assert kube.client.request("GET", "/api/v1/namespaces/default/configmaps/expected")["data"] == {"k": "v"}


def test_an_unknown_expectation_is_417(kube):
    with _connect(kube) as sock:
        sock.sendall(b"GET /version HTTP/1.1\r\nHost: x\r\nExpect: something\r\nConnection: close\r\n\r\n")
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 417")
    assert json.loads(body)["code"] == 417
