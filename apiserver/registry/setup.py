"""Build the registry of one server: its store, cache and resource table (each kind's strategy is on its row:
registry/kinds.py), writing through the admission chain and recording managedFields."""

from __future__ import annotations

from mini_kube.store import Store

from ..admission import AdmissionChain
from ..resources import ResourceRegistry
from .cache import ObjectCache
from .generic import Registry
from .managed_fields import track_fields


def build_registry(store: Store, cache: ObjectCache, resources: ResourceRegistry,
                   admission: AdmissionChain) -> Registry:
    """The registry over `store` and `cache`, writing through `admission`."""
    registry = Registry(store, cache, resources, admission=admission)
    registry.field_tracker = track_fields
    return registry
