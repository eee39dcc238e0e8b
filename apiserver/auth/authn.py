"""Authentication, chained as kube-apiserver chains it.

Client certificate first, then the bearer token (static token file, then service-account JWTs); a request
with no credentials at all is `system:anonymous`. Credentials that are present but invalid give 401.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from mini_kube.apiserver.auth.sa_token import ObjectLookup, ServiceAccountTokens, TokenError
from mini_kube.apiserver.auth.user import ANONYMOUS_USER, UserInfo, with_authenticated_group
from mini_kube.apiserver.errors import StatusError, unauthorized

log = logging.getLogger(__name__)

__all__ = [
    "AuthenticationError", "Authenticator", "Credentials", "ServiceAccountTokenAuthenticator",
    "TokenAuthenticator", "TokenFileAuthenticator", "X509Authenticator", "bearer_token",
]


class AuthenticationError(Exception):
    """Credentials were presented and rejected; the response is 401 Unauthorized."""

    def status_error(self) -> StatusError:
        return unauthorized()


@dataclass(frozen=True, slots=True)
class Credentials:
    """What a request offers: the TLS peer certificate (DER) and the Authorization header."""

    peer_cert_der: bytes | None = None
    authorization: str | None = None


class TokenAuthenticator(Protocol):
    def authenticate_token(self, token: str) -> UserInfo | None:
        """The user for `token`; None if the token is not this authenticator's; raise if it is but is bad."""


def bearer_token(authorization: str | None) -> str | None:
    """The token of an `Authorization: Bearer <token>` header; None for no or another scheme."""
    if not authorization:
        return None
    parts = authorization.split(" ", 2)
    if len(parts) < 2 or parts[0].lower() != "bearer":
        return None
    token = parts[1].strip()
    return token or None


class X509Authenticator:
    """Client certificates signed by the cluster CA: CN is the user, each O a group. A certificate verified
    once is remembered (its user and validity window, up to CACHE_SIZE certificates), so the clients that
    send the same certificate on every request cost one signature check, not one per request."""

    CACHE_SIZE = 1024

    def __init__(self, ca_cert: x509.Certificate) -> None:
        self.ca_cert = ca_cert
        self._verified: dict[bytes, tuple[UserInfo, dt.datetime, dt.datetime]] = {}

    def authenticate(self, der: bytes, now: dt.datetime | None = None) -> UserInfo:
        now = now or dt.datetime.now(dt.UTC)
        known = self._verified.get(der)
        if known is None:
            known = self._verify(der)
            if len(self._verified) >= self.CACHE_SIZE:
                del self._verified[next(iter(self._verified))]
            self._verified[der] = known
        user, not_before, not_after = known
        if not not_before <= now <= not_after:
            raise AuthenticationError("x509: certificate has expired or is not yet valid")
        return user

    def _verify(self, der: bytes) -> tuple[UserInfo, dt.datetime, dt.datetime]:
        """The certificate's user and validity window, once its issuer, signature and usages are checked."""
        try:
            cert = x509.load_der_x509_certificate(der)
        except ValueError as e:
            raise AuthenticationError("x509: malformed certificate") from e
        if cert.issuer != self.ca_cert.subject:
            raise AuthenticationError("x509: certificate signed by unknown authority")
        try:
            cert.verify_directly_issued_by(self.ca_cert)
        except (InvalidSignature, ValueError, TypeError) as e:
            raise AuthenticationError("x509: certificate signed by unknown authority") from e
        try:
            usages = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
            if ExtendedKeyUsageOID.CLIENT_AUTH not in usages and ExtendedKeyUsageOID.ANY_EXTENDED_KEY_USAGE not in usages:
                raise AuthenticationError("x509: certificate specifies an incompatible key usage")
        except x509.ExtensionNotFound:
            pass
        names = cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
        name = str(names[0].value) if names else ""
        if not name:
            raise AuthenticationError("x509: certificate has no common name")
        groups = tuple(str(a.value) for a in cert.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME))
        return UserInfo(name, groups=groups), cert.not_valid_before_utc, cert.not_valid_after_utc


class TokenFileAuthenticator:
    """The static token file (`--token-auth-file`): CSV lines `token,user,uid[,"group1,group2"]`."""

    def __init__(self, tokens: dict[str, UserInfo]) -> None:
        self.tokens = tokens

    @classmethod
    def parse(cls, text: str, source: str = "<string>") -> TokenFileAuthenticator:
        tokens: dict[str, UserInfo] = {}
        record_num = 0
        for record in csv.reader(io.StringIO(text)):
            if not record:
                continue
            if len(record) < 3:
                raise ValueError(f"token file '{source}' must have at least 3 columns "
                                 f"(token, user name, user uid), found {len(record)}")
            record_num += 1
            if record[0] == "":
                log.warning("empty token has been found in token file '%s', record number '%d'", source, record_num)
                continue
            if record[0] in tokens:
                log.warning("duplicate token has been found in token file '%s', record number '%d'", source, record_num)
            groups = tuple(record[3].split(",")) if len(record) >= 4 else ()
            tokens[record[0]] = UserInfo(record[1], record[2], groups)
        return cls(tokens)

    @classmethod
    def from_file(cls, path: str | Path) -> TokenFileAuthenticator:
        return cls.parse(Path(path).read_text(), str(path))

    def authenticate_token(self, token: str) -> UserInfo | None:
        return self.tokens.get(token)


class ServiceAccountTokenAuthenticator:
    """Service-account JWTs of our issuer; `lookup` revokes tokens of deleted accounts and pods."""

    def __init__(self, tokens: ServiceAccountTokens, lookup: ObjectLookup | None = None) -> None:
        self.tokens = tokens
        self.lookup = lookup

    def authenticate_token(self, token: str) -> UserInfo | None:
        if not self.tokens.is_ours(token):
            return None
        try:
            return self.tokens.verify(token, self.lookup)
        except TokenError as e:
            raise AuthenticationError(str(e)) from e


class Authenticator:
    """The chain: x509, then bearer tokens in order, then anonymous (if enabled)."""

    def __init__(self, *, x509_auth: X509Authenticator | None = None,
                 token_auths: Sequence[TokenAuthenticator] = (), anonymous: bool = True) -> None:
        self.x509_auth = x509_auth
        self.token_auths = list(token_auths)
        self.anonymous = anonymous

    def authenticate(self, creds: Credentials) -> UserInfo:
        """The request's user; raises AuthenticationError (-> 401) for present but invalid credentials."""
        errors: list[str] = []
        offered = False
        if creds.peer_cert_der and self.x509_auth is not None:
            offered = True
            try:
                return with_authenticated_group(self.x509_auth.authenticate(creds.peer_cert_der))
            except AuthenticationError as e:
                errors.append(str(e))
        token = bearer_token(creds.authorization)
        if token is not None:
            offered = True
            user = self._token_user(token, errors)
            if user is not None:
                return with_authenticated_group(user)
            if not errors:
                errors.append("invalid bearer token")
        if errors or offered or not self.anonymous:
            raise AuthenticationError("; ".join(errors) or "no credentials")
        return ANONYMOUS_USER

    def _token_user(self, token: str, errors: list[str]) -> UserInfo | None:
        for auth in self.token_auths:
            try:
                user = auth.authenticate_token(token)
            except AuthenticationError as e:
                errors.append(str(e))
                continue
            if user is not None:
                return user
        return None
