"""Connections and load (issue #10 item 13): clients that never send a request and idle connections are closed,
requests past the in-flight limit get 429 with Retry-After at once, and failures before the app are Statuses."""

from __future__ import annotations

import gzip
import json
import socket
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from mini_kube.machinery.refs import CONFIGMAPS, SERVICEACCOUNTS

from mini_kube.testing import MiniKube


@pytest.fixture(scope="module")
def tight(tmp_path_factory):
    tokens = tmp_path_factory.mktemp("tokens") / "tokens.csv"
    tokens.write_text('bob-token,bob,bob-uid,"system:authenticated"\n')
    with MiniKube(request_header_timeout=0.5, idle_timeout=0.5, max_requests_inflight=2, controllers=False,
                  insecure_http=False, data_dir=str(tmp_path_factory.mktemp("data")),
                  token_auth_file=str(tokens)) as kube:
        kube.client.request("POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", body={
            "metadata": {"name": "bob-view"}, "roleRef": {"apiGroup": "rbac.authorization.k8s.io",
                                                         "kind": "ClusterRole", "name": "view"},
            "subjects": [{"kind": "User", "name": "bob", "apiGroup": "rbac.authorization.k8s.io"}]})
        yield kube


def _context(kube):
    import ssl

    return ssl.create_default_context(cafile=str(Path(kube.config.data_dir) / "pki" / "ca.crt"))


def _tls_socket(kube) -> socket.socket:
    host, port = kube.url.split("//")[1].split(":")
    raw = socket.create_connection((host, int(port)), timeout=5)
    return _context(kube).wrap_socket(raw, server_hostname=host)


def _closed_by_server(sock: socket.socket, within: float) -> bool:
    sock.settimeout(within)
    try:
        while sock.recv(65536):
            pass
        return True
    except TimeoutError:
        return False
    except OSError:
        return True


def test_a_client_that_never_finishes_its_headers_is_cut_off(tight):
    sock = _tls_socket(tight)
    sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")
    assert _closed_by_server(sock, 5)


def test_idle_kept_alive_connections_are_closed(tight):
    sock = _tls_socket(tight)
    sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    assert b"200 OK" in sock.recv(65536)
    assert _closed_by_server(sock, 3)  # after 0.5 s idle


def _get(kube, path: str, token: str = "bob-token") -> tuple[int, dict, dict]:
    request = urllib.request.Request(kube.url + path, headers={"Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(request, context=_context(kube), timeout=30) as response:
            return response.status, json.loads(response.read()), dict(response.headers)
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read()), dict(exc.headers)


def test_past_the_inflight_limit_requests_get_429_at_once(tight):
    ahead = int(tight.client.list(SERVICEACCOUNTS, "default")["metadata"]["resourceVersion"]) + 20
    slow = f"/api/v1/namespaces/default/serviceaccounts?resourceVersion={ahead}"  # waits for it (3 s at most)
    holders = [threading.Thread(target=_get, args=(tight, slow)) for _ in range(2)]
    for thread in holders:
        thread.start()
    time.sleep(0.5)
    started = time.monotonic()
    status, body, headers = _get(tight, "/api/v1/namespaces/default/configmaps")
    assert (status, body["reason"], headers.get("Retry-After")) == (429, "TooManyRequests", "1")
    assert time.monotonic() - started < 1
    assert tight.client.list(SERVICEACCOUNTS, "default")  # system:masters is not counted, as upstream
    while int(tight.client.list(SERVICEACCOUNTS, "default")["metadata"]["resourceVersion"]) < ahead:
        tight.client.create(CONFIGMAPS, {"metadata": {"generateName": "bump-"}}, "default")  # the holders' answer
    for thread in holders:
        thread.join(10)
    assert _get(tight, "/api/v1/namespaces/default/configmaps")[0] == 200


def test_failures_before_the_app_are_status_objects(tight):
    status, body, _ = _get(tight, "/api/v1/namespaces/default/configmaps?x=" + "a" * 20000)
    assert status in (400, 414, 431) and body["kind"] == "Status" and body["code"] == status
    inflated = gzip.compress(b'{"metadata":{"name":"z"},"data":{"k":"' + b"a" * (4 << 20) + b'"}}')
    request = urllib.request.Request(tight.url + "/api/v1/namespaces/default/configmaps", data=inflated,
                                     method="POST", headers={"Content-Encoding": "gzip",
                                                             "Content-Type": "application/json"})
    admin = _context(tight)
    pki = Path(tight.config.data_dir) / "pki"
    admin.load_cert_chain(pki / "admin.crt", pki / "admin.key")
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, context=admin, timeout=30)
    answer = json.loads(refused.value.read())
    assert (refused.value.code, answer["reason"]) == (413, "RequestEntityTooLarge")
