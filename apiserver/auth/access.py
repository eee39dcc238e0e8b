"""RBAC over the server's cache (the access reviews it answers are `registry/rest/reviews.py`).

Kept apart from `secure.py` so that a server without authentication (insecure mode, the test fixture) can
serve `kubectl auth can-i` without importing the authenticators (JWT, x509): about 60 ms of start-up.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mini_kube.apiserver.auth.rbac import RBAC_GROUP
from mini_kube.apiserver.registry.reader import ObjectReader


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
