"""Service rules: ports, types, selectors, clusterIP(s), external IPs and what may change on update."""

from __future__ import annotations

from typing import Any

from mini_kube.apiserver.validation.errs import (
    FieldError,
    duplicate,
    forbidden,
    invalid,
    not_supported,
    raw,
    required,
)
from mini_kube.apiserver.validation.meta import (
    validate_dns1123_label,
    validate_labels,
    validate_qualified_name,
)
from mini_kube.apiserver.validation.network import (
    is_valid_ip,
    parse_ip,
    validate_non_special_ip,
    validate_port_num_or_name,
    validate_protocol,
)
from mini_kube.machinery.names import is_dns1123_subdomain, is_valid_port_num

Obj = dict[str, Any]
TYPES = ("ClusterIP", "ExternalName", "LoadBalancer", "NodePort")
AFFINITIES = ("ClientIP", "None")
IP_FAMILIES = ("IPv4", "IPv6")
IP_FAMILY_POLICIES = ("PreferDualStack", "RequireDualStack", "SingleStack")
TRAFFIC_POLICIES = ("Cluster", "Local")


def _ips(spec: Obj) -> list[str]:
    """clusterIPs, or [clusterIP] when only that was given (the strategy normalizes this before validating)."""
    return spec.get("clusterIPs") or ([spec["clusterIP"]] if spec.get("clusterIP") else [])


def _headless(spec: Obj) -> bool:
    return _ips(spec) == ["None"]


def _port(port: Obj, require_name: bool, names: set[str], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    name = port.get("name") or ""
    if require_name and not name:
        errs.append(required(f"{path}.name"))
    elif name:
        errs += validate_dns1123_label(name, f"{path}.name")
        if name in names:
            errs.append(duplicate(f"{path}.name", name))
        names.add(name)
    number = port.get("port") or 0
    errs += [invalid(f"{path}.port", number, msg) for msg in is_valid_port_num(number)]
    errs += validate_protocol(port.get("protocol"), f"{path}.protocol")
    if port.get("targetPort") is not None:
        errs += validate_port_num_or_name(port["targetPort"], f"{path}.targetPort")
    if port.get("appProtocol") is not None:
        errs += validate_qualified_name(port["appProtocol"], f"{path}.appProtocol")
    return errs


def _go_service_port(protocol: str, port: int) -> str:
    return (f'core.ServicePort{{Name:"", Protocol:"{protocol}", AppProtocol:(*string)(nil), Port:{port}, '
            'TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:""}, NodePort:0}')


def _ip_version(ip: str) -> int | None:
    """4 or 6 (None for what is not an IP: validated before this is asked)."""
    parsed = parse_ip(ip)
    return parsed.version if parsed is not None else None


def _cluster_ips(spec: Obj) -> list[FieldError]:
    """clusterIP and clusterIPs agree, are valid, at most one per family (ValidateServiceClusterIPsRelatedFields)."""
    if spec.get("type") == "ExternalName":
        return []
    errs: list[FieldError] = []
    path = "spec.clusterIPs"
    cluster_ip, ips = spec.get("clusterIP") or "", _ips(spec)
    if cluster_ip:
        if not ips:
            errs.append(required(path))
        elif ips[0] != cluster_ip:
            errs.append(invalid(path, ips, "first value must match `clusterIP`"))
    elif ips:
        errs.append(invalid(path, ips, "must be empty when `clusterIP` is not specified"))
    seen: set[str] = set()
    for i, family in enumerate(spec.get("ipFamilies") or ()):
        if family not in IP_FAMILIES:
            errs.append(not_supported(f"spec.ipFamilies[{i}]", family, IP_FAMILIES))
        if family in seen:
            errs.append(duplicate(f"spec.ipFamilies[{i}]", family))
        seen.add(family)
    policy = spec.get("ipFamilyPolicy")
    if policy is not None and policy not in IP_FAMILY_POLICIES:
        errs.append(not_supported("spec.ipFamilyPolicy", policy, IP_FAMILY_POLICIES))
    bad = False
    for i, ip in enumerate(ips):
        if i == 0 and ip == "None":
            if len(ips) > 1:
                bad = True
                errs.append(invalid(path, ips, "'None' must be the first and only value"))
            continue
        found = is_valid_ip(f"{path}[{i}]", ip)
        bad = bad or bool(found)
        errs += found
    if len(ips) > 2:
        errs.append(invalid(path, ips, "may only hold up to 2 values"))
    if bad:
        return errs
    if len(ips) > 1 and len({_ip_version(ip) for ip in ips}) != len(ips):
        errs.append(invalid(path, ips, "may specify no more than one IP for each IP family"))
    if not _headless(spec):
        for i, (ip, family) in enumerate(zip(ips, spec.get("ipFamilies") or (), strict=False)):
            version = _ip_version(ip)
            if family == "IPv4" and version == 6:
                errs.append(invalid(f"{path}[{i}]", ip, f"expected an IPv4 value as indicated by `ipFamilies[{i}]`"))
            if family == "IPv6" and version != 6:
                errs.append(invalid(f"{path}[{i}]", ip, f"expected an IPv6 value as indicated by `ipFamilies[{i}]`"))
    return errs


def _external_name(spec: Obj) -> list[FieldError]:
    errs: list[FieldError] = []
    if spec.get("clusterIPs"):
        errs.append(forbidden("spec.clusterIPs", "may not be set for ExternalName services"))
    if spec.get("ipFamilies"):
        errs.append(forbidden("spec.ipFamilies", "may not be set for ExternalName services"))
    if spec.get("ipFamilyPolicy") is not None:
        errs.append(forbidden("spec.ipFamilyPolicy", "may not be set for ExternalName services"))
    name = (spec.get("externalName") or "").removesuffix(".")
    if name:
        errs += [invalid("spec.externalName", name, msg) for msg in is_dns1123_subdomain(name)]
    else:
        errs.append(required("spec.externalName"))
    return errs


def _traffic_policy(spec: Obj) -> list[FieldError]:
    kind = spec.get("type") or "ClusterIP"
    exposed = kind in ("LoadBalancer", "NodePort") or (kind == "ClusterIP" and bool(spec.get("externalIPs")))
    policy = spec.get("externalTrafficPolicy")
    if not exposed:
        if policy:
            return [invalid("spec.externalTrafficPolicy", policy, "may only be set for externally-accessible services")]
        return []
    if policy and policy not in TRAFFIC_POLICIES:
        return [not_supported("spec.externalTrafficPolicy", policy, TRAFFIC_POLICIES)]
    return []


def validate_service(svc: Obj) -> list[FieldError]:
    """ValidateService, minus the metadata (checked by the caller)."""
    spec = svc.get("spec") or {}
    kind = spec.get("type")
    ports = spec.get("ports") or []
    errs: list[FieldError] = []
    if not ports and not _headless(spec) and kind != "ExternalName":
        errs.append(required("spec.ports"))
    if kind in ("LoadBalancer", "NodePort") and _headless(spec):
        errs.append(invalid("spec.clusterIPs[0]", "None", f"may not be set to 'None' for {kind} services"))
    elif kind == "ExternalName":
        errs += _external_name(spec)
    names: set[str] = set()
    for i, port in enumerate(ports):
        errs += _port(port, len(ports) > 1, names, f"spec.ports[{i}]")
    if spec.get("selector") is not None:
        errs += validate_labels(spec["selector"], "spec.selector")
    affinity = spec.get("sessionAffinity")
    if affinity == "":
        errs.append(required("spec.sessionAffinity"))
    elif affinity is not None and affinity not in AFFINITIES:
        errs.append(not_supported("spec.sessionAffinity", affinity, AFFINITIES))
    if affinity == "None" and spec.get("sessionAffinityConfig") is not None:
        errs.append(forbidden("spec.sessionAffinityConfig", "must not be set when session affinity is None"))
    errs += _cluster_ips(spec)
    for i, ip in enumerate(spec.get("externalIPs") or ()):
        found = is_valid_ip(f"spec.externalIPs[{i}]", ip)
        errs += found or validate_non_special_ip(ip, f"spec.externalIPs[{i}]")
    if kind == "":
        errs.append(required("spec.type"))
    elif kind is not None and kind not in TYPES:
        errs.append(not_supported("spec.type", kind, TYPES))
    if kind in (None, "ClusterIP"):
        errs += [forbidden(f"spec.ports[{i}].nodePort", "may not be used when `type` is 'ClusterIP'")
                 for i, port in enumerate(ports) if port.get("nodePort")]
    node_ports: set[tuple[str, int]] = set()
    for i, port in enumerate(ports):
        if port.get("nodePort"):
            key = (port.get("protocol") or "TCP", port["nodePort"])
            if key in node_ports:
                errs.append(duplicate(f"spec.ports[{i}].nodePort", port["nodePort"]))
            node_ports.add(key)
    seen: set[tuple[str, int]] = set()
    for i, port in enumerate(ports):
        key = (port.get("protocol") or "TCP", port.get("port") or 0)
        if key in seen:
            errs.append(raw("FieldValueDuplicate", f"spec.ports[{i}]", _go_service_port(*key)))
        seen.add(key)
    if kind != "LoadBalancer" and spec.get("allocateLoadBalancerNodePorts") is not None:
        errs.append(forbidden("spec.allocateLoadBalancerNodePorts", "may only be used when `type` is 'LoadBalancer'"))
    errs += _traffic_policy(spec)
    return errs


def _cluster_ips_update(new: Obj, old: Obj) -> list[FieldError]:
    """The primary clusterIP never changes; a secondary may be added, or released with SingleStack."""
    if "ExternalName" in (new.get("type"), old.get("type")) or (_headless(new) and _headless(old)):
        return []
    path = "spec.clusterIPs"
    ips, before = _ips(new), _ips(old)
    errs: list[FieldError] = []
    if len(before) == len(ips):
        errs += [invalid(f"{path}[{i}]", ips, "may not change once set") for i, ip in enumerate(before) if ip != ips[i]]
    elif len(before) > len(ips):
        if not ips:
            errs.append(invalid(f"{path}[0]", ips, "primary clusterIP can not be unset"))
        elif ips[0] != before[0]:
            errs.append(invalid(f"{path}[0]", ips, "may not change once set"))
        if len(ips) == 1 and new.get("ipFamilyPolicy") != "SingleStack":
            errs.append(invalid(f"{path}[0]", ips,
                                "`ipFamilyPolicy` must be set to 'SingleStack' when releasing the secondary clusterIP"))
    elif before and ips[0] != before[0]:
        errs.append(invalid(f"{path}[0]", ips, "may not change once set"))
    return errs


def validate_service_update(new: Obj, old: Obj) -> list[FieldError]:
    """ValidateServiceUpdate minus metadata: clusterIPs keep their primary, then the full create rules."""
    return _cluster_ips_update(new.get("spec") or {}, old.get("spec") or {}) + validate_service(new)


IP_MODES = ("Proxy", "VIP")


def validate_load_balancer_status(status: Obj, spec: Obj, path: str = "status.loadBalancer") -> list[FieldError]:
    """ValidateLoadBalancerStatus: ingress points only on a LoadBalancer Service (AllowServiceLBStatusOnNonLB
    is locked off in v1.32), each with a valid IP and ipMode (required with an IP) or a DNS hostname."""
    ingress = (status or {}).get("ingress") or []
    if ingress and (spec or {}).get("type") != "LoadBalancer":
        return [forbidden(f"{path}.ingress", "may only be used when `spec.type` is 'LoadBalancer'")]
    errs: list[FieldError] = []
    for i, point in enumerate(ingress):
        at = f"{path}.ingress[{i}]"
        point = point or {}
        ip, mode, hostname = point.get("ip") or "", point.get("ipMode"), point.get("hostname") or ""
        if ip:
            errs += is_valid_ip(f"{at}.ip", ip)
        if mode is None:
            if ip:
                errs.append(required(f"{at}.ipMode", "must be specified when `ip` is set"))
        elif not ip:
            errs.append(forbidden(f"{at}.ipMode", "may not be specified when `ip` is not set"))
        elif mode not in IP_MODES:
            errs.append(not_supported(f"{at}.ipMode", mode, IP_MODES))
        if hostname:
            errs += [invalid(f"{at}.hostname", hostname, msg) for msg in is_dns1123_subdomain(hostname)]
            if parse_ip(hostname) is not None:
                errs.append(invalid(f"{at}.hostname", hostname, "must be a DNS name, not an IP address"))
    return errs


def default_ingress_ip_mode(svc: Obj) -> None:
    """SetDefaults_Service: a LoadBalancer Service's ingress points with an IP get ipMode VIP."""
    if (svc.get("spec") or {}).get("type") != "LoadBalancer":
        return
    for point in ((svc.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []:
        if isinstance(point, dict) and point.get("ip") and point.get("ipMode") is None:
            point["ipMode"] = "VIP"


def validate_service_status_update(new: Obj, old: Obj) -> list[FieldError]:
    """ValidateServiceStatusUpdate minus metadata: the load-balancer status against the Service's type."""
    return validate_load_balancer_status((new.get("status") or {}).get("loadBalancer") or {}, new.get("spec") or {})
