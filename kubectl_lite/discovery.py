"""What the server serves, from aggregated discovery (two requests, as kubectl 1.30+ makes), cached on disk under
`~/.kube/cache/kubectl-lite/` for six hours; a name that is not found refreshes the cache once."""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mini_kube.machinery.refs import ResourceRef

from .transport import Transport

AGGREGATED = ("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
              "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json")
TTL_SECONDS = 6 * 3600


class ResourceNotFound(Exception):
    """A resource name the server does not serve (kubectl: `the server doesn't have a resource type`)."""


@dataclass(frozen=True)
class Resource:
    """One served resource at its preferred version."""

    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool
    singular: str = ""
    short_names: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()

    @property
    def group_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def qualified(self) -> str:
        """`deployments.apps` (plain `configmaps` for the core group), as kubectl names resource types."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    def path(self, namespace: str | None = None, name: str | None = None, subresource: str = "") -> str:
        return ResourceRef(self.group, self.version, self.plural, self.namespaced).path(namespace, name, subresource)


def _parse(doc: dict[str, Any], out: list[Resource], all_versions: dict[str, list[str]]) -> None:
    for group in doc.get("items") or ():
        name = (group.get("metadata") or {}).get("name", "")
        versions = group.get("versions") or []
        all_versions[name] = [v["version"] for v in versions]
        if not versions:
            continue
        preferred = versions[0]
        for res in preferred.get("resources") or ():
            kind = (res.get("responseKind") or {}).get("kind", "")
            out.append(Resource(name, preferred["version"], res["resource"], kind, res.get("scope") == "Namespaced",
                                res.get("singularResource", ""), tuple(res.get("shortNames") or ()),
                                tuple(res.get("verbs") or ()), tuple(res.get("categories") or ())))


class Discovery:
    """Resource lookup by any name kubectl accepts: plural, singular, short name, kind, `plural.group`."""

    def __init__(self, transport: Transport, cache_dir: str | None = None) -> None:
        self.transport = transport
        root = Path(cache_dir or os.environ.get("KUBECTL_LITE_CACHE_DIR") or Path.home() / ".kube" / "cache")
        key = hashlib.sha256(transport.creds.server.encode()).hexdigest()[:16]
        self.cache_file = root / "kubectl-lite" / f"discovery-{key}.json"
        self._resources: list[Resource] | None = None
        self.group_versions: dict[str, list[str]] = {}
        self._fresh = False

    def _fetch(self) -> dict[str, Any]:
        docs = {prefix: self.transport.request("GET", prefix, accept=AGGREGATED) for prefix in ("/api", "/apis")}
        try:
            self.cache_file.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.cache_file.with_suffix(".tmp")
            tmp.write_text(json.dumps(docs))
            tmp.replace(self.cache_file)
        except OSError:
            pass  # a read-only home still works, only slower
        self._fresh = True
        return docs

    def _load(self, refresh: bool = False) -> list[Resource]:
        if self._resources is not None and not refresh:
            return self._resources
        docs: dict[str, Any] | None = None
        if not refresh and self.cache_file.exists() and time.time() - self.cache_file.stat().st_mtime < TTL_SECONDS:
            try:
                docs = json.loads(self.cache_file.read_text())
            except (OSError, ValueError):
                docs = None
        if docs is None:
            docs = self._fetch()
        found: list[Resource] = []
        self.group_versions = {}
        for prefix in ("/api", "/apis"):
            _parse(docs.get(prefix) or {}, found, self.group_versions)
        self._resources = found
        return found

    def resources(self) -> list[Resource]:
        return self._load()

    def _match(self, name: str) -> list[Resource]:
        lowered = name.lower()
        plain, _, group = lowered.partition(".")
        version = ""
        if group and "." in group:
            maybe_version, _, rest = group.partition(".")
            if maybe_version.startswith("v") and maybe_version[1:2].isdigit():
                version, group = maybe_version, rest
        hits = []
        for res in self._load():
            if group and res.group != group and not res.group.startswith(group + "."):
                continue
            if version and res.version != version:
                continue
            if plain in (res.plural, res.singular, res.kind.lower()) or plain in res.short_names:
                hits.append(res)
        if group:
            exact = [r for r in hits if r.group == group]
            return exact or hits
        core_first = sorted(hits, key=lambda r: (r.group != "", r.group))
        return core_first

    def find(self, name: str) -> Resource:
        """The one resource `name` means; refreshes a stale cache once before giving up."""
        hits = self._match(name)
        if not hits and not self._fresh:
            self._load(refresh=True)
            hits = self._match(name)
        if not hits:
            raise ResourceNotFound(name)
        return hits[0]

    def category(self, name: str) -> list[Resource]:
        """Resources in a category (`all`), in discovery order."""
        return [r for r in self._load() if name in r.categories]
