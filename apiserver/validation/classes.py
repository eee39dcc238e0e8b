"""StorageClass, RuntimeClass and Node taints, as upstream's ValidateStorageClass,
ValidateRuntimeClass and validateNodeTaints check them (the rules a client trips over:
supported values, required fields, name formats)."""

from __future__ import annotations

import ipaddress
import re
from typing import Any

from mini_kube.apiserver.errors import FieldError, forbidden, invalid, not_supported, required
from mini_kube.apiserver.validation.errs import IMMUTABLE, too_long
from mini_kube.apiserver.validation.meta import validate_labels, validate_qualified_name
from mini_kube.apiserver.validation.network import is_valid_cidr
from mini_kube.apiserver.validation.pods import validate_tolerations
from mini_kube.machinery.names import (
    is_dns1123_label,
    is_dns1123_subdomain,
    is_qualified_name,
    is_valid_label_value,
    name_is_dns_label,
    path_segment_name,
    regex_error,
)

Obj = dict[str, Any]
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


def validate_storage_class(obj: Obj) -> list[FieldError]:
    provisioner = obj.get("provisioner") or ""
    errs = [required("provisioner")] if not provisioner else validate_qualified_name(provisioner.lower(),
                                                                                     "provisioner")
    policy = obj.get("reclaimPolicy")
    if policy and policy not in ("Delete", "Retain"):
        errs.append(not_supported("reclaimPolicy", policy, ("Delete", "Retain")))
    mode = obj.get("volumeBindingMode")
    if mode is None:
        errs.append(required("volumeBindingMode"))
    elif mode not in ("Immediate", "WaitForFirstConsumer"):
        errs.append(not_supported("volumeBindingMode", mode, ("Immediate", "WaitForFirstConsumer")))
    return errs


def validate_runtime_class(obj: Obj) -> list[FieldError]:
    handler = obj.get("handler") or ""
    errs = [invalid("handler", handler, problem) for problem in is_dns1123_label(handler)]
    scheduling = obj.get("scheduling") or {}
    errs += validate_labels(scheduling.get("nodeSelector"), "scheduling.nodeSelector")
    return errs + validate_tolerations(scheduling.get("tolerations"), "scheduling.tolerations")


def _pod_cidrs(cidrs: list[str]) -> list[FieldError]:
    """Each of spec.podCIDRs a CIDR, and two at most: one of each IP family (IsDualStackCIDRStrings)."""
    errs: list[FieldError] = []
    for i, cidr in enumerate(cidrs):
        errs += is_valid_cidr(f"spec.podCIDRs[{i}]", cidr)
    if len(cidrs) < 2:
        return errs
    bad = next((c for c in cidrs if is_valid_cidr("", c)), None)
    if bad is not None:
        errs.append(FieldError("InternalError", "spec.podCIDRs", "invalid PodCIDRs. failed to check with dual stack "
                                                                 f"with error:invalid CIDR address: {bad}"))
    families = {ipaddress.ip_network(c, strict=False).version for c in cidrs} if bad is None else set()
    if families != {4, 6} or len(cidrs) > 2:
        errs.append(invalid("spec.podCIDRs", cidrs, "may specify no more than one CIDR for each IP family"))
    return errs


def validate_node(obj: Obj) -> list[FieldError]:
    errs = _pod_cidrs((obj.get("spec") or {}).get("podCIDRs") or [])
    for i, taint in enumerate((obj.get("spec") or {}).get("taints") or ()):
        at = f"spec.taints[{i}]"
        key, value, effect = taint.get("key") or "", taint.get("value") or "", taint.get("effect") or ""
        errs += [invalid(f"{at}.key", key, problem) for problem in is_qualified_name(key)]
        problems = is_valid_label_value(value)
        if problems:
            errs.append(invalid(f"{at}.value", value, ";".join(problems)))
        if not effect:
            errs.append(required(f"{at}.effect"))
        elif effect not in TAINT_EFFECTS:
            errs.append(not_supported(f"{at}.effect", effect, TAINT_EFFECTS))
    return errs


def validate_node_update(new: Obj, old: Obj) -> list[FieldError]:
    """A node's podCIDRs and providerID may only go from unset to set."""
    errs = validate_node(new)
    spec, before = new.get("spec") or {}, old.get("spec") or {}
    cidrs, was = spec.get("podCIDRs") or [], before.get("podCIDRs") or []
    changed = "node updates may not change podCIDR except from \"\" to valid"
    if was and len(was) != len(cidrs):
        errs.append(forbidden("spec.podCIDRs", changed))
    elif was:
        errs += [forbidden("spec.podCIDRs", changed) for a, b in zip(was, cidrs, strict=True) if a != b]
    provider = before.get("providerID") or ""
    if provider and provider != (spec.get("providerID") or ""):
        errs.append(forbidden("spec.providerID", "node updates may not change providerID except from \"\" to valid"))
    return errs


HTTP_PATH_FMT = "[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+"
_HTTP_PATH = re.compile(f"^{HTTP_PATH_FMT}$")
MAX_CONTROLLER_LEN = 250


def is_domain_prefixed_path(path: str, value: str) -> list[FieldError]:
    """IsDomainPrefixedPath: `<DNS subdomain>/<HTTP path>`, as `acme.io/foo`."""
    if not value:
        return [required(path)]
    host, _, rest = value.partition("/")
    if "/" not in value or not host or not rest:
        return [invalid(path, value, 'must be a domain-prefixed path (such as "acme.io/foo")')]
    errs = [invalid(path, host, problem) for problem in is_dns1123_subdomain(host)]
    if not _HTTP_PATH.match(rest):
        errs.append(invalid(path, rest, regex_error("Invalid path", HTTP_PATH_FMT)))
    return errs


def _ingress_class_parameters(params: Obj | None, path: str) -> list[FieldError]:
    if params is None:
        return []
    errs: list[FieldError] = []
    if params.get("apiGroup") is not None:
        errs += [invalid(f"{path}.apiGroup", params["apiGroup"], p) for p in is_dns1123_subdomain(params["apiGroup"])]
    for key in ("kind", "name"):
        value = params.get(key) or ""
        if not value:
            errs.append(required(f"{path}.{key}", f"{key} is required"))
        else:
            errs += [invalid(f"{path}.{key}", value, p) for p in path_segment_name(value, False)]
    scope, namespace = params.get("scope"), params.get("namespace")
    if scope is None:
        return errs + [required(f"{path}.scope")]
    if scope not in ("Cluster", "Namespace"):
        errs.append(not_supported(f"{path}.scope", scope, ("Cluster", "Namespace")))
    elif scope == "Namespace":
        if namespace is None:
            errs.append(required(f"{path}.namespace", "`parameters.scope` is set to 'Namespace'"))
        else:
            errs += [invalid(f"{path}.namespace", namespace, p) for p in name_is_dns_label(namespace, False)]
    elif namespace is not None:
        errs.append(forbidden(f"{path}.namespace", "`parameters.scope` is set to 'Cluster'"))
    return errs


def validate_ingress_class(obj: Obj) -> list[FieldError]:
    spec = obj.get("spec") or {}
    controller = spec.get("controller") or ""
    errs = [too_long("spec.controller", MAX_CONTROLLER_LEN)] if len(controller) > MAX_CONTROLLER_LEN else []
    errs += is_domain_prefixed_path("spec.controller", controller)
    return errs + _ingress_class_parameters(spec.get("parameters"), "spec.parameters")


def validate_ingress_class_update(new: Obj, old: Obj) -> list[FieldError]:
    controller = (new.get("spec") or {}).get("controller") or ""
    same = controller == ((old.get("spec") or {}).get("controller") or "")
    return ([] if same else [invalid("spec.controller", controller, IMMUTABLE)]) + validate_ingress_class(new)
