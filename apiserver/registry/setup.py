"""Wire the registry of one server: the admission chain, field tracking and the CRD controller (each kind's
strategy is on its row: registry/kinds.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mini_kube.machinery.times import now_rfc3339

from ..admission import AdmissionChain
from ..admission.plugins import default_plugins
from ..resources import ResourceType
from .fieldschema import schema_node
from .generic import WriteOptions

if TYPE_CHECKING:
    from ..server import ApiServer


def configure(server: ApiServer) -> None:
    registry = server.registry
    registry.admission = AdmissionChain(default_plugins(server))
    registry.field_tracker = track_fields
    from ..crd_controller import CrdController

    CrdController(server).start()  # serve the stored CRDs; follow every CRD write from here on


def track_fields(res: ResourceType, old: dict[str, Any] | None, new: dict[str, Any],
                 opts: WriteOptions) -> dict[str, Any]:
    """Record this write in metadata.managedFields (server-side apply records its own)."""
    if opts.operation == "Apply":
        return new
    from ..patch import update_managed_fields

    ignored = [("status",)] if res.has_status and not opts.subresource else []
    return update_managed_fields(old, new, opts.field_manager or "unknown", api_version=res.api_version,
                                 now=now_rfc3339(), subresource=opts.subresource, schema=schema_node(res),
                                 ignored=ignored)
