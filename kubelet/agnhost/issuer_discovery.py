"""`agnhost test-service-account-issuer-discovery --token-path P --audience A`: check the Pod's projected
service-account token against the API server's OIDC discovery, as upstream's openidmetadata with go-oidc: the
issuer named by the (unverified) token serves `/.well-known/openid-configuration` naming itself, whose `jwks_uri`
serves the keys that verify the token's signature (RS256 or ES256), audience and expiry. First in-cluster (the
cluster's CA and the Pod's own token, so the ClusterRole system:service-account-issuer-discovery must allow it),
then as an external client (the system's roots, no token). Exits 0 once one way verifies, 1 (log.Fatal) if not."""

from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

import jwt

from .flags import Flag, parse_or_exit
from .incluster import ConfigError, InCluster, RequestError
from .serving import log

FLAGS = {"token-path": Flag(str, ""), "audience": Flag(str, "")}
ALGORITHMS = ["RS256", "ES256"]  # oidc.RS256, oidc.ES256
Fetch = Callable[[str], bytes]


class ValidationError(Exception):
    """The token could not be verified this way (go-oidc's error text)."""


def fatal(message: str) -> int:
    """log.Fatal: the message, exit status 1."""
    log(message)
    return 1


def in_cluster_fetch(client: InCluster) -> Fetch:
    """GETs with the in-cluster transport; a non-2xx answer reads as go-oidc words it (`<status>: <body>`)."""
    def fetch(url: str) -> bytes:
        try:
            return client.fetch(url)
        except RequestError as error:
            raise ValidationError(f"{error}: {error.body.decode(errors='replace')}".rstrip(": ")) from None
    return fetch


def external_fetch(url: str) -> bytes:
    """http.DefaultTransport: the system's roots, no credentials."""
    try:
        with urllib.request.urlopen(url, timeout=30, context=ssl.create_default_context()) as answer:
            return bytes(answer.read())
    except urllib.error.HTTPError as error:
        raise ValidationError(f"{error.code} {error.reason}: {error.read().decode(errors='replace')}") from None
    except (OSError, ValueError) as error:
        raise ValidationError(f'Get "{url}": {getattr(error, "reason", error)}') from None


def _json(data: bytes, what: str) -> Any:
    try:
        return json.loads(data)
    except ValueError as error:
        raise ValidationError(f"oidc: failed to decode {what}: {error}") from None


def validate(fetch: Fetch, raw: str, audience: str) -> None:
    """oidc.NewProvider on the token's issuer, then its Verifier's Verify; ValidationError when either fails."""
    try:
        claims = jwt.decode(raw, options={"verify_signature": False})
    except jwt.PyJWTError as error:
        raise SystemExit(fatal(f"square/go-jose: {error}")) from None
    issuer = str(claims.get("iss", ""))
    log(f"OK: got issuer {issuer}")
    log(f"Full, not-validated claims: \n{_claims_text(claims)}")
    config = _json(fetch(issuer.rstrip("/") + "/.well-known/openid-configuration"), "provider config")
    if config.get("issuer") != issuer:
        raise ValidationError("oidc: issuer did not match the issuer returned by provider, expected "
                              f"{json.dumps(issuer)} got {json.dumps(config.get('issuer'))}")
    log(f"OK: Constructed OIDC provider for issuer {issuer}")
    keys = _json(fetch(str(config.get("jwks_uri", ""))), "keys")
    try:
        header = jwt.get_unverified_header(raw)
        candidates = [k for k in jwt.PyJWKSet.from_dict(keys).keys
                      if not header.get("kid") or k.key_id == header.get("kid")]
    except jwt.PyJWTError as error:
        raise ValidationError(f"failed to verify signature: {error}") from None
    verified: dict[str, Any] | None = None
    problem = "failed to verify signature: no keys"
    for key in candidates:
        try:
            verified = jwt.decode(raw, key.key, algorithms=ALGORITHMS, audience=audience, issuer=issuer,
                                  options={"verify_nbf": False})
            break
        except jwt.ExpiredSignatureError:
            raise ValidationError(f"oidc: token is expired (Token Expiry: {claims.get('exp')})") from None
        except jwt.InvalidAudienceError:
            raise ValidationError(f"oidc: expected audience {json.dumps(audience)} got "
                                  f"{json.dumps(claims.get('aud'))}") from None
        except jwt.PyJWTError as error:
            problem = f"failed to verify signature: {error}"
    if verified is None:
        raise ValidationError(problem)
    log("OK: Validated signature on JWT")
    log("OK: Got valid claims from token!")
    log(f"Full, validated claims: \n{_claims_text(verified)}")


def _claims_text(claims: dict[str, Any]) -> str:
    """The claims as the Go struct prints them (issuer, subject, audience; the kubernetes.io namespace and
    service account)."""
    kube = claims.get("kubernetes.io") or {}
    account = kube.get("serviceaccount") or {}
    audience = claims.get("aud")
    audiences = audience if isinstance(audience, list) else [audience] if audience else []
    return (f'openidmetadata.claims{{Claims:jwt.Claims{{Issuer:"{claims.get("iss", "")}", '
            f'Subject:"{claims.get("sub", "")}", Audience:jwt.Audience{{{", ".join(json.dumps(a) for a in audiences)}}}}}, '
            f'Kubernetes:openidmetadata.kubeClaims{{Namespace:"{kube.get("namespace", "")}", '
            f'ServiceAccount:openidmetadata.kubeName{{Name:"{account.get("name", "")}", UID:"{account.get("uid", "")}"}}}}}}')


def main(argv: list[str]) -> int:
    """Validate in-cluster, then externally."""
    opts = parse_or_exit("test-service-account-issuer-discovery", FLAGS, argv)
    try:
        with open(opts["token_path"], encoding="utf-8") as handle:
            raw = handle.read()
    except OSError as error:
        return fatal(f"open {opts['token_path']}: {(error.strerror or '').lower()}")
    log("OK: Got token")
    log("validating with in-cluster discovery")
    try:
        client = InCluster.load()
    except ConfigError as error:
        return fatal(str(error))
    try:
        validate(in_cluster_fetch(client), raw, opts["audience"])
        return 0
    except ValidationError as error:
        log(f"failed to validate with in-cluster discovery: {error}")
    log("falling back to validating with external discovery")
    try:
        validate(external_fetch, raw, opts["audience"])
    except ValidationError as error:
        return fatal(str(error))
    return 0
