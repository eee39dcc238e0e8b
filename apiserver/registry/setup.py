"""Wire the registry of one server: per-kind strategies, the admission chain and field tracking."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mini_kube.machinery.times import now_rfc3339

from ..admission import AdmissionChain
from ..admission.plugins import default_plugins
from ..resources import ResourceType
from .generic import WriteOptions
from .strategies.crd import CrdStrategy
from .strategies.custom import CustomResourceStrategy
from .strategies.daemonset import DaemonSetStrategy
from .strategies.event import EventsV1Strategy
from .strategies.event import convert as convert_event
from .strategies.hpa import HorizontalPodAutoscalerStrategy
from .strategies.hpa import convert as convert_hpa
from .strategies.job import JobStrategy
from .strategies.namespace import NamespaceStrategy
from .strategies.node import NodeStrategy
from .strategies.pod import PodStrategy
from .strategies.service import ServiceStrategy
from .strategies.volume import PersistentVolumeClaimStrategy, PersistentVolumeStrategy

if TYPE_CHECKING:
    from ..server import ApiServer


def configure(server: ApiServer) -> None:
    config = server.config
    registry = server.registry
    registry.strategies.update({
        ("", "Namespace"): NamespaceStrategy(),
        ("", "Node"): NodeStrategy(),
        ("", "Pod"): PodStrategy(),
        ("", "Service"): ServiceStrategy(config.service_cidr, config.node_port_range),
        ("", "PersistentVolume"): PersistentVolumeStrategy(),
        ("", "PersistentVolumeClaim"): PersistentVolumeClaimStrategy(),
        ("apps", "DaemonSet"): DaemonSetStrategy(),
        ("apiextensions.k8s.io", "CustomResourceDefinition"): CrdStrategy(),
        ("events.k8s.io", "Event"): EventsV1Strategy(),
        ("batch", "Job"): JobStrategy(),
        ("autoscaling", "HorizontalPodAutoscaler"): HorizontalPodAutoscalerStrategy(),
    })
    events_v1 = server.resources.lookup("events.k8s.io", "v1", "events")
    if events_v1 is not None:
        events_v1.extra["convert"] = convert_event
    for version in ("v1", "v2"):
        hpa = server.resources.lookup("autoscaling", version, "horizontalpodautoscalers")
        if hpa is not None:
            hpa.extra["convert"] = convert_hpa
    registry.custom_strategy = CustomResourceStrategy()
    registry.admission = AdmissionChain(default_plugins(server))
    registry.field_tracker = track_fields
    from ..crd_controller import CrdController

    CrdController(server).start()  # serve the stored CRDs; follow every CRD write from here on


def track_fields(res: ResourceType, old: dict[str, Any] | None, new: dict[str, Any],
                 opts: WriteOptions) -> dict[str, Any]:
    """Record this write in metadata.managedFields (server-side apply records its own)."""
    if opts.operation == "Apply":
        return new
    from ..handlers.patching import schema_node
    from ..patch import update_managed_fields

    ignored = [("status",)] if res.has_status and not opts.subresource else []
    return update_managed_fields(old, new, opts.field_manager or "unknown", api_version=res.api_version,
                                 now=now_rfc3339(), subresource=opts.subresource, schema=schema_node(res),
                                 ignored=ignored)
