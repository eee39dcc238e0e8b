"""Per-namespace housekeeping: the `default` ServiceAccount (serviceaccount controller) and the
`kube-root-ca.crt` ConfigMap with the cluster's CA (root-ca-cert-publisher), in every active namespace."""

from __future__ import annotations

import contextlib
from typing import Any

from mini_kube.client import AlreadyExists, ApiClient, NotFound
from mini_kube.client.informer import SharedInformerFactory
from mini_kube.machinery.refs import CONFIGMAPS, NAMESPACES, SERVICEACCOUNTS

from ..reconciler import Controller

ROOT_CA = "kube-root-ca.crt"
DESCRIPTION = ("Contains a CA bundle that can be used to verify the kube-apiserver when using internal "
               "endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed "
               "across distributions of Kubernetes clusters.")


def _namespace_of(obj: dict[str, Any]) -> str | None:
    return (obj.get("metadata") or {}).get("namespace")


def _active(ns: dict[str, Any] | None) -> bool:
    return ns is not None and not (ns.get("metadata") or {}).get("deletionTimestamp")


class ServiceAccountController(Controller):
    """Every active namespace has a `default` ServiceAccount (re-created if deleted)."""

    name = "serviceaccount"

    def setup(self) -> None:
        self.namespaces = self.watch(NAMESPACES)
        self.accounts = self.watch(SERVICEACCOUNTS, enqueue=_namespace_of)

    async def reconcile(self, key: Any) -> None:
        if not _active(self.namespaces.get(key)) or self.accounts.get(f"{key}/default") is not None:
            return
        with contextlib.suppress(AlreadyExists, NotFound):
            await self.client.create(SERVICEACCOUNTS, {"metadata": {"name": "default"}}, key)


class RootCAPublisher(Controller):
    """Every active namespace has `kube-root-ca.crt` holding the CA that verifies the API server."""

    name = "root-ca-cert-publisher"

    def __init__(self, client: ApiClient, informers: SharedInformerFactory | None = None, **kwargs: Any) -> None:
        super().__init__(client, informers, **kwargs)
        self.ca = client.connection.ca_pem.decode() if client.connection.ca_pem else ""

    def setup(self) -> None:
        self.namespaces = self.watch(NAMESPACES)
        self.configmaps = self.watch(CONFIGMAPS, enqueue=lambda o: _namespace_of(o) if (
            o.get("metadata") or {}).get("name") == ROOT_CA else None)

    async def reconcile(self, key: Any) -> None:
        if not _active(self.namespaces.get(key)):
            return
        wanted = {"ca.crt": self.ca}
        current = self.configmaps.get(f"{key}/{ROOT_CA}")
        body = {"metadata": {"name": ROOT_CA, "annotations": {"kubernetes.io/description": DESCRIPTION}},
                "data": wanted}
        try:
            if current is None:
                await self.client.create(CONFIGMAPS, body, key)
            elif current.get("data") != wanted:
                await self.client.patch(CONFIGMAPS, ROOT_CA, {"data": wanted}, key)
        except (AlreadyExists, NotFound):
            pass
