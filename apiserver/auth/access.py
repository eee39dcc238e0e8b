"""RBAC over the server's cache, and the access reviews answered with it.

Kept apart from `secure.py` so that a server without authentication (insecure mode, the test fixture) can
serve `kubectl auth can-i` without importing the authenticators (JWT, x509): about 60 ms of start-up.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from aiohttp import web
from mini_kube.apiserver.auth import reviews
from mini_kube.apiserver.auth.rbac import RBAC_GROUP, RbacAuthorizer
from mini_kube.apiserver.registry.reader import ObjectReader

ReviewKind = Callable[[web.Request, Any, dict[str, Any], Any], Awaitable[dict[str, Any]]]
"""A request-only kind: (request, request info, body, user) -> the answer; computed, never stored."""


class CacheRbacSource:
    """`RbacSource` over the server's object cache."""

    def __init__(self, objects: ObjectReader) -> None:
        self.objects = objects

    def _objs(self, plural: str, namespace: str | None = None) -> list[Mapping[str, Any]]:
        return self.objects.objects(RBAC_GROUP, "v1", plural, namespace)

    def cluster_roles(self) -> list[Mapping[str, Any]]:
        return self._objs("clusterroles")

    def roles(self, namespace: str) -> list[Mapping[str, Any]]:
        return self._objs("roles", namespace)

    def cluster_role_bindings(self) -> list[Mapping[str, Any]]:
        return self._objs("clusterrolebindings")

    def role_bindings(self, namespace: str) -> list[Mapping[str, Any]]:
        return self._objs("rolebindings", namespace)

    def get_cluster_role(self, name: str) -> Mapping[str, Any] | None:
        return self.objects.object(RBAC_GROUP, "v1", "clusterroles", None, name)

    def get_role(self, namespace: str, name: str) -> Mapping[str, Any] | None:
        return self.objects.object(RBAC_GROUP, "v1", "roles", namespace, name)


def review_kinds(rbac: RbacAuthorizer) -> dict[tuple[str, str], ReviewKind]:
    """The access reviews and SelfSubjectReview, answered by `rbac` (insecure mode serves only these: no TLS or
    authentication, every caller is the admin)."""
    authn, authz = "authentication.k8s.io", "authorization.k8s.io"

    async def ssr(request: web.Request, info: Any, obj: dict, user: Any) -> dict:
        return reviews.self_subject_review(user)

    async def ssar(request: web.Request, info: Any, obj: dict, user: Any) -> dict:
        return reviews.self_subject_access_review(obj, user, rbac)

    async def sar(request: web.Request, info: Any, obj: dict, user: Any) -> dict:
        return reviews.subject_access_review(obj, rbac)

    async def lsar(request: web.Request, info: Any, obj: dict, user: Any) -> dict:
        return reviews.local_subject_access_review(obj, info.namespace, rbac)

    async def ssrr(request: web.Request, info: Any, obj: dict, user: Any) -> dict:
        return reviews.self_subject_rules_review(obj, user, rbac)

    return {
        (authn, "SelfSubjectReview"): ssr,
        (authz, "SelfSubjectAccessReview"): ssar,
        (authz, "SubjectAccessReview"): sar,
        (authz, "LocalSubjectAccessReview"): lsar,
        (authz, "SelfSubjectRulesReview"): ssrr,
    }
