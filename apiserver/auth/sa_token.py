"""Service-account tokens: signed JWTs with issuer, audiences, expiry and the `kubernetes.io` claims.

Issued by the `serviceaccounts/token` subresource (TokenRequest) and checked by the token authenticator.
A token only works while the service account (and the object it is bound to) still exists with the same uid.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from mini_kube.apiserver.auth.user import UserInfo, service_account_groups, service_account_username

DEFAULT_ISSUER = "https://kubernetes.default.svc.cluster.local"
LEEWAY_SECONDS = 60
EXTRA_CREDENTIAL_ID = "authentication.kubernetes.io/credential-id"
EXTRA_POD_NAME = "authentication.kubernetes.io/pod-name"
EXTRA_POD_UID = "authentication.kubernetes.io/pod-uid"
EXTRA_NODE_NAME = "authentication.kubernetes.io/node-name"
EXTRA_NODE_UID = "authentication.kubernetes.io/node-uid"

# (kind, namespace, name) -> uid of the live object, or None when it does not exist.
# Kinds asked for: "ServiceAccount", "Pod", "Secret", "Node" (namespace "" for nodes).
ObjectLookup = Callable[[str, str, str], str | None]
SigningKey = rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey
PublicKey = rsa.RSAPublicKey | ec.EllipticCurvePublicKey
CURVE_ALGORITHMS = {"secp256r1": ("ES256", "P-256"), "secp384r1": ("ES384", "P-384"), "secp521r1": ("ES512", "P-521")}


class TokenError(Exception):
    """A token that looked like ours but is invalid (bad signature, expired, wrong audience, revoked...)."""


@dataclass(frozen=True, slots=True)
class BoundObject:
    """What a token is bound to: a Pod, Secret or Node (by name and uid)."""

    kind: str
    name: str
    uid: str


@dataclass(frozen=True, slots=True)
class IssuedToken:
    token: str
    expires_at: dt.datetime


def algorithm(public_key: PublicKey) -> str:
    """The JWS algorithm a key signs with, as upstream picks it: RS256 for RSA, ES256/384/512 by curve."""
    if isinstance(public_key, rsa.RSAPublicKey):
        return "RS256"
    if public_key.curve.name not in CURVE_ALGORITHMS:
        raise ValueError(f"unsupported elliptic curve {public_key.curve.name} for service-account tokens")
    return CURVE_ALGORITHMS[public_key.curve.name][0]


def key_id(public_key: PublicKey) -> str:
    """The `kid` upstream uses: unpadded base64url of SHA-256 over the DER public key."""
    der = public_key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return base64.urlsafe_b64encode(hashlib.sha256(der).digest()).rstrip(b"=").decode()


class ServiceAccountTokens:
    """Issues and verifies service-account JWTs with one signing key (RS256 for an RSA key, ES256 for a P-256 one)."""

    def __init__(self, signing_key: SigningKey, issuer: str = DEFAULT_ISSUER,
                 api_audiences: Sequence[str] | None = None,
                 extra_public_keys: Sequence[PublicKey] = ()) -> None:
        self.signing_key = signing_key
        self.algorithm = algorithm(signing_key.public_key())
        self.issuer = issuer
        self.api_audiences = list(api_audiences or [issuer])
        self._keys = {key_id(k): k for k in (signing_key.public_key(), *extra_public_keys)}
        self._kid = key_id(signing_key.public_key())

    def issue_token(self, namespace: str, name: str, uid: str, *, audiences: Sequence[str] | None = None,
                    expiration_seconds: int = 3600, bound: BoundObject | None = None,
                    node: BoundObject | None = None, now: dt.datetime | None = None) -> IssuedToken:
        """Sign a token for the service account `namespace/name` (uid `uid`)."""
        import jwt  # PyJWT loads with the first token, not with the server

        now = now or dt.datetime.now(dt.UTC)
        iat = int(now.timestamp())
        exp = iat + int(expiration_seconds)
        private: dict[str, Any] = {"namespace": namespace}
        if node is not None:
            private["node"] = {"name": node.name, "uid": node.uid}
        if bound is not None:
            private[bound.kind.lower()] = {"name": bound.name, "uid": bound.uid}
        private["serviceaccount"] = {"name": name, "uid": uid}
        claims = {
            "aud": list(audiences or self.api_audiences),
            "exp": exp,
            "iat": iat,
            "iss": self.issuer,
            "jti": str(uuid.uuid4()),
            "kubernetes.io": dict(sorted(private.items())),
            "nbf": iat,
            "sub": service_account_username(namespace, name),
        }
        token = jwt.encode(claims, self.signing_key, algorithm=self.algorithm, headers={"kid": self._kid, "typ": None})
        return IssuedToken(token, dt.datetime.fromtimestamp(exp, dt.UTC))

    def public_jwks(self) -> list[dict[str, str]]:
        """The verifying keys as JSON Web Keys (RFC 7517), the signing key's first: what `/openid/v1/jwks` lists."""
        return [_jwk(kid, key) for kid, key in self._keys.items()]

    def algorithms(self) -> list[str]:
        """The algorithms of the verifying keys, sorted (the OIDC configuration's signing algorithms)."""
        return sorted({algorithm(key) for key in self._keys.values()})

    def is_ours(self, token: str) -> bool:
        """Whether `token` is a JWT naming our issuer (otherwise another authenticator may own it)."""
        import jwt

        try:
            claims = jwt.decode(token, options={"verify_signature": False})
        except jwt.PyJWTError:
            return False
        return isinstance(claims, dict) and claims.get("iss") == self.issuer

    def verify(self, token: str, lookup: ObjectLookup | None = None) -> UserInfo:
        """Check signature, iss, aud, exp/nbf, the claims and (with `lookup`) that the SA still exists."""
        import jwt

        try:
            header = jwt.get_unverified_header(token)
            key = self._keys.get(header.get("kid", "")) if header.get("kid") else None
            candidates = [key] if key is not None else list(self._keys.values())
            claims: dict[str, Any] | None = None
            for candidate in candidates:
                try:
                    claims = self._decode(token, candidate)
                    break
                except jwt.InvalidSignatureError:
                    continue
            if claims is None:
                raise TokenError("invalid signature")
        except jwt.ExpiredSignatureError as e:
            raise TokenError("service account token has expired") from e
        except jwt.InvalidAudienceError as e:
            raise TokenError("token audiences are not valid for this server") from e
        except jwt.PyJWTError as e:
            raise TokenError(f"invalid service account token: {e}") from e
        return self._user(claims, lookup)

    def _decode(self, token: str, key: PublicKey) -> dict[str, Any]:
        import jwt

        return jwt.decode(token, key, algorithms=[algorithm(key)], audience=self.api_audiences, issuer=self.issuer,
                          leeway=LEEWAY_SECONDS, options={"require": ["exp", "iat", "iss", "sub", "aud"]})

    def _user(self, claims: dict[str, Any], lookup: ObjectLookup | None) -> UserInfo:
        private = claims.get("kubernetes.io")
        if not isinstance(private, dict):
            raise TokenError("token does not carry kubernetes.io claims")
        namespace = private.get("namespace") or ""
        sa = private.get("serviceaccount") or {}
        name, uid = sa.get("name") or "", sa.get("uid") or ""
        if not namespace or not name or claims.get("sub") != service_account_username(namespace, name):
            raise TokenError("token subject does not match its service account claims")
        extra: dict[str, tuple[str, ...]] = {}
        if lookup is not None:
            _check_live(lookup, "ServiceAccount", namespace, name, uid)
        for kind in ("pod", "secret"):
            ref = private.get(kind)
            if isinstance(ref, dict):
                if lookup is not None:
                    _check_live(lookup, kind.capitalize(), namespace, ref.get("name", ""), ref.get("uid", ""))
                if kind == "pod":
                    extra[EXTRA_POD_NAME] = (ref.get("name", ""),)
                    extra[EXTRA_POD_UID] = (ref.get("uid", ""),)
        node = private.get("node")
        if isinstance(node, dict):
            extra[EXTRA_NODE_NAME] = (node.get("name", ""),)
            if node.get("uid"):
                extra[EXTRA_NODE_UID] = (node["uid"],)
        if claims.get("jti"):
            extra[EXTRA_CREDENTIAL_ID] = (f"JTI={claims['jti']}",)
        return UserInfo(service_account_username(namespace, name), uid, service_account_groups(namespace),
                        dict(sorted(extra.items())))


def _b64url_uint(value: int, size: int = 0) -> str:
    """An unsigned integer as JWK writes it: big-endian bytes (at least `size` of them), unpadded base64url."""
    raw = value.to_bytes(max(1, size, (value.bit_length() + 7) // 8), "big")
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _jwk(kid: str, key: PublicKey) -> dict[str, str]:
    """The key as go-jose writes it (upstream's /openid/v1/jwks), its fields in that order."""
    if isinstance(key, rsa.RSAPublicKey):
        numbers = key.public_numbers()
        return {"use": "sig", "kty": "RSA", "kid": kid, "alg": "RS256", "n": _b64url_uint(numbers.n),
                "e": _b64url_uint(numbers.e)}
    point = key.public_numbers()
    size = (key.curve.key_size + 7) // 8  # coordinates are fixed-length (RFC 7518 6.2.1.2)
    alg, crv = CURVE_ALGORITHMS[key.curve.name]
    return {"use": "sig", "kty": "EC", "kid": kid, "crv": crv, "alg": alg, "x": _b64url_uint(point.x, size),
            "y": _b64url_uint(point.y, size)}


def _check_live(lookup: ObjectLookup, kind: str, namespace: str, name: str, uid: str) -> None:
    live = lookup(kind, namespace, name)
    if live is None:
        raise TokenError(f"{kind.lower()} {namespace}/{name} has been deleted")
    if uid and live != uid:
        raise TokenError(f"{kind.lower()} {namespace}/{name} uid ({live}) does not match claim ({uid})")
