"""The secure `Security`: TLS from the data dir's PKI, authentication (x509, token file, service-account tokens,
anonymous, then impersonation), RBAC authorization, service-account tokens, and the audit log."""

from __future__ import annotations

import datetime as dt
import ipaddress
import logging
from pathlib import Path
from typing import Any

from aiohttp import web
from mini_kube.apiserver.auth.access import CacheRbacSource
from mini_kube.apiserver.auth.auditor import ACTING, ORIGINAL_USER, RECEIVED, Auditor
from mini_kube.apiserver.auth.authn import (
    AuthenticationError,
    Authenticator,
    Credentials,
    ServiceAccountTokenAuthenticator,
    TokenAuthenticator,
    TokenFileAuthenticator,
    X509Authenticator,
)
from mini_kube.apiserver.auth.impersonation import impersonate
from mini_kube.apiserver.auth.loopback import LoopbackCredentials
from mini_kube.apiserver.auth.pki import ensure_pki, kubeconfig_yaml, server_ssl_context
from mini_kube.apiserver.auth.rbac import RbacAuthorizer, forbidden
from mini_kube.apiserver.auth.sa_token import ServiceAccountTokens
from mini_kube.apiserver.auth.security import Security
from mini_kube.apiserver.auth.tokenrequest import object_getter
from mini_kube.apiserver.auth.user import UserInfo
from mini_kube.apiserver.config import ServerConfig
from mini_kube.apiserver.errors import unauthorized
from mini_kube.apiserver.registry.reader import ObjectReader
from mini_kube.apiserver.requestinfo import RequestInfo
from mini_kube.machinery.tempdirs import make_owned

log = logging.getLogger("mini-kube.auth")

def uid_lookup(objects: ObjectReader):  # noqa: ANN201 - ObjectLookup: (kind, namespace, name) -> uid | None
    """The uid of a live service account or bound object, which a service-account token must match."""
    get = object_getter(objects)

    def lookup(kind: str, namespace: str, name: str) -> str | None:
        obj = get(kind, namespace, name)
        return None if obj is None else (obj.get("metadata") or {}).get("uid", "")

    return lookup


def secure(config: ServerConfig, objects: ObjectReader, *, pki_hosts: list[str] | None = None) -> Security:
    """TLS, authentication, RBAC, reviews, tokens and audit for a server run as `config` says."""
    data_dir = make_owned("mini-kube-pki-") if config.data_dir == ":memory:" \
        else Path(config.data_dir).expanduser()
    service_ip = str(next(ipaddress.ip_network(config.service_cidr).hosts()))  # the `kubernetes` Service's
    pki = ensure_pki(data_dir, [*(pki_hosts or [config.address]), service_ip])
    rbac = RbacAuthorizer(CacheRbacSource(objects))
    tokens = ServiceAccountTokens(pki.sa_key)
    token_auths: list[TokenAuthenticator] = []
    if config.token_auth_file:
        token_auths.append(TokenFileAuthenticator.from_file(config.token_auth_file))
    token_auths.append(ServiceAccountTokenAuthenticator(tokens, uid_lookup(objects)))
    chain = Authenticator(x509_auth=X509Authenticator(pki.ca_cert), token_auths=token_auths)
    auditor = Auditor(config.audit_log)
    loopback = LoopbackCredentials()

    async def authenticate(request: web.Request) -> UserInfo:
        request[RECEIVED] = dt.datetime.now(dt.UTC)
        user = loopback.user(request)
        if user is None:
            ssl_object = request.transport.get_extra_info("ssl_object") if request.transport else None
            der = ssl_object.getpeercert(binary_form=True) if ssl_object is not None else None
            try:
                user = chain.authenticate(Credentials(der, request.headers.get("Authorization")))
            except AuthenticationError as e:
                log.debug("authentication failed: %s", e)
                raise unauthorized() from e
        request[ORIGINAL_USER] = user  # audited as the requester even if impersonation is refused
        acting = impersonate(request.headers.items(), user, rbac.authorize)
        if acting is None:
            del request[ORIGINAL_USER]
            return user
        return acting

    async def authorize(request: web.Request, user: Any, info: RequestInfo) -> None:
        request[ACTING] = (user, info)
        decision = rbac.authorize(user, info)
        if not decision.allowed:
            raise forbidden(user, info, decision.reason)

    return Security(authenticate, authorize, rbac, authenticate_credentials=chain.authenticate,
                    admin_kubeconfig=lambda url: kubeconfig_yaml(url, pki, namespace="default"),
                    ssl_context=server_ssl_context(pki), pki=pki, tokens=tokens, loopback_token=loopback.token,
                    auditor=auditor if auditor.log.enabled else None,
                    throwaway_dir=data_dir if config.data_dir == ":memory:" else None)
