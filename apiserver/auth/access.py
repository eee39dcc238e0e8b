"""RBAC over the server's cache, and the access-review endpoints answered with it.

Kept apart from `install.py` so that a server without authentication (insecure mode, the test fixture) can
serve `kubectl auth can-i` without importing the authenticators (JWT, x509): about 60 ms of start-up.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from aiohttp import web
from mini_kube.apiserver.auth import reviews
from mini_kube.apiserver.auth.rbac import RBAC_GROUP, RbacAuthorizer

if TYPE_CHECKING:
    from mini_kube.apiserver.server import ApiServer


class CacheRbacSource:
    """`RbacSource` over the server's object cache."""

    def __init__(self, server: ApiServer) -> None:
        self.server = server

    def _res(self, plural: str) -> Any:
        res = self.server.resources.lookup(RBAC_GROUP, "v1", plural)
        assert res is not None, plural
        return res

    def _objs(self, plural: str, namespace: str | None = None) -> list[Mapping[str, Any]]:
        return [e.obj for e in self.server.cache.list(self._res(plural).key_prefix, namespace)]

    def cluster_roles(self) -> list[Mapping[str, Any]]:
        return self._objs("clusterroles")

    def roles(self, namespace: str) -> list[Mapping[str, Any]]:
        return self._objs("roles", namespace)

    def cluster_role_bindings(self) -> list[Mapping[str, Any]]:
        return self._objs("clusterrolebindings")

    def role_bindings(self, namespace: str) -> list[Mapping[str, Any]]:
        return self._objs("rolebindings", namespace)

    def get_cluster_role(self, name: str) -> Mapping[str, Any] | None:
        entry = self.server.cache.get(self._res("clusterroles").key(None, name))
        return entry.obj if entry else None

    def get_role(self, namespace: str, name: str) -> Mapping[str, Any] | None:
        entry = self.server.cache.get(self._res("roles").key(namespace, name))
        return entry.obj if entry else None


def install_reviews(server: ApiServer, rbac: RbacAuthorizer | None = None) -> None:
    """Serve the access reviews and SelfSubjectReview, answered by `rbac` (default: RBAC over the cache).

    Insecure mode installs only these (no TLS or authentication: every caller is the admin).
    """
    rbac = rbac or RbacAuthorizer(CacheRbacSource(server))
    authn, authz = "authentication.k8s.io", "authorization.k8s.io"

    async def ssr(srv: ApiServer, request: web.Request, info: Any, obj: dict, user: Any) -> dict:
        return reviews.self_subject_review(user)

    async def ssar(srv: ApiServer, request: web.Request, info: Any, obj: dict, user: Any) -> dict:
        return reviews.self_subject_access_review(obj, user, rbac)

    async def sar(srv: ApiServer, request: web.Request, info: Any, obj: dict, user: Any) -> dict:
        return reviews.subject_access_review(obj, rbac)

    async def lsar(srv: ApiServer, request: web.Request, info: Any, obj: dict, user: Any) -> dict:
        return reviews.local_subject_access_review(obj, info.namespace, rbac)

    async def ssrr(srv: ApiServer, request: web.Request, info: Any, obj: dict, user: Any) -> dict:
        return reviews.self_subject_rules_review(obj, user, rbac)

    server.virtual_kinds.update({
        (authn, "SelfSubjectReview"): ssr,
        (authz, "SelfSubjectAccessReview"): ssar,
        (authz, "SubjectAccessReview"): sar,
        (authz, "LocalSubjectAccessReview"): lsar,
        (authz, "SelfSubjectRulesReview"): ssrr,
    })
