"""Plug the security pieces into an `ApiServer` through its seams, before `start()`.

`install(server)` sets: the TLS context and admin kubeconfig writer, the authenticator (x509, token file,
service-account tokens, anonymous, then impersonation), the RBAC authorizer, the review kinds and the
`serviceaccounts/token` subresource, the RBAC escalation admission plugin, the default policy bootstrap
and the ClusterRole aggregation loop, and the audit log (`Auditor.record`, called once per response).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aiohttp import web
from mini_kube.apiserver.auth import bootstrap
from mini_kube.apiserver.auth.access import CacheRbacSource, install_reviews
from mini_kube.apiserver.auth.audit import AuditLog, make_event
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
from mini_kube.apiserver.auth.pki import ensure_pki, kubeconfig_yaml, server_ssl_context
from mini_kube.apiserver.auth.rbac import RBAC_GROUP, RbacAuthorizer, forbidden
from mini_kube.apiserver.auth.sa_token import ServiceAccountTokens
from mini_kube.apiserver.auth.token_review import token_review
from mini_kube.apiserver.auth.tokenrequest import token_request
from mini_kube.apiserver.auth.user import UserInfo
from mini_kube.apiserver.errors import StatusError, unauthorized
from mini_kube.apiserver.requestinfo import AUDIT_ANNOTATIONS_KEY, REQUEST_INFO_KEY

if TYPE_CHECKING:
    from mini_kube.apiserver.server import ApiServer

log = logging.getLogger("mini-kube.auth")

KIND_RESOURCES = {"ServiceAccount": "serviceaccounts", "Pod": "pods", "Secret": "secrets", "Node": "nodes"}
ORIGINAL_USER = web.RequestKey("mini-kube.auth.original-user", UserInfo)
RECEIVED = web.RequestKey("mini-kube.auth.received", dt.datetime)
ACTING = web.RequestKey("mini-kube.auth.acting", tuple)  # (user, request info) once authorized


def _object_getter(server: ApiServer):  # noqa: ANN202 - (kind, namespace, name) -> object | None
    def get(kind: str, namespace: str, name: str) -> Mapping[str, Any] | None:
        res = server.resources.lookup("", "v1", KIND_RESOURCES.get(kind, ""))
        if res is None:
            return None
        entry = server.cache.get(res.key(namespace if res.namespaced else None, name))
        return entry.obj if entry else None

    return get


def _uid_lookup(server: ApiServer):  # noqa: ANN202 - ObjectLookup
    get = _object_getter(server)

    def lookup(kind: str, namespace: str, name: str) -> str | None:
        obj = get(kind, namespace, name)
        return None if obj is None else (obj.get("metadata") or {}).get("uid", "")

    return lookup


class Auditor:
    """Builds and queues one audit event per request (a no-op unless `--audit-log` is set)."""

    def __init__(self, path: str | None) -> None:
        self.log = AuditLog(path)

    def record_response(self, request: web.Request, status: int) -> None:
        """The per-response hook (`config.extra["audit_hook"]`): who and what come from the request. Requests
        refused before authorization (failed authentication, refused impersonation) are recorded too, with the
        requester if known and an empty user otherwise, as upstream does."""
        acting = request.get(ACTING)
        if acting is not None:
            self.record(request, acting[0], acting[1], status)
            return
        info = request.get(REQUEST_INFO_KEY)
        if info is not None:
            original = request.get(ORIGINAL_USER)
            self.record(request, original or UserInfo(""), info, status)

    def record(self, request: web.Request, user: Any, info: Any, status: int, error: StatusError | None = None) -> None:
        if not self.log.enabled or not isinstance(user, UserInfo):
            return
        original = request.get(ORIGINAL_USER)
        peer = request.remote or ""
        self.log.log(make_event(
            user=original or user, impersonated=user if original and original is not user else None, attrs=info,
            request_uri=str(request.rel_url), code=status, received=request.get(RECEIVED) or dt.datetime.now(dt.UTC),
            audit_id=request.headers.get("Audit-ID"), source_ips=[peer] if peer else [],
            user_agent=request.headers.get("User-Agent", ""), status_reason=error.reason if error else "",
            status_message=error.message if error else "", annotations=request.get(AUDIT_ANNOTATIONS_KEY)))


def install(server: ApiServer, *, pki_hosts: list[str] | None = None) -> None:
    """Secure `server`: TLS, authentication, RBAC, reviews, tokens, escalation checks, defaults, audit."""
    config = server.config
    data_dir = Path(tempfile.mkdtemp(prefix="mini-kube-pki-")) if config.data_dir == ":memory:" \
        else Path(config.data_dir).expanduser()
    import ipaddress

    service_ip = str(next(ipaddress.ip_network(config.service_cidr).hosts()))  # the `kubernetes` Service's
    pki = ensure_pki(data_dir, [*(pki_hosts or [config.address]), service_ip])
    if config.data_dir == ":memory:":  # throw-away state: its CA key goes with the server
        async def forget_pki() -> None:
            shutil.rmtree(data_dir, ignore_errors=True)
        server.on_stop.append(forget_pki)
    server.ssl_context = server_ssl_context(pki)
    config.extra["kubeconfig_writer"] = lambda srv: kubeconfig_yaml(srv.url, pki, namespace="default")
    config.extra["pki"] = pki

    rbac = RbacAuthorizer(CacheRbacSource(server))
    tokens = ServiceAccountTokens(pki.sa_key)
    token_auths: list[TokenAuthenticator] = []
    if config.token_auth_file:
        token_auths.append(TokenFileAuthenticator.from_file(config.token_auth_file))
    token_auths.append(ServiceAccountTokenAuthenticator(tokens, _uid_lookup(server)))
    chain = Authenticator(x509_auth=X509Authenticator(pki.ca_cert), token_auths=token_auths)
    auditor = Auditor(config.audit_log)
    config.extra.update(rbac=rbac, sa_tokens=tokens, auditor=auditor)
    if auditor.log.enabled:
        config.extra["audit_hook"] = auditor.record_response

    async def authenticate(request: web.Request) -> UserInfo:
        request[RECEIVED] = dt.datetime.now(dt.UTC)
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

    async def authorize(request: web.Request, user: Any, info: Any) -> None:
        request[ACTING] = (user, info)
        decision = rbac.authorize(user, info)
        if not decision.allowed:
            raise forbidden(user, info, decision.reason)

    server.authenticator = authenticate
    server.authorizer = authorize
    install_reviews(server, rbac)

    async def review_token(srv: ApiServer, request: web.Request, info: Any, obj: dict, user: Any) -> dict:
        return token_review(obj, chain.authenticate, tokens.api_audiences)

    server.virtual_kinds[("authentication.k8s.io", "TokenReview")] = review_token
    server.subresource_handlers[("", "serviceaccounts", "token")] = _token_handler(tokens)
    from mini_kube.apiserver.auth.admission import RbacEscalation

    if server.registry is not None and server.registry.admission is not None:
        server.registry.admission.plugins.append(RbacEscalation(rbac))
    else:
        server.bootstrap_hooks.insert(0, _add_escalation_plugin(rbac))
    server.bootstrap_hooks.append(_bootstrap_policy)
    server.on_stop.append(_closer(auditor))


def _add_escalation_plugin(rbac: RbacAuthorizer):  # noqa: ANN202
    async def hook(server: ApiServer) -> None:
        from mini_kube.apiserver.auth.admission import RbacEscalation

        if server.registry.admission is not None:
            server.registry.admission.plugins.append(RbacEscalation(rbac))

    return hook


def _closer(auditor: Auditor):  # noqa: ANN202
    async def close() -> None:
        await asyncio.to_thread(auditor.log.close)

    return close


def _token_handler(tokens: ServiceAccountTokens):  # noqa: ANN202
    async def handle(handler: Any, request: web.Request, info: Any, res: Any, user: Any, target: Any) -> web.Response:
        from mini_kube.apiserver.handlers.resource import read_body
        from mini_kube.apiserver.http import responses
        from mini_kube.apiserver.http.negotiation import decode_body

        if info.verb != "create":
            from mini_kube.apiserver.errors import method_not_allowed

            raise method_not_allowed()
        service_account = handler.registry.get(res, info.namespace, info.name).obj
        body = decode_body(await read_body(request), request.headers.get("Content-Type"))
        if not isinstance(body, dict):
            from mini_kube.apiserver.errors import bad_request

            raise bad_request("TokenRequest must be an object")
        result = token_request(body, service_account, tokens, _object_getter(handler.server))
        return responses.encode_dict(result, target, 201)

    return handle


async def _bootstrap_policy(server: ApiServer) -> None:
    """Create missing default RBAC objects, then keep aggregated ClusterRoles up to date."""
    from mini_kube.apiserver.registry.generic import WriteOptions

    opts = WriteOptions(field_manager="kube-apiserver")
    for obj in bootstrap.default_objects():
        plural = obj["kind"].lower() + "s"
        res = server.resources.lookup(RBAC_GROUP, "v1", plural)
        assert res is not None
        namespace = obj["metadata"].get("namespace")
        if server.registry.find(res, namespace, obj["metadata"]["name"]) is None:
            with contextlib.suppress(StatusError):
                await server.registry.create(res, namespace, obj, opts)
    await aggregate_now(server)
    server.background.append(asyncio.create_task(_aggregation_loop(server), name="clusterrole-aggregation"))


async def aggregate_now(server: ApiServer) -> None:
    """Run the ClusterRole aggregation controller once."""
    from mini_kube.apiserver.registry.generic import WriteOptions

    res = server.resources.lookup(RBAC_GROUP, "v1", "clusterroles")
    assert res is not None
    roles = [e.obj for e in server.cache.list(res.key_prefix)]
    for name, rules in bootstrap.aggregate_cluster_roles(roles).items():
        def mutate(obj: dict[str, Any], rules: list[Any] = rules) -> dict[str, Any]:
            obj["rules"] = rules
            return obj

        with contextlib.suppress(StatusError):
            await server.registry.guaranteed_update(res, None, name, mutate,
                                                    WriteOptions(field_manager="clusterrole-aggregation-controller"))


async def _aggregation_loop(server: ApiServer) -> None:
    res = server.resources.lookup(RBAC_GROUP, "v1", "clusterroles")
    assert res is not None
    watcher = server.cache.watch(res.key_prefix, None)
    try:
        while True:
            if await watcher.queue.get() is None:
                watcher = server.cache.watch(res.key_prefix, None)
            while not watcher.queue.empty():
                watcher.queue.get_nowait()
            await aggregate_now(server)
    finally:
        watcher.close()
