"""Wire the registry of one server: per-kind strategies, the admission chain and field tracking."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..admission import AdmissionChain
from ..admission.namespace_lifecycle import NamespaceLifecycle
from .strategies.namespace import NamespaceStrategy
from .strategies.pod import PodStrategy
from .strategies.service import ServiceStrategy

if TYPE_CHECKING:
    from ..server import ApiServer


def configure(server: ApiServer) -> None:
    config = server.config
    registry = server.registry
    registry.strategies.update({
        ("", "Namespace"): NamespaceStrategy(),
        ("", "Pod"): PodStrategy(),
        ("", "Service"): ServiceStrategy(config.service_cidr, config.node_port_range),
    })
    registry.admission = AdmissionChain([NamespaceLifecycle()])
