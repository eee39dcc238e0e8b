"""Cluster-scoped resources have no route under a namespace (issue #10 item 7): a namespace's admin cannot reach
nodes, RBAC objects, webhook configurations or other namespaces through /namespaces/{theirs}/..."""

from __future__ import annotations

import urllib.error
import urllib.request

import pytest
from mini_kube.machinery.refs import NAMESPACES, ROLEBINDINGS

from mini_kube.testing import MiniKube


@pytest.fixture(scope="module")
def secure(tmp_path_factory):
    tokens = tmp_path_factory.mktemp("tokens") / "tokens.csv"
    tokens.write_text('alice-token,alice,alice-uid\n')
    with MiniKube(insecure_http=False, data_dir=str(tmp_path_factory.mktemp("data")),
                  token_auth_file=str(tokens)) as kube:
        for name in ("mine", "other"):
            kube.client.create(NAMESPACES, {"metadata": {"name": name}})
        kube.client.create(ROLEBINDINGS, {"metadata": {"name": "alice-admin"}, "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
            "subjects": [{"kind": "User", "name": "alice", "apiGroup": "rbac.authorization.k8s.io"}]}, "mine")
        yield kube


def _as_alice(kube, method: str, path: str, body: bytes | None = None) -> tuple[int, bytes]:
    import ssl

    context = ssl.create_default_context(cafile=str(_ca(kube)))
    request = urllib.request.Request(kube.url + path, data=body, method=method, headers={
        "Authorization": "Bearer alice-token", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, context=context, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def _ca(kube) -> str:
    from pathlib import Path

    return str(Path(kube.config.data_dir) / "pki" / "ca.crt")


@pytest.mark.parametrize(("method", "path"), [
    ("GET", "/api/v1/namespaces/mine/nodes"),
    ("GET", "/apis/rbac.authorization.k8s.io/v1/namespaces/mine/clusterroles"),
    ("GET", "/apis/rbac.authorization.k8s.io/v1/namespaces/mine/clusterrolebindings/cluster-admin"),
    ("DELETE", "/api/v1/namespaces/mine/namespaces/other"),
    ("GET", "/api/v1/namespaces/mine/namespaces"),
    ("GET", "/api/v1/namespaces/mine/namespaces/mine"),
    ("POST", "/apis/admissionregistration.k8s.io/v1/namespaces/mine/validatingwebhookconfigurations"),
    ("GET", "/api/v1/namespaces/mine/persistentvolumes"),
    ("GET", "/api/v1/namespaces/mine/nodes/n1/status"),
])
def test_cluster_scoped_paths_under_a_namespace_are_not_found(secure, method, path):
    status, body = _as_alice(secure, method, path, b"{}" if method == "POST" else None)
    assert status == 404, body
    assert b'"reason":"NotFound"' in body
    assert secure.client.get(NAMESPACES, "other")["metadata"]["name"] == "other"


def test_the_namespace_admin_keeps_its_own_namespace(secure):
    assert _as_alice(secure, "GET", "/api/v1/namespaces/mine/configmaps")[0] == 200
    assert _as_alice(secure, "GET", "/api/v1/namespaces/mine")[0] == 200
    assert _as_alice(secure, "GET", "/api/v1/nodes")[0] == 403
