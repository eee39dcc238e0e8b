"""metadata.managedFields on every write (server-side apply records its own), with the resource's schema."""

from __future__ import annotations

from typing import Any

from mini_kube.machinery.times import now_rfc3339

from ..patch import update_managed_fields
from ..resources import ResourceType
from .fieldschema import schema_node
from .generic import WriteOptions


def track_fields(res: ResourceType, old: dict[str, Any] | None, new: dict[str, Any],
                 opts: WriteOptions) -> dict[str, Any]:
    """Record this write in metadata.managedFields (server-side apply records its own)."""
    if opts.operation == "Apply":
        return new
    ignored = [("status",)] if res.has_status and not opts.subresource else []
    return update_managed_fields(old, new, opts.field_manager or "unknown", api_version=res.api_version,
                                 now=now_rfc3339(), subresource=opts.subresource, schema=schema_node(res),
                                 ignored=ignored)
