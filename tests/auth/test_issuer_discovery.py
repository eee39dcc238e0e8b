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
from mini_kube.machinery.refs import NAMESPACES, ResourceRef

from mini_kube.testing import MiniKube
from tests.helpers import kubectl

TOKEN_REVIEWS = ResourceRef("authentication.k8s.io", "v1", "tokenreviews", namespaced=False)


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
                      "id_token_signing_alg_values_supported": ["ES256"]}
    assert headers["Cache-Control"] == "public, max-age=3600"
    status, headers, body = _get(secure, "/openid/v1/jwks", caller)
    assert status == 200 and headers["Content-Type"] == "application/jwk-set+json", body
    keys = jwt.PyJWKSet.from_dict(json.loads(body))
    [key] = [k for k in keys.keys if k.key_id == jwt.get_unverified_header(token)["kid"]]
    assert json.loads(body)["keys"][0]["kty"] == "EC" and key.algorithm_name == "ES256"
    claims = jwt.decode(token, key.key, algorithms=["ES256"], audience="oidc-test", issuer=config["issuer"])
    assert claims["sub"] == "system:serviceaccount:oidc:default"
    assert claims["kubernetes.io"]["namespace"] == "oidc"
    paths = json.loads(kubectl(secure, "get", "--raw", "/").stdout)["paths"]
    assert "/.well-known/openid-configuration" in paths and "/openid/v1/jwks" in paths


def test_users_without_the_binding_may_not_read_them(secure) -> None:
    for path in ("/.well-known/openid-configuration", "/openid/v1/jwks"):
        status, _, body = _get(secure, path, "alice-token")
        assert status == 403, body
        assert json.loads(body)["message"] == f'forbidden: User "alice" cannot get path "{path}"'


def test_a_data_dir_with_an_rsa_key_keeps_signing_with_it(tmp_path) -> None:
    """A data dir made while service-account keys were RSA starts as it was: its key signs RS256 tokens, which the
    discovered keys and the token review verify."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    (tmp_path / "pki").mkdir()
    old = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    (tmp_path / "pki" / "sa.key").write_bytes(old.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    with MiniKube(insecure_http=False, data_dir=str(tmp_path)) as kube:
        token = kubectl(kube, "create", "token", "default").stdout.strip()
        assert jwt.get_unverified_header(token)["alg"] == "RS256"
        status, _, body = _get(kube, "/.well-known/openid-configuration", token)
        assert status == 200 and json.loads(body)["id_token_signing_alg_values_supported"] == ["RS256"]
        status, _, body = _get(kube, "/openid/v1/jwks", token)
        [key] = jwt.PyJWKSet.from_dict(json.loads(body)).keys
        assert key.key.public_numbers() == old.public_key().public_numbers()
        review = kube.client.create(TOKEN_REVIEWS, {"spec": {"token": token}})
        assert review["status"]["user"]["username"] == "system:serviceaccount:default:default"
