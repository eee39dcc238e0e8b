"""metadata.managedFields on every write (server-side apply records its own), with the resource's schema."""

from __future__ import annotations

from typing import Any

from mini_kube.machinery.times import now_rfc3339

from ..patch import update_managed_fields
from ..patch.schema_walk import SchemaNode
from ..resources import ResourceType
from ..schema.definitions import definition_name
from .generic import WriteOptions


def schema_node(res: ResourceType) -> Any:
    """The patch library's schema accessor for this resource (None for schema-less custom resources)."""
    if res.crd is not None:
        return SchemaNode.for_structural(res.schema) if res.schema else None
    name = definition_name(res.group, res.version, res.kind)
    return SchemaNode.for_builtin(name) if name else None


def track_fields(res: ResourceType, old: dict[str, Any] | None, new: dict[str, Any],
                 opts: WriteOptions) -> dict[str, Any]:
    """Record this write in metadata.managedFields (server-side apply records its own)."""
    if opts.operation == "Apply":
        return new
    ignored = [("status",)] if res.has_status and not opts.subresource else []
    return update_managed_fields(old, new, opts.field_manager or "unknown", api_version=res.api_version,
                                 now=now_rfc3339(), subresource=opts.subresource, schema=schema_node(res),
                                 ignored=ignored)
