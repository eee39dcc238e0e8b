"""RBAC: policy rules need verbs (and groups and resources, or non-resource URLs); bindings need a valid roleRef."""

from __future__ import annotations

from typing import Any

from mini_kube.apiserver.validation.errs import FieldError, each, invalid, not_supported, raw, required
from mini_kube.apiserver.validation.meta import validate_label_selector
from mini_kube.machinery.names import name_is_dns_subdomain, path_segment_name

Obj = dict[str, Any]
GROUP = "rbac.authorization.k8s.io"


def validate_policy_rule(rule: Obj, namespaced: bool, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    if not rule.get("verbs"):
        errs.append(required(f"{path}.verbs", "verbs must contain at least one value"))
    urls = rule.get("nonResourceURLs") or []
    if urls:
        if namespaced:
            errs.append(invalid(f"{path}.nonResourceURLs", urls, "namespaced rules cannot apply to non-resource URLs"))
        if rule.get("apiGroups") or rule.get("resources") or rule.get("resourceNames"):
            errs.append(invalid(f"{path}.nonResourceURLs", urls,
                                "rules cannot apply to both regular resources and non-resource URLs"))
        return errs
    if not rule.get("apiGroups"):
        errs.append(required(f"{path}.apiGroups", "resource rules must supply at least one api group"))
    if not rule.get("resources"):
        errs.append(required(f"{path}.resources", "resource rules must supply at least one resource"))
    return errs


def validate_role(obj: Obj) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, rule in enumerate(obj.get("rules") or ()):
        errs += validate_policy_rule(rule, True, f"rules[{i}]")
    return errs


def validate_cluster_role(obj: Obj) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, rule in enumerate(obj.get("rules") or ()):
        errs += validate_policy_rule(rule, False, f"rules[{i}]")
    aggregation = obj.get("aggregationRule")
    if aggregation is not None:
        selectors = aggregation.get("clusterRoleSelectors") or []
        if not selectors:
            errs.append(required("aggregationRule.clusterRoleSelectors",
                                 "at least one clusterRoleSelector required if aggregationRule is non-nil"))
        for i, selector in enumerate(selectors):
            errs += validate_label_selector(selector, f"aggregationRule.clusterRoleSelectors[{i}]")
    return errs


def validate_subject(subject: Obj, namespaced: bool, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    name, kind = subject.get("name") or "", subject.get("kind") or ""
    if not name:
        errs.append(required(f"{path}.name"))
    api_group = subject.get("apiGroup")
    if kind == "ServiceAccount":
        if name:
            errs += each(f"{path}.name", name, name_is_dns_subdomain(name, False))
        if api_group:
            errs.append(not_supported(f"{path}.apiGroup", api_group, ("",)))
        if not namespaced and not subject.get("namespace"):
            errs.append(required(f"{path}.namespace"))
    elif kind in ("User", "Group"):
        if api_group is not None and api_group != GROUP:
            errs.append(not_supported(f"{path}.apiGroup", api_group, (GROUP,)))
    else:
        errs.append(not_supported(f"{path}.kind", kind, ("ServiceAccount", "User", "Group")))
    return errs


def _binding(obj: Obj, namespaced: bool, kinds: tuple[str, ...]) -> list[FieldError]:
    ref = obj.get("roleRef") or {}
    errs: list[FieldError] = []
    if ref.get("apiGroup") is not None and ref["apiGroup"] != GROUP:
        errs.append(not_supported("roleRef.apiGroup", ref["apiGroup"], (GROUP,)))
    if ref.get("kind") not in kinds:
        errs.append(not_supported("roleRef.kind", ref.get("kind") or "", kinds))
    name = ref.get("name") or ""
    if not name:
        errs.append(required("roleRef.name"))
    else:
        errs += each("roleRef.name", name, path_segment_name(name, False))
    for i, subject in enumerate(obj.get("subjects") or ()):
        errs += validate_subject(subject, namespaced, f"subjects[{i}]")
    return errs


def validate_role_binding(obj: Obj) -> list[FieldError]:
    return _binding(obj, True, ("Role", "ClusterRole"))


def validate_cluster_role_binding(obj: Obj) -> list[FieldError]:
    return _binding(obj, False, ("ClusterRole",))


def _go_role_ref(ref: Obj) -> str:
    return (f'rbac.RoleRef{{APIGroup:"{ref.get("apiGroup") or GROUP}", Kind:"{ref.get("kind", "")}", '
            f'Name:"{ref.get("name", "")}"}}')


def validate_binding_update(new: Obj, old: Obj) -> list[FieldError]:
    """roleRef can never change (delete and recreate the binding instead)."""
    ref, before = new.get("roleRef") or {}, old.get("roleRef") or {}
    same = all((ref.get(k) or (GROUP if k == "apiGroup" else "")) == (before.get(k) or (GROUP if k == "apiGroup"
                                                                                        else ""))
               for k in ("apiGroup", "kind", "name"))
    return [] if same else [raw("FieldValueInvalid", "roleRef", _go_role_ref(ref), "cannot change roleRef")]
