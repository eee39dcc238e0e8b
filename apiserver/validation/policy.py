"""Ingress, NetworkPolicy, HorizontalPodAutoscaler and PodDisruptionBudget rules."""

from __future__ import annotations

from typing import Any

from mini_kube.apiserver.validation.errs import (
    FieldError,
    each,
    forbidden,
    invalid,
    not_supported,
    raw,
    required,
)
from mini_kube.apiserver.validation.meta import validate_label_selector
from mini_kube.apiserver.validation.metrics import validate_metrics
from mini_kube.apiserver.validation.network import (
    is_valid_cidr,
    parse_ip,
    validate_port_num_or_name,
    validate_protocol,
)
from mini_kube.apiserver.validation.workloads import at_most_100, int_or_percent
from mini_kube.machinery.names import (
    is_dns1123_subdomain,
    is_valid_port_name,
    is_valid_port_num,
    is_wildcard_dns1123_subdomain,
    name_is_dns1035_label,
    path_segment_name,
)

Obj = dict[str, Any]
PATH_TYPES = ("Exact", "ImplementationSpecific", "Prefix")
BAD_SEQUENCES = ("//", "/./", "/../", "%2f", "%2F")
BAD_SUFFIXES = ("/..", "/.")


def _backend(backend: Obj, path: str) -> list[FieldError]:
    service, resource = backend.get("service"), backend.get("resource")
    if service is not None and resource is not None:
        return [invalid(path, "", "cannot set both resource and service backends")]
    if resource is not None:
        errs: list[FieldError] = [] if resource.get("kind") else [required(f"{path}.resource.kind")]
        return errs + ([] if resource.get("name") else [required(f"{path}.resource.name")])
    if service is None:
        return [invalid(path, "", "resource or service backend is required")]
    errs = []
    name = service.get("name") or ""
    if not name:
        errs.append(required(f"{path}.service.name"))
    else:
        errs += each(f"{path}.service.name", name, name_is_dns1035_label(name, False))
    port = service.get("port") or {}
    port_name, number = port.get("name") or "", port.get("number") or 0
    if port_name and number:
        errs.append(invalid(path, "", "cannot set both port name & port number"))
    elif port_name:
        errs += each(f"{path}.service.port.name", port_name, is_valid_port_name(port_name))
    elif number:
        errs += each(f"{path}.service.port.number", number, is_valid_port_num(number))
    else:
        errs.append(required(path, "port name or number is required"))
    return errs


def _http_path(item: Obj, path: str) -> list[FieldError]:
    kind = item.get("pathType")
    if kind is None:
        return [required(f"{path}.pathType", "pathType must be specified")]
    value = item.get("path") or ""
    errs: list[FieldError] = []
    if kind in ("Exact", "Prefix"):
        if not value.startswith("/"):
            errs.append(invalid(f"{path}.path", value, "must be an absolute path"))
        if value:
            errs += [invalid(f"{path}.path", value, f"must not contain '{s}'") for s in BAD_SEQUENCES if s in value]
            errs += [invalid(f"{path}.path", value, f"cannot end with '{s}'") for s in BAD_SUFFIXES if value.endswith(s)]
    elif kind == "ImplementationSpecific":
        if value and not value.startswith("/"):
            errs.append(invalid(f"{path}.path", value, "must be an absolute path"))
    else:
        errs.append(not_supported(f"{path}.pathType", kind, PATH_TYPES))
    return errs + _backend(item.get("backend") or {}, f"{path}.backend")


def validate_ingress(obj: Obj) -> list[FieldError]:
    spec = obj.get("spec") or {}
    rules = spec.get("rules") or []
    errs: list[FieldError] = []
    if spec.get("defaultBackend") is not None:
        errs += _backend(spec["defaultBackend"], "spec.defaultBackend")
    elif not rules:
        errs.append(raw("FieldValueInvalid", "spec", "[]networking.IngressRule(nil)",
                        "either `defaultBackend` or `rules` must be specified"))
    for i, rule in enumerate(rules):
        at = f"spec.rules[{i}]"
        host = rule.get("host") or ""
        if host:
            if parse_ip(host) is not None:
                errs.append(invalid(f"{at}.host", host, "must be a DNS name, not an IP address"))
            checks = is_wildcard_dns1123_subdomain(host) if "*" in host else is_dns1123_subdomain(host)
            errs += each(f"{at}.host", host, checks)
        http = rule.get("http")
        if http is not None:
            paths = http.get("paths") or []
            if not paths:
                errs.append(required(f"{at}.http.paths"))
            for j, item in enumerate(paths):
                errs += _http_path(item, f"{at}.http.paths[{j}]")
    for i, tls in enumerate(spec.get("tls") or ()):
        for j, host in enumerate(tls.get("hosts") or ()):
            checks = is_wildcard_dns1123_subdomain(host) if "*" in host else is_dns1123_subdomain(host)
            errs += each(f"spec.tls[{i}].hosts[{j}]", host, checks)
    if spec.get("ingressClassName") is not None:
        errs += each("spec.ingressClassName", spec["ingressClassName"],
                     is_dns1123_subdomain(spec["ingressClassName"]))
    return errs


def _policy_ports(ports: list[Obj], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, port in enumerate(ports):
        at = f"{path}[{i}]"
        errs += validate_protocol(port.get("protocol"), f"{at}.protocol")
        if port.get("port") is not None:
            errs += validate_port_num_or_name(port["port"], f"{at}.port")
        end = port.get("endPort")
        if end is not None:
            if isinstance(port.get("port"), str):
                errs.append(invalid(f"{at}.endPort", end, "may not be specified when `port` is non-numeric"))
            elif port.get("port") is None:
                errs.append(invalid(f"{at}.endPort", end, "may not be specified when `port` is not specified"))
            elif end < port["port"]:
                errs.append(invalid(f"{at}.endPort", end, "must be greater than or equal to `port`"))
    return errs


def _peers(peers: list[Obj], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, peer in enumerate(peers):
        at = f"{path}[{i}]"
        kinds = [k for k in ("podSelector", "namespaceSelector", "ipBlock") if peer.get(k) is not None]
        for key in ("podSelector", "namespaceSelector"):
            errs += validate_label_selector(peer.get(key), f"{at}.{key}")
        block = peer.get("ipBlock")
        if block is not None:
            cidr = block.get("cidr") or ""
            if not cidr:
                errs.append(required(f"{at}.ipBlock.cidr"))
            else:
                errs += is_valid_cidr(f"{at}.ipBlock.cidr", cidr)
            for j, excluded in enumerate(block.get("except") or ()):
                errs += is_valid_cidr(f"{at}.ipBlock.except[{j}]", excluded)
        if not kinds:
            errs.append(required(at, "must specify a peer"))
        elif "ipBlock" in kinds and len(kinds) > 1:
            errs.append(forbidden(at, "may not specify both ipBlock and another peer"))
    return errs


def validate_network_policy(obj: Obj) -> list[FieldError]:
    spec = obj.get("spec") or {}
    errs = validate_label_selector(spec.get("podSelector") or {}, "spec.podSelector")
    for direction, peers in (("ingress", "from"), ("egress", "to")):
        for i, rule in enumerate(spec.get(direction) or ()):
            at = f"spec.{direction}[{i}]"
            errs += _policy_ports(rule.get("ports") or [], f"{at}.ports")
            errs += _peers(rule.get(peers) or [], f"{at}.{peers}")
    types = spec.get("policyTypes") or []
    for i, kind in enumerate(types):
        if kind not in ("Ingress", "Egress"):
            errs.append(not_supported(f"spec.policyTypes[{i}]", kind, ("Egress", "Ingress")))
    if len(types) > 2:
        errs.append(invalid("spec.policyTypes", types, "may not specify more than two policyTypes"))
    return errs


MAX_PERIOD_SECONDS, MAX_STABILIZATION_WINDOW_SECONDS = 1800, 3600
SELECT_POLICIES, POLICY_TYPES = ("Disabled", "Max", "Min"), ("Percent", "Pods")


def _scaling_policy(policy: Obj, path: str) -> list[FieldError]:
    kind, value, period = policy.get("type") or "", policy.get("value") or 0, policy.get("periodSeconds") or 0
    errs = [] if kind in POLICY_TYPES else [not_supported(f"{path}.type", kind, POLICY_TYPES)]
    if value <= 0:
        errs.append(invalid(f"{path}.value", value, "must be greater than zero"))
    if period <= 0:
        errs.append(invalid(f"{path}.periodSeconds", period, "must be greater than zero"))
    if period > MAX_PERIOD_SECONDS:
        errs.append(invalid(f"{path}.periodSeconds", period, f"must be less than or equal to {MAX_PERIOD_SECONDS}"))
    return errs


def _scaling_rules(rules: Obj | None, path: str) -> list[FieldError]:
    """validateScalingRules: the stabilization window, selectPolicy, and at least one valid policy."""
    if rules is None:
        return []
    errs: list[FieldError] = []
    window = rules.get("stabilizationWindowSeconds")
    if window is not None and window < 0:
        errs.append(invalid(f"{path}.stabilizationWindowSeconds", window, "must be greater than or equal to zero"))
    if window is not None and window > MAX_STABILIZATION_WINDOW_SECONDS:
        errs.append(invalid(f"{path}.stabilizationWindowSeconds", window,
                            f"must be less than or equal to {MAX_STABILIZATION_WINDOW_SECONDS}"))
    select = rules.get("selectPolicy")
    if select is not None and select not in SELECT_POLICIES:
        errs.append(not_supported(f"{path}.selectPolicy", select, SELECT_POLICIES))
    policies = rules.get("policies") or []
    if not policies:
        errs.append(required(f"{path}.policies", "must specify at least one Policy"))
    for i, policy in enumerate(policies):
        errs += _scaling_policy(policy, f"{path}.policies[{i}]")
    return errs


def validate_horizontal_pod_autoscaler(obj: Obj) -> list[FieldError]:
    spec = obj.get("spec") or {}
    errs: list[FieldError] = []
    minimum, maximum = spec.get("minReplicas"), spec.get("maxReplicas") or 0
    if minimum is not None and minimum < 1:
        errs.append(invalid("spec.minReplicas", minimum, "must be greater than or equal to 1"))
    if maximum < 1:
        errs.append(invalid("spec.maxReplicas", maximum, "must be greater than 0"))
    if minimum is not None and maximum < minimum:
        errs.append(invalid("spec.maxReplicas", maximum, "must be greater than or equal to `minReplicas`"))
    ref = spec.get("scaleTargetRef") or {}
    for key in ("kind", "name"):
        if not ref.get(key):
            errs.append(required(f"spec.scaleTargetRef.{key}"))
        else:
            errs += each(f"spec.scaleTargetRef.{key}", ref[key], path_segment_name(ref[key], False))
    errs += validate_metrics(spec.get("metrics") or [], minimum)
    target = spec.get("targetCPUUtilizationPercentage")
    if target is not None and target < 1:
        errs.append(invalid("spec.targetCPUUtilizationPercentage", target, "must be greater than 0"))
    behavior = spec.get("behavior")
    if behavior is not None:
        errs += _scaling_rules(behavior.get("scaleUp"), "spec.behavior.scaleUp")
        errs += _scaling_rules(behavior.get("scaleDown"), "spec.behavior.scaleDown")
    return errs


def validate_pod_disruption_budget(obj: Obj) -> list[FieldError]:
    spec = obj.get("spec") or {}
    errs: list[FieldError] = []
    low, high = spec.get("minAvailable"), spec.get("maxUnavailable")
    if low is not None and high is not None:
        errs.append(raw("FieldValueInvalid", "spec", "policy.PodDisruptionBudgetSpec{...}",
                        "minAvailable and maxUnavailable cannot be both set"))
    for key, value in (("minAvailable", low), ("maxUnavailable", high)):
        if value is not None:
            errs += int_or_percent(value, f"spec.{key}") + at_most_100(value, f"spec.{key}")
    errs += validate_label_selector(spec.get("selector"), "spec.selector")
    policy = spec.get("unhealthyPodEvictionPolicy")
    if policy is not None and policy not in ("AlwaysAllow", "IfHealthyBudget"):
        errs.append(not_supported("spec.unhealthyPodEvictionPolicy", policy, ("AlwaysAllow", "IfHealthyBudget")))
    return errs
