"""StorageClass, RuntimeClass, Node taints and ResourceQuota amounts, as upstream's ValidateStorageClass,
ValidateRuntimeClass, validateNodeTaints and ValidateResourceQuotaSpec check them (the rules a client trips over:
supported values, required fields, name formats, non-negative and whole amounts)."""

from __future__ import annotations

import ipaddress
from typing import Any

from mini_kube.apiserver.errors import FieldError, forbidden, invalid, not_supported, required
from mini_kube.apiserver.validation.meta import validate_labels, validate_qualified_name
from mini_kube.apiserver.validation.names import is_dns1123_label, is_qualified_name, is_valid_label_value
from mini_kube.apiserver.validation.network import is_valid_cidr
from mini_kube.apiserver.validation.pods import _quantity, _tolerations

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
    return errs + _tolerations(scheduling.get("tolerations"), "scheduling.tolerations")


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


def validate_resource_quota(obj: Obj) -> list[FieldError]:
    errs: list[FieldError] = []
    for section in ("spec", "status"):
        for key in ("hard", "used") if section == "status" else ("hard",):
            for name, value in ((obj.get(section) or {}).get(key) or {}).items():
                errs += _quantity(name, value, f"{section}.{key}[{name}]")
    return errs
