"""Reading custom resources in the requested version (`conversion: None`).

An object is stored in the storage version it was written in. A read prunes and defaults it with the schema
of the version it is stored in (so defaults added to a CRD show on old objects), then converts it to the
requested version (apiVersion rewritten, pruned to that version's schema). Objects stored in the requested
version and written after the CRD last changed are served from their stored bytes as they are.
"""

from __future__ import annotations

from typing import Any

from mini_kube.apiserver.crd.defaulting import deep_copy
from mini_kube.apiserver.resources import ResourceType


def serves_raw(res: ResourceType, obj: dict[str, Any], revision: int) -> bool:
    """Whether `obj` (stored at `revision`) is served exactly as stored through `res`."""
    if obj.get("apiVersion") != res.api_version:
        return False
    return res.crd is None or revision > res.extra.get("fresh_after", 0)


def _revision(obj: dict[str, Any]) -> int:
    text = (obj.get("metadata") or {}).get("resourceVersion") or ""
    return int(text) if text.isdigit() else 0


def served(res: ResourceType, obj: dict[str, Any]) -> dict[str, Any]:
    """`obj` as stored, as the version of `res` serves it (a copy when anything changes)."""
    if res.crd is None:
        if obj.get("apiVersion") != res.api_version and obj.get("kind") == res.kind:
            convert = res.extra.get("convert")  # built-in kinds stored in another version's shape
            return convert(res, obj) if convert else {**obj, "apiVersion": res.api_version}
        return obj
    if serves_raw(res, obj, _revision(obj)):  # stored objects carry their revision as resourceVersion
        return obj
    copy = deep_copy(obj)
    schemas = res.extra.get("schemas") or {}
    source = schemas.get(str(obj.get("apiVersion", "")).rpartition("/")[2])
    if source is not None:
        source.decode(copy)
    target = res.extra.get("validator")
    if target is not None:
        target.convert(copy)
    else:
        copy["apiVersion"] = res.api_version
    return copy
