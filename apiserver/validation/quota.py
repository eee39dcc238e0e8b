"""ResourceQuota, as upstream's ValidateResourceQuota, ValidateResourceQuotaUpdate and
ValidateResourceQuotaStatusUpdate check it: resource names a quota can track, non-negative (and for counts
whole) amounts, scopes and scope selectors that fit the tracked resources, and scopes fixed once created."""

from __future__ import annotations

from typing import Any

from mini_kube.apiserver.errors import FieldError, GoText, invalid, required
from mini_kube.apiserver.gofmt import go_quote
from mini_kube.apiserver.validation.errs import IMMUTABLE, each
from mini_kube.apiserver.validation.pods import validate_resource_quantity
from mini_kube.machinery.names import is_qualified_name

Obj = dict[str, Any]
STANDARD_RESOURCES = frozenset((
    "cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory", "requests.ephemeral-storage",
    "limits.cpu", "limits.memory", "limits.ephemeral-storage", "pods", "resourcequotas", "services",
    "replicationcontrollers", "secrets", "configmaps", "persistentvolumeclaims", "storage", "requests.storage",
    "services.nodeports", "services.loadbalancers"))
QUOTA_RESOURCES = STANDARD_RESOURCES - {"storage"}
HUGEPAGES = ("hugepages-", "requests.hugepages-")
SCOPES = ("Terminating", "NotTerminating", "BestEffort", "NotBestEffort", "PriorityClass", "CrossNamespacePodAffinity")
POD_COUNT = frozenset(("pods",))
POD_COMPUTE = frozenset(("cpu", "memory", "limits.cpu", "limits.memory", "requests.cpu", "requests.memory"))
EXISTS_ONLY = ("BestEffort", "NotBestEffort", "Terminating", "NotTerminating", "CrossNamespacePodAffinity")
CONFLICTS = (("BestEffort", "NotBestEffort"), ("Terminating", "NotTerminating"))


def is_quota_resource(name: str) -> bool:
    """IsStandardQuotaResourceName."""
    return name in QUOTA_RESOURCES or name.startswith(HUGEPAGES)


def validate_quota_resource_name(name: str, path: str) -> list[FieldError]:
    """ValidateResourceQuotaResourceName: qualified; a standard resource unless it has a domain."""
    errs = each(path, name, is_qualified_name(name))
    if "/" in name:
        return errs
    if not errs and name not in STANDARD_RESOURCES and not name.startswith(HUGEPAGES):
        errs.append(invalid(path, name, "must be a standard resource type or fully qualified"))
    if not is_quota_resource(name):
        errs.append(invalid(path, name, "must be a standard resource for quota"))
    return errs


def scope_valid_for(scope: str, resource: str) -> bool:
    """IsResourceQuotaScopeValidForResource."""
    if scope in ("Terminating", "NotTerminating", "NotBestEffort", "PriorityClass", "CrossNamespacePodAffinity"):
        return resource in POD_COUNT or resource in POD_COMPUTE
    if scope == "BestEffort":
        return resource in POD_COUNT
    return True


def _amounts(values: Obj | None, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for name, value in (values or {}).items():
        at = f"{path}[{name}]"
        errs += validate_quota_resource_name(name, at) + validate_resource_quantity(name, value, at)
    return errs


def _go_scopes(scopes: list[Any]) -> GoText:
    return GoText("[]core.ResourceQuotaScope{" + ", ".join(go_quote(str(s)) for s in scopes) + "}")


def _go_selector(selector: Obj) -> GoText:
    parts = []
    for req in selector.get("matchExpressions") or ():
        values = "[]string(nil)" if not req.get("values") else \
            "[]string{" + ", ".join(go_quote(str(v)) for v in req["values"]) + "}"
        parts.append(f'core.ScopedResourceSelectorRequirement{{ScopeName:{go_quote(str(req.get("scopeName") or ""))}, '
                     f'Operator:{go_quote(str(req.get("operator") or ""))}, Values:{values}}}')
    return GoText("core.ScopeSelector{MatchExpressions:[]core.ScopedResourceSelectorRequirement{"
                  + ", ".join(parts) + "}}")


def _scopes(spec: Obj, hard: list[str]) -> list[FieldError]:
    scopes = list(spec.get("scopes") or ())
    if not scopes:
        return []
    errs: list[FieldError] = []
    for scope in scopes:
        if scope not in SCOPES:
            errs.append(invalid("spec.scopes", _go_scopes(scopes), "unsupported scope"))
        errs += [invalid("spec.scopes", _go_scopes(scopes), "unsupported scope applied to resource")
                 for name in sorted(hard) if is_quota_resource(name) and not scope_valid_for(scope, name)]
    errs += [invalid("spec.scopes", _go_scopes(scopes), "conflicting scopes")
             for pair in CONFLICTS if set(pair) <= set(scopes)]
    return errs


def _scope_selector(spec: Obj, hard: list[str]) -> list[FieldError]:
    selector = spec.get("scopeSelector")
    if selector is None:
        return []
    path = "spec.scopeSelector.matchExpressions"
    errs: list[FieldError] = []
    seen: set[str] = set()
    for req in selector.get("matchExpressions") or ():
        scope, op, values = req.get("scopeName") or "", req.get("operator") or "", req.get("values") or []
        if scope not in SCOPES:
            errs.append(invalid(f"{path}.scopeName", scope, "unsupported scope"))
        errs += [invalid(path, _go_selector(selector), "unsupported scope applied to resource")
                 for name in sorted(hard) if is_quota_resource(name) and not scope_valid_for(scope, name)]
        if scope in EXISTS_ONLY and op != "Exists":
            errs.append(invalid(f"{path}.operator", op, "must be 'Exists' when scope is any of "
                                "ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, "
                                "ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or "
                                "ResourceQuotaScopeCrossNamespacePodAffinity"))
        if op in ("In", "NotIn"):
            if not values:
                errs.append(required(f"{path}.values", "must be at least one value when `operator` is 'In' or "
                                                       "'NotIn' for scope selector"))
        elif op in ("Exists", "DoesNotExist"):
            if values:
                errs.append(invalid(f"{path}.values", values, "must be no value when `operator` is 'Exist' or "
                                                              "'DoesNotExist' for scope selector"))
        else:
            errs.append(invalid(f"{path}.operator", op, "not a valid selector operator"))
        seen.add(scope)
    scopes = list(spec.get("scopes") or ())
    errs += [invalid(path, GoText("[]core.ResourceQuotaScope(nil)") if not scopes else _go_scopes(scopes),
                     "conflicting scopes") for pair in CONFLICTS if set(pair) <= seen]
    return errs


def validate_resource_quota_spec(spec: Obj) -> list[FieldError]:
    hard = list((spec.get("hard") or {}).keys())
    return _amounts(spec.get("hard"), "spec.hard") + _scopes(spec, hard) + _scope_selector(spec, hard)


def validate_resource_quota_status(status: Obj | None) -> list[FieldError]:
    status = status or {}
    return _amounts(status.get("hard"), "status.hard") + _amounts(status.get("used"), "status.used")


def validate_resource_quota(obj: Obj) -> list[FieldError]:
    return validate_resource_quota_spec(obj.get("spec") or {}) + validate_resource_quota_status(obj.get("status"))


def validate_resource_quota_update(new: Obj, old: Obj) -> list[FieldError]:
    """The spec as on create, its scopes unchanged; the status (what a /status write changes) as on create."""
    spec = new.get("spec") or {}
    errs = validate_resource_quota_spec(spec)
    scopes, was = spec.get("scopes") or [], (old.get("spec") or {}).get("scopes") or []
    if set(scopes) != set(was):
        errs.append(invalid("spec.scopes", _go_scopes(scopes) if scopes else GoText("[]core.ResourceQuotaScope(nil)"),
                            IMMUTABLE))
    return errs + validate_resource_quota_status(new.get("status"))
