"""The security of one API server, built once by the assembly: the TLS it serves, who is asking
(authentication), whether they may (authorization), the tokens it issues and the audit trail (the review kinds
are answered from these by `registry/rest/reviews.py` and `tokens.py`).

`insecure(...)` (plain HTTP, everyone the admin) needs none of the authenticators; `secure.secure(...)` builds
the real thing (a separate module, so insecure mode never imports JWT and x509 code).
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aiohttp import web
from mini_kube.apiserver.auth.access import CacheRbacSource
from mini_kube.apiserver.auth.rbac import RbacAuthorizer
from mini_kube.apiserver.kubeconfig import kubeconfig_text
from mini_kube.apiserver.registry.reader import ObjectReader
from mini_kube.apiserver.requestinfo import RequestInfo
from mini_kube.machinery.tempdirs import remove_owned

if TYPE_CHECKING:
    from mini_kube.apiserver.auth.auditor import Auditor
    from mini_kube.apiserver.auth.authn import Credentials
    from mini_kube.apiserver.auth.pki import Pki
    from mini_kube.apiserver.auth.sa_token import ServiceAccountTokens

Authenticate = Callable[[web.Request], Awaitable[Any]]
Authorize = Callable[[web.Request, Any, RequestInfo], Awaitable[None]]


@dataclass(slots=True)
class AdminUser:
    """The identity used when authentication is not configured (in-process, insecure mode)."""

    name: str = "system:admin"
    uid: str = ""
    groups: tuple[str, ...] = ("system:masters", "system:authenticated")
    extra: dict[str, list[str]] = field(default_factory=dict)

    def to_api(self) -> dict[str, Any]:
        """The `UserInfo` shape of authentication.k8s.io (SelfSubjectReview, audit, admission reviews)."""
        out: dict[str, Any] = {"username": self.name, "groups": list(self.groups)}
        if self.extra:
            out["extra"] = {k: list(v) for k, v in self.extra.items()}
        return out


def plain_kubeconfig(url: str) -> str:
    """An admin kubeconfig with no credentials (insecure mode)."""
    return kubeconfig_text(url, namespace="default")


@dataclass
class Security:
    """What every request passes through before its handler, and what the server needs to serve TLS."""

    authenticate: Authenticate
    authorize: Authorize
    rbac: RbacAuthorizer
    admin_kubeconfig: Callable[[str], str] = plain_kubeconfig  # server URL -> the admin's kubeconfig (YAML)
    ssl_context: ssl.SSLContext | None = None
    pki: Pki | None = None  # the cluster CA, serving and admin certificates, service-account signing key
    tokens: ServiceAccountTokens | None = None  # issues and checks service-account tokens
    authenticate_credentials: Callable[[Credentials], Any] | None = None  # the authenticators (TokenReview asks)
    auditor: Auditor | None = None  # set when an audit log is written
    throwaway_dir: Path | None = None  # a :memory: server's PKI: its CA key goes with the server
    loopback_token: str | None = None  # the in-process clients' credential on the loopback socket (loopback.py)

    async def close(self) -> None:
        """Flush the audit log; remove a throw-away PKI."""
        if self.auditor is not None:
            await self.auditor.close()
        if self.throwaway_dir is not None:
            await asyncio.to_thread(remove_owned, self.throwaway_dir)


def insecure(objects: ObjectReader) -> Security:
    """Plain HTTP, no authentication: every caller is the admin; RBAC still answers the access reviews."""
    rbac = RbacAuthorizer(CacheRbacSource(objects))

    async def authenticate(request: web.Request) -> AdminUser:
        return AdminUser()

    async def authorize(request: web.Request, user: Any, info: RequestInfo) -> None:
        return None

    return Security(authenticate, authorize, rbac)
