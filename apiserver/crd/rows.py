"""The `ResourceType` rows a CRD adds to the resource table: one per served version.

Names come from `status.acceptedNames` when the CRD has them (the server serves accepted names),
else from `spec.names`. Each row carries its version's schema, printer columns and selectable fields,
its `object_schema` (the version's `VersionSchema`, compiled once: prune/default/validate), its `scale`
(the scale subresource spec), and in `extra` what discovery says of the version: `version_priority` (the
CRD's versions, preferred first, as discovery orders them), `storage`, `deprecated`, `deprecationWarning`.
`registry/kinds.py` gives the rows their strategy, validator and printer.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from mini_kube.apiserver.crd.schema_validation import VersionSchema
from mini_kube.apiserver.resources import CRUD_VERBS, SUB_RW, ResourceType, Subresource

_KUBE_VERSION = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")
_TYPE_RANK = {"alpha": 0, "beta": 1, None: 2}


def compare_versions(a: str, b: str) -> int:
    """CompareKubeAwareVersionStrings: GA > beta > alpha, then major, then minor; others sort after, by name."""
    if a == b:
        return 0
    ma, mb = _KUBE_VERSION.match(a), _KUBE_VERSION.match(b)
    if not ma and not mb:
        return (b > a) - (b < a)
    if not ma or not mb:
        return -1 if not ma else 1
    ka = (_TYPE_RANK[ma.group(2)], int(ma.group(1)), int(ma.group(3) or 0))
    kb = (_TYPE_RANK[mb.group(2)], int(mb.group(1)), int(mb.group(3) or 0))
    return (ka > kb) - (ka < kb)


def version_priority(crd: dict[str, Any]) -> list[str]:
    """The CRD's version names, highest priority (the preferred version in discovery) first."""
    names = [v.get("name", "") for v in (crd.get("spec") or {}).get("versions") or ()]
    return sorted(names, key=functools.cmp_to_key(compare_versions), reverse=True)


def storage_version(crd: dict[str, Any]) -> str:
    """The name of the version marked `storage: true` ("" when none is)."""
    for version in (crd.get("spec") or {}).get("versions") or ():
        if version.get("storage"):
            return version.get("name", "")
    return ""


def names_of(crd: dict[str, Any]) -> dict[str, Any]:
    """The names to serve: the accepted ones once the CRD has status, else the requested ones."""
    accepted = (crd.get("status") or {}).get("acceptedNames") or {}
    return accepted if accepted.get("plural") and accepted.get("kind") else (crd.get("spec") or {}).get("names") or {}


def compiled_schemas(crd: dict[str, Any]) -> dict[str, VersionSchema]:
    """Every version's compiled schema, served or not (reads convert from whatever version an object is in)."""
    versions = (crd.get("spec") or {}).get("versions") or ()
    return {v.get("name", ""): VersionSchema.for_version(crd, v.get("name", "")) for v in versions}


def resource_rows(crd: dict[str, Any], schemas: dict[str, VersionSchema] | None = None) -> list[ResourceType]:
    """One row per served version of `crd` (a defaulted, valid CRD), without its strategy, validator and
    printer; `schemas` are `compiled_schemas(crd)` (compiled here when not given)."""
    spec = crd.get("spec") or {}
    names = names_of(crd)
    kind = names.get("kind", "")
    storage = storage_version(crd)
    priority = version_priority(crd)
    schemas = schemas if schemas is not None else compiled_schemas(crd)
    rows = []
    for version in spec.get("versions") or ():
        if not version.get("served"):
            continue
        subresources = version.get("subresources") or {}
        subs = []
        if subresources.get("status") is not None:
            subs.append(Subresource("status", kind, SUB_RW))
        if subresources.get("scale") is not None:
            subs.append(Subresource("scale", "Scale", SUB_RW, "autoscaling", "v1"))
        schema = (version.get("schema") or {}).get("openAPIV3Schema")
        columns = tuple(version.get("additionalPrinterColumns") or ())
        compiled = schemas[version.get("name", "")]
        rows.append(ResourceType(
            group=spec.get("group", ""), version=version.get("name", ""), kind=kind,
            plural=names.get("plural", ""), namespaced=spec.get("scope") == "Namespaced",
            short_names=tuple(names.get("shortNames") or ()), categories=tuple(names.get("categories") or ()),
            subresources=tuple(subs), verbs=CRUD_VERBS, singular=names.get("singular", ""),
            storage_version=storage, list_kind=names.get("listKind", ""), crd=crd, schema=schema,
            printer_columns=columns,
            selectable_fields=tuple(f.get("jsonPath", "") for f in version.get("selectableFields") or ()),
            object_schema=compiled, scale=subresources.get("scale"),
            extra={
                "version_priority": priority,
                "storage": bool(version.get("storage")),
                "deprecated": bool(version.get("deprecated")),
                "deprecationWarning": version.get("deprecationWarning"),
            },
        ))
    return rows
