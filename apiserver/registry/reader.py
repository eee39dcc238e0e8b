"""Read-only access to objects through the resource table and the cache: what admission plugins, RBAC and token
checks look at (upstream gives them informers), built before the registry that writes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..resources import ResourceRegistry, ResourceType
from .cache import Entry, ObjectCache


class ObjectReader:
    """Objects by resource row or by (group, version, plural), read from the cache."""

    def __init__(self, resources: ResourceRegistry, cache: ObjectCache) -> None:
        self.resources = resources
        self.cache = cache

    def find(self, res: ResourceType, namespace: str | None, name: str) -> Entry | None:
        return self.cache.get(res.key(namespace, name))

    def object(self, group: str, version: str, plural: str, namespace: str | None,
               name: str) -> Mapping[str, Any] | None:
        """The object, or None when it or its resource does not exist (the namespace is ignored if cluster-scoped)."""
        res = self.resources.lookup(group, version, plural)
        if res is None:
            return None
        entry = self.cache.get(res.key(namespace if res.namespaced else None, name))
        return entry.obj if entry else None

    def objects(self, group: str, version: str, plural: str, namespace: str | None = None) -> list[Mapping[str, Any]]:
        """Every object of a resource (in `namespace`, if given)."""
        res = self.resources.lookup(group, version, plural)
        assert res is not None, plural
        return [e.obj for e in self.cache.list(res.key_prefix, namespace)]
