"""Reading custom resources in the requested version (`conversion: None`).

An object is stored in the storage version it was written in. A read prunes and defaults it with the schema
of the version it is stored in (so defaults added to a CRD show on old objects), then converts it to the
requested version (apiVersion rewritten, pruned to that version's schema). Objects stored in the requested
version and written after the CRD last changed are served from their stored bytes as they are.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mini_kube.apiserver.crd.defaulting import deep_copy
from mini_kube.apiserver.resources import ObjectSchema, ResourceType


def serves_raw(res: ResourceType, obj: dict[str, Any], revision: int) -> bool:
    """Whether `obj` (stored at `revision`) is served exactly as stored through `res`."""
    if obj.get("apiVersion") != res.api_version:
        return False
    return res.crd is None or revision > res.fresh_after


def _revision(obj: dict[str, Any]) -> int:
    text = (obj.get("metadata") or {}).get("resourceVersion") or ""
    return int(text) if text.isdigit() else 0


def served(res: ResourceType, obj: dict[str, Any]) -> dict[str, Any]:
    """`obj` as stored, as the version of `res` serves it (a copy when anything changes): the row's strategy
    reads objects stored in another version's shape."""
    strategy = res.strategy
    if res.crd is not None:
        return strategy.read(res, obj) if strategy is not None else obj
    if obj.get("apiVersion") != res.api_version and obj.get("kind") == res.kind:
        converted = strategy.read(res, obj) if strategy is not None else obj
        return converted if converted.get("apiVersion") == res.api_version else {**obj, "apiVersion": res.api_version}
    return obj


def convert_custom(res: ResourceType, obj: dict[str, Any], schemas: Mapping[str, ObjectSchema]) -> dict[str, Any]:
    """A stored custom resource as the version of `res` serves it; `schemas` are the CRD's versions' schemas."""
    if serves_raw(res, obj, _revision(obj)):  # stored objects carry their revision as resourceVersion
        return obj
    copy = deep_copy(obj)
    source = schemas.get(str(obj.get("apiVersion", "")).rpartition("/")[2])
    if source is not None:
        source.decode(copy)
    target = res.object_schema
    if target is not None:
        target.convert(copy)
    else:
        copy["apiVersion"] = res.api_version
    return copy
