"""What kube-proxy programs, computed from Services and EndpointSlices (no I/O): one `ServicePort` per port of
every proxied Service, and its endpoints sorted into the sets upstream's `CategorizeEndpoints` gives
(pkg/proxy/topology.go): the cluster-wide ready ones (falling back to serving-terminating ones when none is
ready) and this node's ready ones (falling back to its serving-terminating ones)."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

SERVICE_NAME_LABEL = "kubernetes.io/service-name"
DEFAULT_AFFINITY_TIMEOUT = 10800  # seconds, upstream's default for sessionAffinity ClientIP


@dataclass(frozen=True, slots=True)
class Endpoint:
    """One address:port of a Service port, with its conditions (nil ready is true, nil serving is ready)."""

    ip: str
    port: int
    ready: bool = True
    serving: bool = True
    terminating: bool = False
    node: str = ""

    @property
    def address(self) -> tuple[str, int]:
        return (self.ip, self.port)

    def __str__(self) -> str:
        return f"[{self.ip}]:{self.port}" if ":" in self.ip else f"{self.ip}:{self.port}"


@dataclass(frozen=True, slots=True)
class ServicePort:
    """One port of a Service as kube-proxy sees it. `name` is "namespace/service:port-name"."""

    namespace: str
    service: str
    port_name: str
    protocol: str
    port: int
    cluster_ips: tuple[str, ...] = ()
    node_port: int = 0
    health_check_node_port: int = 0
    affinity_timeout: int = 0  # seconds; 0: no session affinity
    external_local: bool = False  # externalTrafficPolicy: Local
    internal_local: bool = False  # internalTrafficPolicy: Local
    externally_accessible: bool = False  # NodePort or LoadBalancer (or externalIPs)

    @property
    def service_key(self) -> str:
        return f"{self.namespace}/{self.service}"

    @property
    def name(self) -> str:
        return f"{self.namespace}/{self.service}:{self.port_name}" if self.port_name else \
            f"{self.namespace}/{self.service}"

    @property
    def uses_cluster_endpoints(self) -> bool:
        return not self.internal_local or (self.externally_accessible and not self.external_local)

    @property
    def uses_local_endpoints(self) -> bool:
        return self.internal_local or (self.externally_accessible and self.external_local)


@dataclass(slots=True)
class Categorized:
    """The endpoints a ServicePort's traffic may go to on this node."""

    cluster: list[Endpoint] = field(default_factory=list)
    local: list[Endpoint] = field(default_factory=list)
    has_any: bool = False

    def internal(self, port: ServicePort) -> list[Endpoint]:
        """For ClusterIP traffic."""
        return self.local if port.internal_local else self.cluster

    def external(self, port: ServicePort) -> list[Endpoint]:
        """For NodePort (and load balancer) traffic."""
        return self.local if port.external_local else self.cluster


def _valid_ip(value: Any) -> bool:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return False
    return True


def service_ports(service: dict[str, Any]) -> list[ServicePort]:
    """The ServicePorts kube-proxy programs for a Service (none for ExternalName or headless Services)."""
    meta, spec = service.get("metadata") or {}, service.get("spec") or {}
    kind = spec.get("type") or "ClusterIP"
    if kind == "ExternalName":
        return []
    cluster_ips = tuple(ip for ip in (spec.get("clusterIPs") or [spec.get("clusterIP")]) if ip and _valid_ip(ip))
    external = kind in ("NodePort", "LoadBalancer") or bool(spec.get("externalIPs"))
    affinity = 0
    if spec.get("sessionAffinity") == "ClientIP":
        config = (spec.get("sessionAffinityConfig") or {}).get("clientIP") or {}
        affinity = int(config.get("timeoutSeconds") or DEFAULT_AFFINITY_TIMEOUT)
    if not cluster_ips and not external:
        return []  # headless: DNS only
    external_local = external and spec.get("externalTrafficPolicy") == "Local"
    return [ServicePort(
        namespace=meta.get("namespace", ""), service=meta.get("name", ""), port_name=port.get("name") or "",
        protocol=port.get("protocol") or "TCP", port=int(port.get("port") or 0), cluster_ips=cluster_ips,
        node_port=int(port.get("nodePort") or 0) if kind in ("NodePort", "LoadBalancer") else 0,
        health_check_node_port=int(spec.get("healthCheckNodePort") or 0) if external_local else 0,
        affinity_timeout=affinity, external_local=external_local,
        internal_local=spec.get("internalTrafficPolicy") == "Local", externally_accessible=external,
    ) for port in spec.get("ports") or () if port.get("protocol", "TCP") in ("TCP", "UDP")]


def slice_endpoints(slices: Iterable[dict[str, Any]], port: ServicePort) -> list[Endpoint]:
    """The endpoints of `port` in a Service's EndpointSlices (matched by port name and protocol), each address
    once, in a stable order."""
    found: dict[tuple[str, int], Endpoint] = {}
    for item in slices:
        if item.get("addressType", "IPv4") not in ("IPv4", "IPv6"):
            continue
        number = next((p.get("port") for p in item.get("ports") or ()
                       if (p.get("name") or "") == port.port_name and (p.get("protocol") or "TCP") == port.protocol),
                      None)
        if not number:
            continue
        for endpoint in item.get("endpoints") or ():
            conditions = endpoint.get("conditions") or {}
            ready = conditions.get("ready") is not False
            serving = conditions.get("serving", ready) is not False
            terminating = conditions.get("terminating") is True
            for ip in (endpoint.get("addresses") or ())[:1]:  # upstream uses the first address
                key = (ip, int(number))
                if key not in found or (ready and not found[key].ready):
                    found[key] = Endpoint(ip, int(number), ready, serving, terminating,
                                          endpoint.get("nodeName") or "")
    return [found[k] for k in sorted(found)]


def categorize(endpoints: list[Endpoint], port: ServicePort, node: str) -> Categorized:
    """Upstream's CategorizeEndpoints (without topology hints): cluster-wide and node-local endpoint sets."""
    result = Categorized()
    if port.uses_cluster_endpoints:
        result.cluster = [e for e in endpoints if e.ready]
        if not result.cluster:
            result.cluster = [e for e in endpoints if e.serving and e.terminating]
        result.has_any = bool(result.cluster)
    if not port.uses_local_endpoints:
        return result
    local_ready = [e for e in endpoints if e.node == node and e.ready]
    if local_ready:
        result.local = local_ready
    else:
        result.local = [e for e in endpoints if e.node == node and e.serving and e.terminating]
    if any(e.ready or (e.serving and e.terminating) for e in endpoints):
        result.has_any = True
    return result


def local_ready_count(endpoints_by_port: Iterable[list[Endpoint]], node: str) -> int:
    """What the health-check node port reports: this node's ready endpoints of a Service (ip:port, once)."""
    return len({str(e) for endpoints in endpoints_by_port for e in endpoints if e.node == node and e.ready})


class PortRouting(Protocol):
    """What a listener uses of its ServicePort's state (server.PortState): the port, picking an endpoint for a
    connection, the endpoints still usable, and noting what was forwarded."""

    port: ServicePort

    def pick(self, kind: str, client_ip: str, exclude: tuple[Endpoint, ...] = ()) -> Endpoint | None: ...

    def usable(self, kind: str) -> set[Endpoint]: ...

    def note(self, listener: Any, client: tuple[Any, ...], endpoint: Any) -> None: ...
