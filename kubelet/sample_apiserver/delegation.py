"""Delegated authentication and authorization (k8s.io/apiserver's DelegatingAuthenticationOptions and
DelegatingAuthorizationOptions), with the Pod's in-cluster credentials:

- a client certificate of the requestheader CA whose CN is an allowed name carries the caller in
  X-Remote-User / X-Remote-Group / X-Remote-Extra-* (the aggregator's forwarded requests);
- another client certificate of the client CA is its CN, in the groups of its O;
- a bearer token is whoever TokenReview says;
- anyone else is system:anonymous.
Both CAs and the header names come from kube-system/extension-apiserver-authentication, read again every 10 s
(every second until the first read succeeds: the RoleBinding that allows it may come after the Pod).
/healthz, /readyz and /livez and the group system:masters are always allowed; the rest is asked of
SubjectAccessReview, answers remembered for 10 s."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import ssl
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

import aiohttp
import orjson
from cryptography import x509
from cryptography.x509.oid import NameOID

log = logging.getLogger("sample-apiserver")
ACCOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"
CONFIGMAP = "/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication"
ALWAYS_ALLOW_PATHS = ("/healthz", "/readyz", "/livez")
ALWAYS_ALLOW_GROUPS = ("system:masters",)
DECISION_TTL = 10.0


@dataclass(frozen=True, slots=True)
class User:
    name: str
    groups: tuple[str, ...] = ()
    extra: dict[str, list[str]] = field(default_factory=dict)


ANONYMOUS = User("system:anonymous", ("system:unauthenticated",))


def _certificates(pem: str) -> list[x509.Certificate]:
    try:
        return x509.load_pem_x509_certificates(pem.encode()) if pem.strip() else []
    except ValueError:
        return []


def _issued_by(cert: x509.Certificate, cas: list[x509.Certificate]) -> bool:
    for ca in cas:
        with contextlib.suppress(Exception):
            cert.verify_directly_issued_by(ca)
            return True
    return False


def _list(text: str | None) -> list[str]:
    try:
        value = orjson.loads(text or "[]")
    except orjson.JSONDecodeError:
        return []
    return [str(v) for v in value] if isinstance(value, list) else []


class Delegation:
    """The cluster's say on who a caller is and what it may do."""

    def __init__(self, tls: ssl.SSLContext) -> None:
        self.tls = tls  # the serving context: the CAs read are added to what it verifies
        host, port = os.environ.get("KUBERNETES_SERVICE_HOST", ""), os.environ.get("KUBERNETES_SERVICE_PORT", "")
        self.api = f"https://[{host}]:{port}" if ":" in host else f"https://{host}:{port}"
        self.api_tls = ssl.create_default_context(cafile=f"{ACCOUNT}/ca.crt")
        self.session: aiohttp.ClientSession | None = None
        self.requestheader_cas: list[x509.Certificate] = []
        self.client_cas: list[x509.Certificate] = []
        self.allowed_names: list[str] = []
        self.user_headers, self.group_headers = ["X-Remote-User"], ["X-Remote-Group"]
        self.extra_prefixes: list[str] = []
        self.loaded = False
        self._decisions: dict[bytes, tuple[float, bool, str]] = {}

    def _token(self) -> str:
        try:
            with open(f"{ACCOUNT}/token", encoding="utf-8") as handle:
                return handle.read().strip()
        except OSError:
            return ""

    async def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        if self.session is None:
            self.session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10))
        headers = {"Authorization": f"Bearer {self._token()}", "Accept": "application/json",
                   "Content-Type": "application/json"}
        async with self.session.request(method, self.api + path, data=orjson.dumps(body) if body else None,
                                        headers=headers, ssl=self.api_tls) as answer:
            data = orjson.loads(await answer.read())
            if answer.status >= 300:
                raise PermissionError(str(data.get("message") if isinstance(data, dict) else data))
            return data

    async def follow(self) -> None:
        """Read the authentication ConfigMap, then again every 10 s (every second until it could be read)."""
        while True:
            try:
                data = (await self._call("GET", CONFIGMAP)).get("data") or {}
                self._load(data)
            except (aiohttp.ClientError, TimeoutError, OSError, PermissionError, orjson.JSONDecodeError) as exc:
                log.warning("Unable to get configmap/extension-apiserver-authentication in kube-system: %s", exc)
            await asyncio.sleep(10 if self.loaded else 1)

    def _load(self, data: dict[str, str]) -> None:
        self.requestheader_cas = _certificates(data.get("requestheader-client-ca-file", ""))
        self.client_cas = _certificates(data.get("client-ca-file", ""))
        self.allowed_names = _list(data.get("requestheader-allowed-names"))
        self.user_headers = _list(data.get("requestheader-username-headers")) or ["X-Remote-User"]
        self.group_headers = _list(data.get("requestheader-group-headers")) or ["X-Remote-Group"]
        self.extra_prefixes = _list(data.get("requestheader-extra-headers-prefix"))
        cadata = "".join(data.get(k, "") for k in ("requestheader-client-ca-file", "client-ca-file"))
        if cadata.strip():
            self.tls.load_verify_locations(cadata=cadata)
        self.loaded = True

    async def authenticate(self, peer_der: bytes | None, headers: Any) -> User | None:
        """Who is asking (None: credentials given but not valid, a 401)."""
        if peer_der:
            cert = x509.load_der_x509_certificate(peer_der)
            common = cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
            cn = str(common[0].value) if common else ""
            if _issued_by(cert, self.requestheader_cas) and (not self.allowed_names or cn in self.allowed_names):
                name = next((headers[h] for h in self.user_headers if headers.get(h)), "")
                if name:
                    groups = tuple(g for h in self.group_headers for g in headers.getall(h, []))
                    extra: dict[str, list[str]] = {}
                    for key, value in headers.items():
                        prefix = next((p for p in self.extra_prefixes if key.lower().startswith(p.lower())), None)
                        if prefix is not None:
                            extra.setdefault(unquote(key[len(prefix):]).lower(), []).append(value)
                    return User(name, groups, extra)
            if _issued_by(cert, self.client_cas):
                groups = tuple(str(a.value) for a in cert.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME))
                return User(cn, (*groups, "system:authenticated"))
        auth = headers.get("Authorization", "")
        if auth.lower().startswith("bearer "):
            review = await self._call("POST", "/apis/authentication.k8s.io/v1/tokenreviews", {
                "apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": auth[7:].strip()}})
            status = review.get("status") or {}
            if not status.get("authenticated"):
                return None
            info = status.get("user") or {}
            return User(info.get("username", ""), tuple(info.get("groups") or ()), dict(info.get("extra") or {}))
        return ANONYMOUS

    async def authorize(self, user: User, path: str, attributes: dict[str, Any] | None, verb: str) -> tuple[bool, str]:
        """Whether `user` may: (allowed, reason)."""
        if path.rstrip("/") in ALWAYS_ALLOW_PATHS or any(g in ALWAYS_ALLOW_GROUPS for g in user.groups):
            return True, ""
        spec: dict[str, Any] = {"user": user.name, "groups": list(user.groups), "extra": user.extra}
        if attributes is not None:
            spec["resourceAttributes"] = attributes
        else:
            spec["nonResourceAttributes"] = {"path": path, "verb": verb}
        key = orjson.dumps(spec, option=orjson.OPT_SORT_KEYS)
        cached = self._decisions.get(key)
        if cached is not None and cached[0] > time.monotonic():
            return cached[1], cached[2]
        review = await self._call("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", {
            "apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": spec})
        status = review.get("status") or {}
        decision = (time.monotonic() + DECISION_TTL, bool(status.get("allowed")), str(status.get("reason") or ""))
        if len(self._decisions) > 1024:
            self._decisions.clear()
        self._decisions[key] = decision
        return decision[1], decision[2]
