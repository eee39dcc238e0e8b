"""Discovery documents (legacy `/api`, `/apis`, per group-version lists, and aggregated v2), from the table.

Documents are built once per resource-table state and kept serialized; a CRD change resets them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any, overload

import orjson

from .resources import ResourceRegistry, ResourceType

AGGREGATED_V2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
AGGREGATED_V2BETA1 = "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"

# Group order as the real server registers them (aggregated discovery and /apis keep it).
GROUP_ORDER = ["apiregistration.k8s.io", "apps", "events.k8s.io", "authentication.k8s.io",
               "authorization.k8s.io", "autoscaling", "batch", "certificates.k8s.io", "networking.k8s.io",
               "policy", "rbac.authorization.k8s.io", "storage.k8s.io", "admissionregistration.k8s.io",
               "apiextensions.k8s.io", "scheduling.k8s.io", "coordination.k8s.io", "node.k8s.io",
               "discovery.k8s.io", "flowcontrol.apiserver.k8s.io"]


def _group_versions(rows: tuple[ResourceType, ...]) -> dict[str, list[str]]:
    """group -> versions, preferred first (built-in order, then CRD version priority order)."""
    groups: dict[str, list[str]] = {}
    for row in rows:
        versions = groups.setdefault(row.group, [])
        if row.version not in versions:
            versions.append(row.version)
    for group, versions in groups.items():
        crd_rows = [r for r in rows if r.group == group and r.crd is not None]
        if crd_rows:
            priority = crd_rows[0].extra.get("version_priority")
            if priority:
                versions.sort(key=lambda v: priority.index(v) if v in priority else len(priority))
    return groups


def _ordered_groups(groups: dict[str, list[str]]) -> list[str]:
    known = [g for g in GROUP_ORDER if g in groups]
    return known + sorted(g for g in groups if g and g not in GROUP_ORDER)


def _storage_hash(row: ResourceType) -> str:
    digest = hashlib.sha256(f"{row.group}/{row.storage_version}/{row.kind}".encode()).digest()
    import base64

    return base64.b64encode(digest[:8]).decode()


def api_resource_list(rows: list[ResourceType], group_version: str) -> dict[str, Any]:
    resources: list[dict[str, Any]] = []
    for row in sorted(rows, key=lambda r: r.plural):
        item: dict[str, Any] = {"name": row.plural, "singularName": row.singular, "namespaced": row.namespaced,
                                "kind": row.kind, "verbs": sorted(row.verbs)}
        if row.short_names:
            item["shortNames"] = list(row.short_names)
        if row.categories:
            item["categories"] = list(row.categories)
        if row.stored:
            item["storageVersionHash"] = _storage_hash(row)
        resources.append(item)
        for sub in sorted(row.subresources, key=lambda s: s.name):
            sub_item: dict[str, Any] = {"name": f"{row.plural}/{sub.name}", "singularName": "",
                                        "namespaced": row.namespaced, "kind": sub.kind, "verbs": sorted(sub.verbs)}
            if sub.group:
                sub_item["group"], sub_item["version"] = sub.group, sub.version
            resources.append(sub_item)
    doc: dict[str, Any] = {"kind": "APIResourceList"}
    if "/" in group_version:
        doc["apiVersion"] = "v1"
    doc["groupVersion"] = group_version
    doc["resources"] = resources
    return doc


def _aggregated_resource(row: ResourceType) -> dict[str, Any]:
    item: dict[str, Any] = {
        "resource": row.plural,
        "responseKind": {"group": "", "version": "", "kind": row.kind},
        "scope": "Namespaced" if row.namespaced else "Cluster",
        "singularResource": row.singular,
        "verbs": sorted(row.verbs),
    }
    if row.short_names:
        item["shortNames"] = list(row.short_names)
    if row.categories:
        item["categories"] = list(row.categories)
    if row.subresources:
        item["subresources"] = [{
            "subresource": sub.name,
            "responseKind": {"group": sub.group, "version": sub.version, "kind": sub.kind},
            "verbs": sorted(sub.verbs),
        } for sub in sorted(row.subresources, key=lambda s: s.name)]
    return item


def _remote_resources(doc: dict[str, Any] | None) -> list[dict[str, Any]]:
    """An extension API server's APIResourceList as aggregated discovery's resources (subresources folded in)."""
    items: dict[str, dict[str, Any]] = {}
    for entry in (doc or {}).get("resources") or ():
        name = str(entry.get("name", ""))
        parent, _, sub = name.partition("/")
        if not sub:
            item = {"resource": name, "responseKind": {"group": entry.get("group", ""),
                                                       "version": entry.get("version", ""),
                                                       "kind": entry.get("kind", "")},
                    "scope": "Namespaced" if entry.get("namespaced") else "Cluster",
                    "singularResource": entry.get("singularName", ""), "verbs": list(entry.get("verbs") or [])}
            for key in ("shortNames", "categories"):
                if entry.get(key):
                    item[key] = list(entry[key])
            items[name] = item
        elif parent in items:
            items[parent].setdefault("subresources", []).append({
                "subresource": sub, "responseKind": {"group": entry.get("group", ""),
                                                     "version": entry.get("version", ""),
                                                     "kind": entry.get("kind", "")},
                "verbs": list(entry.get("verbs") or [])})
    return [items[name] for name in sorted(items)]


class Discovery:
    """Serialized discovery documents, rebuilt lazily after the resource table changes. `remote` holds the groups
    extension API servers serve through the aggregator: group -> [(version, its APIResourceList or None)],
    preferred version first (apiserver/aggregator)."""

    def __init__(self, resources: ResourceRegistry, server_address: str = "") -> None:
        self.resources = resources
        self.server_address = server_address
        self._cache: dict[str, bytes] = {}
        self.remote: dict[str, list[tuple[str, dict[str, Any] | None]]] = {}
        resources.on_change(self._cache.clear)

    def set_remote(self, groups: dict[str, list[tuple[str, dict[str, Any] | None]]]) -> None:
        """The aggregated groups now served (documents are rebuilt when they change)."""
        if groups != self.remote:
            self.remote = groups
            self._cache.clear()

    def _remote_versions(self, local: dict[str, list[str]]) -> dict[str, list[str]]:
        return {g: [v for v, _ in versions] for g, versions in self.remote.items() if g and g not in local}

    @overload
    def _memo(self, key: str, build: Callable[[], dict[str, Any]]) -> bytes: ...
    @overload
    def _memo(self, key: str, build: Callable[[], dict[str, Any] | None]) -> bytes | None: ...

    def _memo(self, key: str, build: Callable[[], dict[str, Any] | None]) -> bytes | None:
        """The serialized document `build` makes (None when it has none), kept until the resource table changes."""
        if key not in self._cache:
            doc = build()
            if doc is None:
                return None
            self._cache[key] = orjson.dumps(doc)
        return self._cache[key]

    def api_versions(self) -> bytes:
        return self._memo("api", lambda: {"kind": "APIVersions", "versions": ["v1"],
                                          "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0",
                                                                          "serverAddress": self.server_address}]})

    def _group_doc(self, group: str, versions: list[str]) -> dict[str, Any]:
        gvs = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
        return {"name": group, "versions": gvs, "preferredVersion": gvs[0]}

    def api_groups(self) -> bytes:
        def build() -> dict[str, Any]:
            groups = _group_versions(self.resources.all())
            remote = self._remote_versions(groups)
            return {"kind": "APIGroupList", "apiVersion": "v1",
                    "groups": [self._group_doc(g, groups[g]) for g in _ordered_groups(groups)]
                    + [self._group_doc(g, versions) for g, versions in remote.items()]}

        return self._memo("apis", build)

    def api_group(self, group: str) -> bytes | None:
        def build() -> dict[str, Any] | None:
            local = _group_versions(self.resources.all())
            versions = local.get(group) or self._remote_versions(local).get(group)
            if not versions or not group:
                return None
            return {"kind": "APIGroup", "apiVersion": "v1", **self._group_doc(group, versions)}

        return self._memo(f"group:{group}", build)

    def resource_list(self, group: str, version: str) -> bytes | None:
        def build() -> dict[str, Any] | None:
            rows = [r for r in self.resources.all() if r.group == group and r.version == version]
            if not rows:
                return None
            return api_resource_list(rows, f"{group}/{version}" if group else version)

        return self._memo(f"gv:{group}/{version}", build)

    def aggregated(self, legacy: bool) -> bytes:
        def build() -> dict[str, Any]:
            rows = self.resources.all()
            groups = _group_versions(rows)
            names = [""] if legacy else _ordered_groups(groups)
            items = []
            for group in names:
                if group not in groups:
                    continue
                versions = []
                for version in groups[group]:
                    resources = [_aggregated_resource(r) for r in sorted(rows, key=lambda r: r.plural)
                                 if r.group == group and r.version == version]
                    versions.append({"version": version, "resources": resources, "freshness": "Current"})
                meta: dict[str, Any] = {"creationTimestamp": None}
                if group:
                    meta = {"name": group, "creationTimestamp": None}
                items.append({"metadata": meta, "versions": versions})
            if not legacy:
                for group in self._remote_versions(groups):
                    items.append({"metadata": {"name": group, "creationTimestamp": None}, "versions": [
                        {"version": version, "resources": _remote_resources(doc),
                         "freshness": "Current" if doc is not None else "Stale"}
                        for version, doc in self.remote[group]]})
            return {"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2", "metadata": {},
                    "items": items}

        return self._memo("agg-legacy" if legacy else "agg-apis", build)

    def etag(self, body: bytes) -> str:
        return '"' + hashlib.sha512(body).hexdigest().upper() + '"'
