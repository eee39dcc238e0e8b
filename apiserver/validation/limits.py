"""LimitRange, as upstream's ValidateLimitRange checks it: limit types, resource names, and the order
min <= defaultRequest <= default <= max with maxLimitRequestRatio at least 1 and at most max/min."""

from __future__ import annotations

import math
from typing import Any

from mini_kube.apiserver.errors import GoText
from mini_kube.apiserver.validation.errs import FieldError, duplicate, each, forbidden, invalid, required
from mini_kube.apiserver.validation.pods import overcommit_allowed, validate_resource_name
from mini_kube.machinery.names import is_qualified_name
from mini_kube.machinery.quantity import Quantity, go_quantity, parse_quantity

Obj = dict[str, Any]
LIMIT_TYPES = ("Pod", "Container", "PersistentVolumeClaim")
STANDARD_RESOURCES = frozenset((
    "cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory", "requests.ephemeral-storage",
    "limits.cpu", "limits.memory", "limits.ephemeral-storage", "pods", "services", "replicationcontrollers",
    "resourcequotas", "secrets", "persistentvolumeclaims", "storage", "requests.storage", "services.nodeports",
    "services.loadbalancers", "configmaps"))
MAX_MILLI = 2**63 // 1000
SECTIONS = ("max", "min", "default", "defaultRequest", "maxLimitRequestRatio")


def _type_name(value: str, path: str) -> list[FieldError]:
    errs = each(path, value, is_qualified_name(value))
    if not errs and "/" not in value and value not in LIMIT_TYPES:
        errs.append(invalid(path, value, "must be a standard limit type or fully qualified"))
    return errs


def _resource(limit_type: str, name: str, path: str) -> list[FieldError]:
    if limit_type in ("Pod", "Container"):
        return validate_resource_name(name, path)
    errs = each(path, name, is_qualified_name(name))
    standard = name in STANDARD_RESOURCES or name.startswith(("hugepages-", "requests.hugepages-"))
    if not errs and "/" not in name and not standard:
        errs.append(invalid(path, name, "must be a standard resource type or fully qualified"))
    return errs


def _bad(path: str, raw: Any, detail: str) -> FieldError:
    return invalid(path, GoText(go_quantity(raw)), detail)


def _milli(quantity: Quantity) -> int:
    return math.ceil(quantity.value * 1000)  # MilliValue rounds up


def _ratio_limit(ratio: Quantity, low: Quantity, high: Quantity) -> tuple[float, float]:
    """(ratio, max/min) as upstream compares them: in milli-units when all three fit."""
    values = (math.ceil(ratio.value), math.ceil(low.value), math.ceil(high.value))
    if all(v < MAX_MILLI for v in values):
        return _milli(ratio) / 1000, float(_milli(high)) / float(_milli(low)) if _milli(low) else float("inf")
    return float(values[0]), float(values[2]) / float(values[1]) if values[1] else float("inf")


def _order(item: Obj, key: str, path: str) -> list[FieldError]:
    raw = {s: (item.get(s) or {}).get(key) for s in SECTIONS}
    q = {s: parse_quantity(v) if v is not None else None for s, v in raw.items()}
    low, high, dflt, request, ratio = (q[s] for s in ("min", "max", "default", "defaultRequest",
                                                      "maxLimitRequestRatio"))
    errs: list[FieldError] = []
    if low and high and low.value > high.value:
        errs.append(_bad(f"{path}.min[{key}]", raw["min"], f"min value {low} is greater than max value {high}"))
    if request and low and low.value > request.value:
        errs.append(_bad(f"{path}.defaultRequest[{key}]", raw["defaultRequest"],
                         f"min value {low} is greater than default request value {request}"))
    if request and high and request.value > high.value:
        errs.append(_bad(f"{path}.defaultRequest[{key}]", raw["defaultRequest"],
                         f"default request value {request} is greater than max value {high}"))
    if request and dflt and request.value > dflt.value:
        errs.append(_bad(f"{path}.defaultRequest[{key}]", raw["defaultRequest"],
                         f"default request value {request} is greater than default limit value {dflt}"))
    if dflt and low and low.value > dflt.value:
        errs.append(_bad(f"{path}.default[{key}]", raw["min"], f"min value {low} is greater than default value {dflt}"))
    if dflt and high and dflt.value > high.value:
        errs.append(_bad(f"{path}.default[{key}]", raw["max"],
                         f"default value {dflt} is greater than max value {high}"))
    if ratio and ratio.value < 1:
        errs.append(_bad(f"{path}.maxLimitRequestRatio[{key}]", raw["maxLimitRequestRatio"],
                         f"ratio {ratio} is less than 1"))
    if ratio and low and high:
        value, limit = _ratio_limit(ratio, low, high)
        if value > limit:
            errs.append(_bad(f"{path}.maxLimitRequestRatio[{key}]", raw["maxLimitRequestRatio"],
                             f"ratio {ratio} is greater than max/min = {limit:f}"))
    if not overcommit_allowed(key) and dflt and request and dflt.value != request.value:
        errs.append(_bad(f"{path}.defaultRequest[{key}]", raw["defaultRequest"],
                         f"default value {dflt} must equal to defaultRequest value {request} in {key}"))
    return errs


def validate_limit_range(obj: Obj) -> list[FieldError]:
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, item in enumerate((obj.get("spec") or {}).get("limits") or ()):
        at = f"spec.limits[{i}]"
        kind = item.get("type") or ""
        errs += _type_name(kind, f"{at}.type")
        if kind in seen:
            errs.append(duplicate(f"{at}.type", kind))
        seen.add(kind)
        sections = ["max", "min"]
        if kind == "Pod":
            errs += [forbidden(f"{at}.{s}", "may not be specified when `type` is 'Pod'")
                     for s in ("default", "defaultRequest") if item.get(s)]
        else:
            sections += ["default", "defaultRequest"]
        for section in sections:
            for name in item.get(section) or {}:
                errs += _resource(kind, name, f"{at}.{section}[{name}]")
        if kind == "PersistentVolumeClaim" and not ((item.get("min") or {}).get("storage") is not None
                                                     or (item.get("max") or {}).get("storage") is not None):
            errs.append(required(f"{at}.limits", "either minimum or maximum storage value is required, but neither "
                                                 "was provided"))
        for name in item.get("maxLimitRequestRatio") or {}:
            errs += _resource(kind, name, f"{at}.maxLimitRequestRatio[{name}]")
        checked = {s: item.get(s) or {} for s in SECTIONS if s in sections or s == "maxLimitRequestRatio"}
        for key in sorted({k for section in checked.values() for k in section}):
            errs += _order({s: checked.get(s) for s in SECTIONS}, key, at)
    return errs
