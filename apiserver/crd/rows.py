"""The `ResourceType` rows a CRD adds to the resource table: one per served version.

Names come from `status.acceptedNames` when the CRD has them (the server serves accepted names),
else from `spec.names`. Each row carries its version's schema, printer columns and selectable fields,
and, compiled once, `extra["schema"]` (a `VersionSchema`: prune/default/validate) and `extra["table"]`
(a `TablePrinter`).
"""

from __future__ import annotations

from typing import Any

from apiserver.crd.printers import TablePrinter
from apiserver.crd.schema_validation import VersionSchema
from apiserver.resources import CRUD_VERBS, SUB_RW, ResourceType, Subresource


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


def resource_rows(crd: dict[str, Any]) -> list[ResourceType]:
    """One row per served version of `crd` (a defaulted, valid CRD)."""
    spec = crd.get("spec") or {}
    names = names_of(crd)
    kind = names.get("kind", "")
    storage = storage_version(crd)
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
        rows.append(ResourceType(
            group=spec.get("group", ""), version=version.get("name", ""), kind=kind,
            plural=names.get("plural", ""), namespaced=spec.get("scope") == "Namespaced",
            short_names=tuple(names.get("shortNames") or ()), categories=tuple(names.get("categories") or ()),
            subresources=tuple(subs), verbs=CRUD_VERBS, singular=names.get("singular", ""),
            storage_version=storage, list_kind=names.get("listKind", ""), crd=crd, schema=schema,
            printer_columns=columns,
            selectable_fields=tuple(f.get("jsonPath", "") for f in version.get("selectableFields") or ()),
            extra={
                "schema": VersionSchema.for_version(crd, version.get("name", "")),
                "table": TablePrinter(columns),
                "storage": bool(version.get("storage")),
                "deprecated": bool(version.get("deprecated")),
                "deprecationWarning": version.get("deprecationWarning"),
                "scale": subresources.get("scale"),
            },
        ))
    return rows
