"""Service-account issuer discovery: `/.well-known/openid-configuration` names the issuer and its key set, and
`/openid/v1/jwks` holds the key that verifies a TokenRequest's token, as a stock OIDC client (PyJWT here) checks
it; service accounts may read both (the bootstrap binding of system:service-account-issuer-discovery), other
users may not."""

from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.request
from pathlib import Path

import jwt
import pytest
from mini_kube.machinery.refs import NAMESPACES

from mini_kube.testing import MiniKube
from tests.helpers import kubectl


@pytest.fixture(scope="module")
def secure(tmp_path_factory):
    tokens = tmp_path_factory.mktemp("tokens") / "tokens.csv"
    tokens.write_text("alice-token,alice,alice-uid\n")
    with MiniKube(insecure_http=False, data_dir=str(tmp_path_factory.mktemp("data")),
                  token_auth_file=str(tokens)) as kube:
        kube.client.create(NAMESPACES, {"metadata": {"name": "oidc"}})
        yield kube


def _get(kube: MiniKube, path: str, token: str) -> tuple[int, dict[str, str], bytes]:
    context = ssl.create_default_context(cafile=str(Path(kube.config.data_dir) / "pki" / "ca.crt"))
    request = urllib.request.Request(kube.url + path, headers={"Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(request, context=context, timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


def test_a_service_account_token_verifies_against_the_discovered_keys(secure) -> None:
    caller = kubectl(secure, "-n", "oidc", "create", "token", "default").stdout.strip()  # the API server's audience
    token = kubectl(secure, "-n", "oidc", "create", "token", "default", "--audience=oidc-test").stdout.strip()
    status, headers, body = _get(secure, "/.well-known/openid-configuration", caller)
    assert status == 200 and headers["Content-Type"] == "application/json", body
    config = json.loads(body)
    issuer = "https://kubernetes.default.svc.cluster.local"
    assert config == {"issuer": issuer, "jwks_uri": f"{issuer}/openid/v1/jwks",
                      "response_types_supported": ["id_token"], "subject_types_supported": ["public"],
                      "id_token_signing_alg_values_supported": ["RS256"]}
    assert headers["Cache-Control"] == "public, max-age=3600"
    status, headers, body = _get(secure, "/openid/v1/jwks", caller)
    assert status == 200 and headers["Content-Type"] == "application/jwk-set+json", body
    keys = jwt.PyJWKSet.from_dict(json.loads(body))
    [key] = [k for k in keys.keys if k.key_id == jwt.get_unverified_header(token)["kid"]]
    claims = jwt.decode(token, key.key, algorithms=["RS256"], audience="oidc-test", issuer=config["issuer"])
    assert claims["sub"] == "system:serviceaccount:oidc:default"
    assert claims["kubernetes.io"]["namespace"] == "oidc"
    paths = json.loads(kubectl(secure, "get", "--raw", "/").stdout)["paths"]
    assert "/.well-known/openid-configuration" in paths and "/openid/v1/jwks" in paths


def test_users_without_the_binding_may_not_read_them(secure) -> None:
    for path in ("/.well-known/openid-configuration", "/openid/v1/jwks"):
        status, _, body = _get(secure, path, "alice-token")
        assert status == 403, body
        assert json.loads(body)["message"] == f'forbidden: User "alice" cannot get path "{path}"'
