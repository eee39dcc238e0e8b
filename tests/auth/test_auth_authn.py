"""Authentication: x509, token file, service-account JWTs, the chain and anonymous."""

from __future__ import annotations

import base64
import datetime as dt
import json
from pathlib import Path

import jwt
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from mini_kube.apiserver.auth.authn import (
    AuthenticationError,
    Authenticator,
    Credentials,
    ServiceAccountTokenAuthenticator,
    TokenFileAuthenticator,
    X509Authenticator,
    bearer_token,
)
from mini_kube.apiserver.auth.pki import ensure_pki, issue_client_cert
from mini_kube.apiserver.auth.sa_token import BoundObject, ServiceAccountTokens, TokenError, key_id
from mini_kube.apiserver.auth.user import UserInfo


def _der(cert_pem: bytes) -> bytes:
    return x509.load_pem_x509_certificate(cert_pem).public_bytes(serialization.Encoding.DER)


# -- bearer header ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("header", "token"), [
    ("Bearer abc", "abc"),
    ("bearer abc", "abc"),
    ("BEARER abc ", "abc"),
    ("Bearer ", None),
    ("Bearer", None),
    ("Basic YWxpY2U6cHc=", None),
    ("", None),
    (None, None),
])
def test_bearer_token(header: str | None, token: str | None) -> None:
    assert bearer_token(header) == token


# -- token file ------------------------------------------------------------------------------------------------

TOKEN_FILE = '''admin-token,admin,admin,"system:masters"
alice-token,alice,uid-alice,"devs,ops"
bob-token,bob,uid-bob

,empty,uid-empty
'''


def test_token_file_parses_upstream_csv(tmp_path: Path) -> None:
    path = tmp_path / "tokens.csv"
    path.write_text(TOKEN_FILE)
    auth = TokenFileAuthenticator.from_file(path)
    assert auth.authenticate_token("admin-token") == UserInfo("admin", "admin", ("system:masters",))
    assert auth.authenticate_token("alice-token") == UserInfo("alice", "uid-alice", ("devs", "ops"))
    assert auth.authenticate_token("bob-token") == UserInfo("bob", "uid-bob", ())
    assert auth.authenticate_token("") is None
    assert auth.authenticate_token("nope") is None


def test_token_file_needs_three_columns() -> None:
    with pytest.raises(ValueError, match=r"token file 'x.csv' must have at least 3 columns \(token, user name, "
                                         r"user uid\), found 2"):
        TokenFileAuthenticator.parse("tok,user\n", "x.csv")


def test_token_file_duplicate_keeps_the_last() -> None:
    auth = TokenFileAuthenticator.parse("t,first,1\nt,second,2\n")
    assert auth.authenticate_token("t").name == "second"


# -- x509 ------------------------------------------------------------------------------------------------------

def test_x509_cn_is_user_and_o_are_groups(pki) -> None:
    cert_pem, _ = issue_client_cert(pki, "jane", ["devs", "system:masters"])
    user = X509Authenticator(pki.ca_cert).authenticate(_der(cert_pem))
    assert user == UserInfo("jane", "", ("devs", "system:masters"))


def test_x509_rejects_other_ca_and_expired(pki, tmp_path: Path) -> None:
    other = ensure_pki(tmp_path, ["127.0.0.1"])
    foreign, _ = issue_client_cert(other, "mallory", ["system:masters"])
    auth = X509Authenticator(pki.ca_cert)
    with pytest.raises(AuthenticationError, match="unknown authority"):
        auth.authenticate(_der(foreign))
    good, _ = issue_client_cert(pki, "jane")
    with pytest.raises(AuthenticationError, match="expired"):
        auth.authenticate(_der(good), now=dt.datetime.now(dt.UTC) + dt.timedelta(days=400))
    with pytest.raises(AuthenticationError):
        auth.authenticate(b"not a certificate")


def test_x509_a_certificate_verified_once_still_expires(pki) -> None:
    """The authenticator remembers verified certificates (one signature check per certificate, not per
    request), but not past their validity: the same certificate is refused once it has expired."""
    good, _ = issue_client_cert(pki, "jane")
    auth = X509Authenticator(pki.ca_cert)
    assert auth.authenticate(_der(good)).name == "jane"
    assert auth.authenticate(_der(good)).name == "jane"
    with pytest.raises(AuthenticationError, match="expired"):
        auth.authenticate(_der(good), now=dt.datetime.now(dt.UTC) + dt.timedelta(days=400))
    with pytest.raises(AuthenticationError, match="not yet valid"):
        auth.authenticate(_der(good), now=dt.datetime.now(dt.UTC) - dt.timedelta(days=400))


def test_x509_rejects_a_serving_only_certificate(pki) -> None:
    with pytest.raises(AuthenticationError, match="key usage"):
        X509Authenticator(pki.ca_cert).authenticate(pki.serving_cert().public_bytes(serialization.Encoding.DER))


# -- service-account JWTs --------------------------------------------------------------------------------------

@pytest.fixture
def sa_tokens(pki) -> ServiceAccountTokens:
    return ServiceAccountTokens(pki.sa_key)


def _claims(token: str) -> tuple[dict, dict]:
    head, body, _ = token.split(".")

    def dec(part: str) -> dict:
        return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))

    return dec(head), dec(body)


def test_issued_token_has_upstream_shape(sa_tokens: ServiceAccountTokens, pki) -> None:
    issued = sa_tokens.issue_token("pb", "sa1", "uid-1", expiration_seconds=3600)
    header, claims = _claims(issued.token)
    assert header == {"alg": "ES256", "kid": key_id(pki.sa_key.public_key())}
    assert list(claims) == ["aud", "exp", "iat", "iss", "jti", "kubernetes.io", "nbf", "sub"]
    assert claims["aud"] == ["https://kubernetes.default.svc.cluster.local"]
    assert claims["iss"] == "https://kubernetes.default.svc.cluster.local"
    assert claims["exp"] - claims["iat"] == 3600 and claims["nbf"] == claims["iat"]
    assert claims["sub"] == "system:serviceaccount:pb:sa1"
    assert claims["kubernetes.io"] == {"namespace": "pb", "serviceaccount": {"name": "sa1", "uid": "uid-1"}}
    assert int(issued.expires_at.timestamp()) == claims["exp"]


def test_verified_token_is_the_service_account(sa_tokens: ServiceAccountTokens) -> None:
    token = sa_tokens.issue_token("pb", "sa1", "uid-1").token
    user = sa_tokens.verify(token, lambda kind, ns, name: "uid-1")
    assert user.name == "system:serviceaccount:pb:sa1"
    assert user.uid == "uid-1"
    assert user.groups == ("system:serviceaccounts", "system:serviceaccounts:pb")
    assert list(user.extra) == ["authentication.kubernetes.io/credential-id"]
    assert user.extra["authentication.kubernetes.io/credential-id"][0].startswith("JTI=")


def test_pod_bound_token_carries_pod_and_node(sa_tokens: ServiceAccountTokens) -> None:
    issued = sa_tokens.issue_token("pb", "sa1", "uid-1", bound=BoundObject("Pod", "p1", "pod-uid"),
                                   node=BoundObject("Node", "n1", "node-uid"))
    _, claims = _claims(issued.token)
    assert claims["kubernetes.io"]["pod"] == {"name": "p1", "uid": "pod-uid"}
    assert claims["kubernetes.io"]["node"] == {"name": "n1", "uid": "node-uid"}
    live = {("ServiceAccount", "pb", "sa1"): "uid-1", ("Pod", "pb", "p1"): "pod-uid"}
    user = sa_tokens.verify(issued.token, lambda *key: live.get(key))
    assert user.extra["authentication.kubernetes.io/pod-name"] == ("p1",)
    assert user.extra["authentication.kubernetes.io/pod-uid"] == ("pod-uid",)
    assert user.extra["authentication.kubernetes.io/node-name"] == ("n1",)
    del live[("Pod", "pb", "p1")]
    with pytest.raises(TokenError, match="pod pb/p1 has been deleted"):
        sa_tokens.verify(issued.token, lambda *key: live.get(key))


def test_token_dies_with_its_service_account(sa_tokens: ServiceAccountTokens) -> None:
    token = sa_tokens.issue_token("pb", "sa1", "uid-1").token
    with pytest.raises(TokenError, match="has been deleted"):
        sa_tokens.verify(token, lambda kind, ns, name: None)
    with pytest.raises(TokenError, match="does not match"):
        sa_tokens.verify(token, lambda kind, ns, name: "uid-recreated")


def test_expired_token(sa_tokens: ServiceAccountTokens) -> None:
    past = dt.datetime.now(dt.UTC) - dt.timedelta(hours=2)
    token = sa_tokens.issue_token("pb", "sa1", "uid-1", expiration_seconds=3600, now=past).token
    with pytest.raises(TokenError, match="expired"):
        sa_tokens.verify(token)


def test_wrong_audience(sa_tokens: ServiceAccountTokens) -> None:
    token = sa_tokens.issue_token("pb", "sa1", "uid-1", audiences=["vault"]).token
    with pytest.raises(TokenError, match="audiences"):
        sa_tokens.verify(token)


def test_tampered_token(sa_tokens: ServiceAccountTokens) -> None:
    token = sa_tokens.issue_token("pb", "sa1", "uid-1").token
    head, body, sig = token.split(".")
    claims = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    claims["kubernetes.io"]["serviceaccount"]["name"] = "admin"
    claims["sub"] = "system:serviceaccount:pb:admin"
    forged = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
    with pytest.raises(TokenError):
        sa_tokens.verify(f"{head}.{forged}.{sig}")
    with pytest.raises(TokenError):
        sa_tokens.verify(f"{head}.{body}.{sig[:-4]}AAAA")


def test_token_signed_by_another_key(sa_tokens: ServiceAccountTokens) -> None:
    other = ServiceAccountTokens(ec.generate_private_key(ec.SECP256R1()))
    token = other.issue_token("pb", "sa1", "uid-1").token
    with pytest.raises(TokenError, match="signature"):
        sa_tokens.verify(token)
    rsa_token = ServiceAccountTokens(rsa.generate_private_key(public_exponent=65537, key_size=2048)).issue_token(
        "pb", "sa1", "uid-1").token  # another algorithm altogether
    with pytest.raises(TokenError):
        sa_tokens.verify(rsa_token)


def test_the_key_set_lists_an_ec_key_as_go_jose_writes_it(sa_tokens: ServiceAccountTokens, pki) -> None:
    [jwk] = sa_tokens.public_jwks()
    assert list(jwk) == ["use", "kty", "kid", "crv", "alg", "x", "y"]
    assert (jwk["use"], jwk["kty"], jwk["crv"], jwk["alg"]) == ("sig", "EC", "P-256", "ES256")
    assert len(jwk["x"]) == len(jwk["y"]) == 43  # 32 bytes each, unpadded base64url, leading zeros kept
    assert jwt.PyJWK(jwk).key.public_numbers() == pki.sa_key.public_key().public_numbers()
    assert sa_tokens.algorithms() == ["ES256"]


def test_an_rsa_signing_key_signs_rs256(pki) -> None:
    """A data dir from before ECDSA service-account keys keeps its RSA key: RS256 tokens, an RSA JWK."""
    tokens = ServiceAccountTokens(rsa.generate_private_key(public_exponent=65537, key_size=2048))
    token = tokens.issue_token("pb", "sa1", "uid-1").token
    assert _claims(token)[0]["alg"] == "RS256"
    assert tokens.verify(token).name == "system:serviceaccount:pb:sa1"
    [jwk] = tokens.public_jwks()
    assert list(jwk) == ["use", "kty", "kid", "alg", "n", "e"] and jwk["alg"] == "RS256"
    assert tokens.algorithms() == ["RS256"]


def test_alg_none_is_refused(sa_tokens: ServiceAccountTokens) -> None:
    token = sa_tokens.issue_token("pb", "sa1", "uid-1").token
    claims = jwt.decode(token, options={"verify_signature": False})
    unsigned = jwt.encode(claims, None, algorithm="none")
    with pytest.raises(TokenError):
        sa_tokens.verify(unsigned)


def test_subject_must_match_claims(sa_tokens: ServiceAccountTokens, pki) -> None:
    token = sa_tokens.issue_token("pb", "sa1", "uid-1").token
    claims = jwt.decode(token, options={"verify_signature": False})
    claims["sub"] = "system:serviceaccount:kube-system:admin"
    resigned = jwt.encode(claims, pki.sa_key, algorithm="ES256", headers={"kid": key_id(pki.sa_key.public_key())})
    with pytest.raises(TokenError, match="subject"):
        sa_tokens.verify(resigned)


# -- the chain -------------------------------------------------------------------------------------------------

@pytest.fixture
def chain(pki, sa_tokens: ServiceAccountTokens) -> Authenticator:
    live = {("ServiceAccount", "pb", "sa1"): "uid-1"}
    return Authenticator(
        x509_auth=X509Authenticator(pki.ca_cert),
        token_auths=[TokenFileAuthenticator.parse(TOKEN_FILE),
                     ServiceAccountTokenAuthenticator(sa_tokens, lambda *key: live.get(key))])


def test_chain_cert_user_gets_authenticated_group(chain: Authenticator, pki) -> None:
    user = chain.authenticate(Credentials(peer_cert_der=_der(pki.admin_cert_pem)))
    assert user == UserInfo("kubernetes-admin", "", ("system:masters", "system:authenticated"))


def test_chain_token_file_user(chain: Authenticator) -> None:
    user = chain.authenticate(Credentials(authorization="Bearer admin-token"))
    assert user == UserInfo("admin", "admin", ("system:masters", "system:authenticated"))


def test_chain_service_account(chain: Authenticator, sa_tokens: ServiceAccountTokens) -> None:
    token = sa_tokens.issue_token("pb", "sa1", "uid-1").token
    user = chain.authenticate(Credentials(authorization=f"Bearer {token}"))
    assert user.groups == ("system:serviceaccounts", "system:serviceaccounts:pb", "system:authenticated")


def test_chain_anonymous_without_credentials(chain: Authenticator) -> None:
    assert chain.authenticate(Credentials()) == UserInfo("system:anonymous", "", ("system:unauthenticated",))
    assert chain.authenticate(Credentials(authorization="Basic YTpi")).name == "system:anonymous"


def test_chain_bad_token_is_401_not_anonymous(chain: Authenticator, sa_tokens: ServiceAccountTokens) -> None:
    with pytest.raises(AuthenticationError) as err:
        chain.authenticate(Credentials(authorization="Bearer wrong"))
    assert err.value.status_error().status() == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": "Unauthorized",
        "reason": "Unauthorized", "code": 401}
    revoked = sa_tokens.issue_token("pb", "gone", "uid-x").token
    with pytest.raises(AuthenticationError, match="deleted"):
        chain.authenticate(Credentials(authorization=f"Bearer {revoked}"))


def test_chain_bad_cert_falls_back_to_a_good_token(chain: Authenticator, tmp_path: Path) -> None:
    foreign, _ = issue_client_cert(ensure_pki(tmp_path, ["127.0.0.1"]), "mallory")
    user = chain.authenticate(Credentials(peer_cert_der=_der(foreign), authorization="Bearer alice-token"))
    assert user.name == "alice"
    with pytest.raises(AuthenticationError):
        chain.authenticate(Credentials(peer_cert_der=_der(foreign)))


def test_chain_without_anonymous(pki) -> None:
    with pytest.raises(AuthenticationError):
        Authenticator(x509_auth=X509Authenticator(pki.ca_cert), anonymous=False).authenticate(Credentials())
