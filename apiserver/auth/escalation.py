"""RBAC escalation prevention: nobody grants permissions they do not hold.

Creating or updating a Role/ClusterRole needs every rule it grants (or `escalate` on it); creating or updating
a binding needs the referenced role's rules (or `bind` on it). `system:masters` is exempt. Denials are 403s
worded as upstream: `... is attempting to grant RBAC permissions not currently held: ...`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import orjson
from mini_kube.apiserver.auth.rbac import (
    RBAC_GROUP,
    Attributes,
    RbacAuthorizer,
    Rule,
    aggregate_errors,
    forbidden_status,
)
from mini_kube.apiserver.auth.user import UserInfo, is_superuser
from mini_kube.apiserver.errors import StatusError, not_found

FULL_AUTHORITY: tuple[Rule, ...] = (
    {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]},
    {"verbs": ["*"], "nonResourceURLs": ["*"]},
)
AGGREGATION_DENIED = "must have cluster-admin privileges to use the aggregationRule"


def breakdown(rule: Rule) -> list[dict[str, list[str]]]:
    """One rule per (group, resource, verb[, name]) and per (url, verb)."""
    out: list[dict[str, list[str]]] = []
    names = list(rule.get("resourceNames") or ())
    for group in rule.get("apiGroups") or ():
        for resource in rule.get("resources") or ():
            for verb in rule.get("verbs") or ():
                base = {"apiGroups": [group], "resources": [resource], "verbs": [verb]}
                out.extend([{**base, "resourceNames": [n]} for n in names] if names else [base])
    for url in rule.get("nonResourceURLs") or ():
        for verb in rule.get("verbs") or ():
            out.append({"nonResourceURLs": [url], "verbs": [verb]})
    return out


def _resources_cover(owner: Sequence[str], wanted: Sequence[str]) -> bool:
    if "*" in owner or set(wanted) <= set(owner):
        return True
    for path in wanted:
        if path in owner:
            continue
        if "/" not in path or "*/" + path.split("/", 1)[1] not in owner:
            return False
    return True


def _url_covers(owner: str, path: str) -> bool:
    return owner == path or (owner.endswith("*") and path.startswith(owner.rstrip("*")))


def rule_covers(owner: Rule, sub: Rule) -> bool:
    """Whether one owner rule covers an atomic rule from `breakdown`."""
    owner_verbs, owner_groups = owner.get("verbs") or (), owner.get("apiGroups") or ()
    owner_names = owner.get("resourceNames") or ()
    sub_names = sub.get("resourceNames") or ()
    verbs = "*" in owner_verbs or set(sub.get("verbs") or ()) <= set(owner_verbs)
    groups = "*" in owner_groups or set(sub.get("apiGroups") or ()) <= set(owner_groups)
    resources = _resources_cover(owner.get("resources") or (), sub.get("resources") or ())
    urls = all(any(_url_covers(o, p) for o in owner.get("nonResourceURLs") or ())
               for p in sub.get("nonResourceURLs") or ())
    names = not owner_names or (bool(sub_names) and set(sub_names) <= set(owner_names))
    return verbs and groups and resources and urls and names


def covers(owner_rules: Sequence[Rule], servant_rules: Sequence[Rule]) -> tuple[bool, list[dict[str, list[str]]]]:
    """(covered, the atomic rules the owner lacks)."""
    missing = [sub for rule in servant_rules for sub in breakdown(rule)
               if not any(rule_covers(owner, sub) for owner in owner_rules)]
    return not missing, missing


def compact(rules: Sequence[Mapping[str, list[str]]]) -> list[dict[str, list[str]]]:
    """Merge rules on one group and one resource (nothing else) that differ only by verb."""
    out: list[dict[str, list[str]]] = []
    simple: dict[tuple[str, str], dict[str, list[str]]] = {}
    for rule in rules:
        groups, resources = rule.get("apiGroups") or [], rule.get("resources") or []
        if (len(groups) == 1 and len(resources) == 1 and not rule.get("resourceNames")
                and not rule.get("nonResourceURLs")):
            key = (groups[0], resources[0])
            if key in simple:
                simple[key]["verbs"] = [*simple[key]["verbs"], *(rule.get("verbs") or [])]
            else:
                simple[key] = {"apiGroups": list(groups), "resources": list(resources),
                               "verbs": list(rule.get("verbs") or [])}
        else:
            out.append(dict(rule))
    return out + list(simple.values())


def _go_strings(values: Sequence[str]) -> str:
    """Go's %q of a []string: `["a" "b"]`."""
    return "[" + " ".join(orjson.dumps(v).decode() for v in values) + "]"


def compact_string(rule: Mapping[str, Sequence[str]]) -> str:
    """`{APIGroups:[""], Resources:["pods"], Verbs:["get"]}` as the escalation message lists rules."""
    parts = [f"{label}:{_go_strings(rule[key])}" for key, label in (
        ("apiGroups", "APIGroups"), ("resources", "Resources"), ("nonResourceURLs", "NonResourceURLs"),
        ("resourceNames", "ResourceNames"), ("verbs", "Verbs")) if rule.get(key)]
    return "{" + ", ".join(parts) + "}"


def escalation_message(user: UserInfo, rules: Sequence[Rule], authorizer: RbacAuthorizer,
                       namespace: str) -> str | None:
    """None when `user` already holds every rule in `namespace`; otherwise the upstream explanation."""
    owner_rules, errors = authorizer.rules_for(user, namespace)
    ok, missing = covers(owner_rules, rules)
    if ok:
        return None
    lines = sorted({compact_string(r) for r in compact(missing)})
    msg = (f"user {orjson.dumps(user.name).decode()} (groups={_go_strings(user.groups)}) is attempting to grant "
           f"RBAC permissions not currently held:\n" + "\n".join(lines))
    if errors:
        msg += f"; resolution errors: [{aggregate_errors(errors)}]"
    return msg


def check_escalation(authorizer: RbacAuthorizer, user: UserInfo, rules: Sequence[Rule], namespace: str, *,
                     resource: str = "roles", name: str = "") -> StatusError | None:
    """ConfirmNoEscalation as a 403 on `resource.rbac.authorization.k8s.io "name"`; None when allowed."""
    if is_superuser(user):
        return None
    msg = escalation_message(user, rules, authorizer, namespace)
    if msg is None:
        return None
    return forbidden_status(resource, RBAC_GROUP, name, _prefix(resource, name) + msg)


def _prefix(resource: str, name: str) -> str:
    gr = f"{resource}.{RBAC_GROUP}"
    return f'{gr} {orjson.dumps(name).decode()} is forbidden: ' if name else f"{gr} is forbidden: "


def _has_aggregation(role: Mapping[str, Any] | None) -> bool:
    return bool(role and (role.get("aggregationRule") or {}).get("clusterRoleSelectors"))


def _same_but_gc(new: Mapping[str, Any], old: Mapping[str, Any] | None) -> bool:
    """Whether an update only touches ownerReferences/finalizers (what the garbage collector changes)."""
    if old is None:
        return False
    ignored = {"ownerReferences", "finalizers", "managedFields", "resourceVersion", "generation"}

    def strip(obj: Mapping[str, Any]) -> dict[str, Any]:
        meta = {k: v for k, v in (obj.get("metadata") or {}).items() if k not in ignored}
        return {**{k: v for k, v in obj.items() if k not in ("metadata", "status")}, "metadata": meta}

    return strip(new) == strip(old)


def check_role(authorizer: RbacAuthorizer, user: UserInfo, role: Mapping[str, Any], *,
               namespace: str = "", old: Mapping[str, Any] | None = None) -> StatusError | None:
    """Guard a Role (namespace given) or ClusterRole create/update; None when allowed."""
    resource = "roles" if role.get("kind") == "Role" else "clusterroles"
    name = (role.get("metadata") or {}).get("name", "")
    if is_superuser(user) or _same_but_gc(role, old):
        return None
    escalate = Attributes("escalate", RBAC_GROUP, resource, namespace=namespace, name=name if old else "")
    if authorizer.authorize(user, escalate).allowed:
        return None
    denial = check_escalation(authorizer, user, list(role.get("rules") or ()), namespace,
                              resource=resource, name=name)
    if denial is not None:
        return denial
    if resource == "clusterroles" and (_has_aggregation(role) or _has_aggregation(old)) and \
            escalation_message(user, FULL_AUTHORITY, authorizer, namespace) is not None:
        return forbidden_status(resource, RBAC_GROUP, name, _prefix(resource, name) + AGGREGATION_DENIED)
    return None


def check_binding(authorizer: RbacAuthorizer, user: UserInfo, binding: Mapping[str, Any], *,
                  namespace: str = "", old: Mapping[str, Any] | None = None) -> StatusError | None:
    """Guard a RoleBinding (namespace given) or ClusterRoleBinding create/update; None when allowed."""
    resource = "rolebindings" if binding.get("kind") == "RoleBinding" else "clusterrolebindings"
    name = (binding.get("metadata") or {}).get("name", "")
    if is_superuser(user) or _same_but_gc(binding, old):
        return None
    ref = binding.get("roleRef") or {}
    role_resource = {"ClusterRole": "clusterroles", "Role": "roles"}.get(ref.get("kind", ""))
    if role_resource is not None:
        bind = Attributes("bind", ref.get("apiGroup", ""), role_resource, namespace=namespace,
                          name=ref.get("name", ""))
        if authorizer.authorize(user, bind).allowed:
            return None
    try:
        rules = authorizer.resolver.role_ref_rules(ref, namespace)
    except LookupError as e:
        kind = str(ref.get("kind", "")).lower()
        if kind in ("role", "clusterrole"):
            return not_found(f"{kind}.{RBAC_GROUP}", ref.get("name", ""))
        return StatusError(500, "InternalError", f"Internal error occurred: {e}")
    return check_escalation(authorizer, user, rules, namespace, resource=resource, name=name)


__all__ = [
    "FULL_AUTHORITY", "aggregate_errors", "breakdown", "check_binding", "check_escalation", "check_role",
    "compact", "compact_string", "covers", "escalation_message", "rule_covers",
]
