"""Build the registry of one server: per-kind strategies and conversions, its admission chain, field tracking."""

from __future__ import annotations

from mini_kube.store import Store

from ..admission import AdmissionChain
from ..resources import ResourceRegistry
from .cache import ObjectCache
from .generic import Registry
from .managed_fields import track_fields
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


def build_registry(store: Store, cache: ObjectCache, resources: ResourceRegistry, admission: AdmissionChain, *,
                   service_cidr: str, node_port_range: tuple[int, int]) -> Registry:
    """The registry over `store` and `cache`, writing through `admission`, with every built-in kind's strategy
    (Services allocate from `service_cidr` and `node_port_range`)."""
    registry = Registry(store, cache, resources, admission=admission)
    registry.strategies.update({
        ("", "Namespace"): NamespaceStrategy(),
        ("", "Node"): NodeStrategy(),
        ("", "Pod"): PodStrategy(),
        ("", "Service"): ServiceStrategy(service_cidr, node_port_range),
        ("", "PersistentVolume"): PersistentVolumeStrategy(),
        ("", "PersistentVolumeClaim"): PersistentVolumeClaimStrategy(),
        ("apps", "DaemonSet"): DaemonSetStrategy(),
        ("apiextensions.k8s.io", "CustomResourceDefinition"): CrdStrategy(),
        ("events.k8s.io", "Event"): EventsV1Strategy(),
        ("batch", "Job"): JobStrategy(),
        ("autoscaling", "HorizontalPodAutoscaler"): HorizontalPodAutoscalerStrategy(),
    })
    events_v1 = resources.lookup("events.k8s.io", "v1", "events")
    if events_v1 is not None:
        events_v1.extra["convert"] = convert_event
    for version in ("v1", "v2"):
        hpa = resources.lookup("autoscaling", version, "horizontalpodautoscalers")
        if hpa is not None:
            hpa.extra["convert"] = convert_hpa
    registry.custom_strategy = CustomResourceStrategy()
    registry.field_tracker = track_fields
    return registry
