"""Which requests a webhook or policy applies to: rules, matchPolicy, namespace and object selectors.

Mirrors k8s.io/apiserver/pkg/admission/plugin/webhook/predicates: a rule matches on scope, operation, group,
version and `resource/subresource` (with `*` wildcards); under `matchPolicy: Equivalent` a rule written for
another served version of the same resource matches too, and the object is then sent in that version.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mini_kube.machinery.labels import matches as selector_matches

from .. import errors
from ..resources import ResourceType
from ..validation.meta import selector_is_empty
from .chain import SCALE_KIND, Attributes

ADMISSION_GROUP = "admissionregistration.k8s.io"
EXEMPT_KINDS = frozenset({"ValidatingWebhookConfiguration", "MutatingWebhookConfiguration",
                          "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding",
                          "MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding"})


@dataclass(frozen=True, slots=True)
class Match:
    """The resource and kind a matching rule selected (the request's own, or an equivalent version)."""

    resource: tuple[str, str, str]  # group, version, plural
    kind: tuple[str, str, str]  # group, version, kind


def is_exempt(attrs: Attributes) -> bool:
    """Admission configuration objects never go to webhooks or policies (no lock-out)."""
    return attrs.resource.group == ADMISSION_GROUP and attrs.resource.kind in EXEMPT_KINDS


def _is_namespace(group: str, plural: str) -> bool:
    return group == "" and plural == "namespaces"


def _any(items: list[str] | None, value: str) -> bool:
    return any(item == "*" or item == value for item in items or ())


def rule_matches(rule: dict[str, Any], attrs: Attributes, group: str, version: str, plural: str) -> bool:
    """One RuleWithOperations against the request, as if it were for group/version/plural."""
    scope = rule.get("scope") or "*"
    namespaced = bool(attrs.request_namespace)
    if scope == "Namespaced" and (_is_namespace(group, plural) or not namespaced):
        return False
    if scope == "Cluster" and not (_is_namespace(group, plural) or not namespaced):
        return False
    if scope not in ("*", "Namespaced", "Cluster"):
        return False
    if not _any(rule.get("operations"), attrs.operation):
        return False
    if not _any(rule.get("apiGroups"), group) or not _any(rule.get("apiVersions"), version):
        return False
    for entry in rule.get("resources") or ():
        res, _, sub = entry.partition("/")
        if (res == "*" or res == plural) and (sub == "*" or sub == attrs.subresource):
            return True
    return False


def _names_match(rule: dict[str, Any], attrs: Attributes) -> bool:
    names = rule.get("resourceNames")
    return not names or attrs.name in names


def _equivalents(attrs: Attributes) -> list[ResourceType]:
    res = attrs.resource
    others = attrs.context.registry.resources.versions_of(res.group, res.plural)
    return [r for r in others if r.version != res.version]


def _kind_for(attrs: Attributes, res: ResourceType) -> tuple[str, str, str]:
    return SCALE_KIND if attrs.subresource == "scale" else (res.group, res.version, res.kind)


def match_rules(rules: list[dict[str, Any]] | None, match_policy: str | None, attrs: Attributes,
                named: bool = False) -> Match | None:
    """The first rule matching the request (then, under Equivalent, an equivalent version); else None."""
    res = attrs.resource
    for rule in rules or ():
        if rule_matches(rule, attrs, res.group, res.version, res.plural) and (not named or _names_match(rule, attrs)):
            return Match((res.group, res.version, res.plural), attrs.kind)
    if match_policy == "Exact":
        return None
    for rule in rules or ():
        for other in _equivalents(attrs):
            if rule_matches(rule, attrs, other.group, other.version, other.plural) and \
                    (not named or _names_match(rule, attrs)):
                return Match((other.group, other.version, other.plural), _kind_for(attrs, other))
    return None


def namespace_labels(attrs: Attributes) -> dict[str, str]:
    """Labels of the request's namespace (a Namespace's own labels when it is being written)."""
    res, obj = attrs.resource, attrs.obj
    if _is_namespace(res.group, res.plural) and not attrs.subresource and attrs.operation in ("CREATE", "UPDATE"):
        return ((obj or {}).get("metadata") or {}).get("labels") or {}
    namespace = namespace_object(attrs)
    if namespace is None:
        raise errors.not_found("namespaces", attrs.request_namespace)
    return (namespace.get("metadata") or {}).get("labels") or {}


def namespace_object(attrs: Attributes) -> dict[str, Any] | None:
    """The Namespace object the request is in, from the cache (None if absent)."""
    registry = attrs.context.registry
    ns_res = registry.resources.lookup("", "v1", "namespaces")
    entry = registry.find(ns_res, None, attrs.request_namespace) if ns_res is not None else None
    return entry.obj if entry is not None else None


def namespace_selected(selector: dict[str, Any] | None, attrs: Attributes) -> bool:
    """namespaceSelector: cluster-scoped requests (other than Namespaces) always match."""
    res = attrs.resource
    if not attrs.request_namespace and not _is_namespace(res.group, res.plural):
        return True
    if selector is None or selector_is_empty(selector):
        return True
    return selector_matches(selector, namespace_labels(attrs))


def _labels(obj: dict[str, Any] | None) -> dict[str, str] | None:
    if obj is None:
        return None
    return (obj.get("metadata") or {}).get("labels") or {}


def object_selected(selector: dict[str, Any] | None, obj: dict[str, Any] | None,
                    old: dict[str, Any] | None) -> bool:
    """objectSelector: the new or the old object's labels match (objects as admission sees them)."""
    if selector is None or selector_is_empty(selector):
        return True
    return any(labels is not None and selector_matches(selector, labels) for labels in (_labels(obj), _labels(old)))
