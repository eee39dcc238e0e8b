"""RBAC authorization: which rules apply to a user, whether they allow a request, and the 403 wording.

Rules come from ClusterRoleBindings (everywhere) and RoleBindings (in their namespace), resolved against the
Roles and ClusterRoles a `RbacSource` serves. Members of `system:masters` are always allowed.
Escalation prevention (roles and bindings) lives in `apiserver.auth.escalation`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from mini_kube.apiserver.auth.user import UserInfo, is_superuser, service_account_username
from mini_kube.apiserver.errors import StatusError
from mini_kube.machinery.meta import meta

Rule = Mapping[str, Any]
RBAC_GROUP = "rbac.authorization.k8s.io"


class AttributesLike(Protocol):
    """What authorization looks at; `apiserver.requestinfo.RequestInfo` fits."""

    @property
    def verb(self) -> str: ...
    @property
    def api_group(self) -> str: ...
    @property
    def resource(self) -> str: ...
    @property
    def subresource(self) -> str: ...
    @property
    def namespace(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def is_resource(self) -> bool: ...
    @property
    def path(self) -> str: ...


@dataclass(frozen=True, slots=True)
class Attributes:
    """Authorization attributes built by the server itself (SAR, impersonation, bind/escalate checks)."""

    verb: str
    api_group: str = ""
    resource: str = ""
    subresource: str = ""
    namespace: str = ""
    name: str = ""
    is_resource: bool = True
    path: str = ""
    api_version: str = ""


@dataclass(frozen=True, slots=True)
class Decision:
    """An authorizer's answer. RBAC never denies outright: it allows or has no opinion (not allowed)."""

    allowed: bool
    reason: str = ""
    denied: bool = False
    error: str = ""


class RbacSource(Protocol):
    """The RBAC objects the server holds, as plain dicts (the server implements this over its cache)."""

    def cluster_role_bindings(self) -> Iterable[Mapping[str, Any]]: ...
    def role_bindings(self, namespace: str) -> Iterable[Mapping[str, Any]]: ...
    def get_cluster_role(self, name: str) -> Mapping[str, Any] | None: ...
    def get_role(self, namespace: str, name: str) -> Mapping[str, Any] | None: ...


@dataclass
class StaticSource:
    """An in-memory `RbacSource` over lists of objects (tests, bootstrap, simple servers)."""

    objects: list[Mapping[str, Any]] = field(default_factory=list)

    def add(self, *objs: Mapping[str, Any]) -> StaticSource:
        self.objects.extend(objs)
        return self

    def _of(self, kind: str, namespace: str | None = None) -> Iterator[Mapping[str, Any]]:
        for obj in self.objects:
            if obj.get("kind") == kind and (namespace is None or meta(obj).get("namespace", "") == namespace):
                yield obj

    def cluster_roles(self) -> list[Mapping[str, Any]]:
        return list(self._of("ClusterRole"))

    def roles(self, namespace: str) -> list[Mapping[str, Any]]:
        return list(self._of("Role", namespace))

    def cluster_role_bindings(self) -> list[Mapping[str, Any]]:
        return list(self._of("ClusterRoleBinding"))

    def role_bindings(self, namespace: str) -> list[Mapping[str, Any]]:
        return list(self._of("RoleBinding", namespace))

    def get_cluster_role(self, name: str) -> Mapping[str, Any] | None:
        return next((o for o in self._of("ClusterRole") if meta(o).get("name") == name), None)

    def get_role(self, namespace: str, name: str) -> Mapping[str, Any] | None:
        return next((o for o in self._of("Role", namespace) if meta(o).get("name") == name), None)


# -- rule matching -------------------------------------------------------------------------------------------

def verb_matches(rule: Rule, verb: str) -> bool:
    return any(v in ("*", verb) for v in rule.get("verbs") or ())


def api_group_matches(rule: Rule, group: str) -> bool:
    return any(g in ("*", group) for g in rule.get("apiGroups") or ())


def resource_matches(rule: Rule, combined: str, subresource: str) -> bool:
    """`*`, an exact `resource[/subresource]`, or `*/subresource`."""
    for r in rule.get("resources") or ():
        if r in ("*", combined):
            return True
        if subresource and r == "*/" + subresource:
            return True
    return False


def resource_name_matches(rule: Rule, name: str) -> bool:
    names = rule.get("resourceNames") or ()
    return not names or name in names


def non_resource_url_matches(rule: Rule, path: str) -> bool:
    for url in rule.get("nonResourceURLs") or ():
        if url in ("*", path) or (url.endswith("*") and path.startswith(url.rstrip("*"))):
            return True
    return False


def rule_allows(attrs: AttributesLike, rule: Rule) -> bool:
    """Whether one PolicyRule allows the request."""
    if attrs.is_resource:
        combined = f"{attrs.resource}/{attrs.subresource}" if attrs.subresource else attrs.resource
        return (verb_matches(rule, attrs.verb) and api_group_matches(rule, attrs.api_group)
                and resource_matches(rule, combined, attrs.subresource) and resource_name_matches(rule, attrs.name))
    return verb_matches(rule, attrs.verb) and non_resource_url_matches(rule, attrs.path)


# -- rule resolution -----------------------------------------------------------------------------------------

def _quote(s: str) -> str:
    """Go's %q for plain strings."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def not_found_message(kind: str, name: str) -> str:
    """What a lister says for a missing role: `clusterrole.rbac.authorization.k8s.io "x" not found`."""
    return f"{kind.lower()}.{RBAC_GROUP} {_quote(name)} not found"


def describe_subject(subject: Mapping[str, Any], binding_namespace: str) -> str:
    kind, name = subject.get("kind", ""), subject.get("name", "")
    if kind == "ServiceAccount":
        return f"{kind} {_quote(name + '/' + (subject.get('namespace') or binding_namespace))}"
    return f"{kind} {_quote(name)}"


def applies_to(user: UserInfo, subject: Mapping[str, Any], namespace: str) -> bool:
    """Whether a binding subject names this user (directly, by group, or as a service account)."""
    kind, name = subject.get("kind"), subject.get("name", "")
    if kind == "User":
        return user.name == name
    if kind == "Group":
        return name in user.groups
    if kind == "ServiceAccount":
        sa_namespace = subject.get("namespace") or namespace
        return bool(sa_namespace) and user.name == service_account_username(sa_namespace, name)
    return False


def aggregate_errors(errors: list[str]) -> str:
    """`utilerrors.NewAggregate(...).Error()`: one message alone, several in brackets (deduplicated)."""
    unique = list(dict.fromkeys(errors))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


@dataclass(frozen=True, slots=True)
class RuleVisit:
    source: str = ""
    rule: Rule | None = None
    error: str = ""


class RuleResolver:
    """Walks the rules that apply to a user in a namespace (cluster-wide bindings first)."""

    def __init__(self, source: RbacSource) -> None:
        self.source = source

    def role_ref_rules(self, role_ref: Mapping[str, Any], namespace: str) -> list[Rule]:
        """The rules a roleRef points at; raises LookupError with the lister's wording when missing."""
        kind, name = role_ref.get("kind"), role_ref.get("name", "")
        if kind == "Role":
            role = self.source.get_role(namespace, name)
            if role is None:
                raise LookupError(not_found_message("role", name))
        elif kind == "ClusterRole":
            role = self.source.get_cluster_role(name)
            if role is None:
                raise LookupError(not_found_message("clusterrole", name))
        else:
            raise LookupError(f"unsupported role reference kind: {_quote(str(kind))}")
        return list(role.get("rules") or ())

    def visit(self, user: UserInfo, namespace: str) -> Iterator[RuleVisit]:
        yield from self._visit_bindings(user, self.source.cluster_role_bindings(), "", True)
        if namespace:
            yield from self._visit_bindings(user, self.source.role_bindings(namespace), namespace, False)

    def _visit_bindings(self, user: UserInfo, bindings: Iterable[Mapping[str, Any]], namespace: str,
                        cluster: bool) -> Iterator[RuleVisit]:
        for binding in bindings:
            subject = next((s for s in binding.get("subjects") or () if applies_to(user, s, namespace)), None)
            if subject is None:
                continue
            ref = binding.get("roleRef") or {}
            try:
                rules = self.role_ref_rules(ref, namespace)
            except LookupError as e:
                yield RuleVisit(error=str(e))
                continue
            name = meta(binding).get("name", "")
            if cluster:
                source = (f"ClusterRoleBinding {_quote(name)} of {ref.get('kind', '')} "
                          f"{_quote(ref.get('name', ''))} to {describe_subject(subject, '')}")
            else:
                source = (f"RoleBinding {_quote(name + '/' + namespace)} of {ref.get('kind', '')} "
                          f"{_quote(ref.get('name', ''))} to {describe_subject(subject, namespace)}")
            for rule in rules:
                yield RuleVisit(source, rule)

    def rules_for(self, user: UserInfo, namespace: str) -> tuple[list[Rule], list[str]]:
        """All rules that apply, plus the resolution errors met on the way (rules are still usable)."""
        rules: list[Rule] = []
        errors: list[str] = []
        for visit in self.visit(user, namespace):
            if visit.rule is not None:
                rules.append(visit.rule)
            if visit.error:
                errors.append(visit.error)
        return rules, errors


class RbacAuthorizer:
    """`authorize(user, attrs)`: superusers always; otherwise the first RBAC rule that allows the request."""

    def __init__(self, source: RbacSource) -> None:
        self.resolver = RuleResolver(source)

    def authorize(self, user: UserInfo, attrs: AttributesLike) -> Decision:
        if is_superuser(user):
            return Decision(True)
        errors: list[str] = []
        for visit in self.resolver.visit(user, attrs.namespace):
            if visit.rule is not None and rule_allows(attrs, visit.rule):
                return Decision(True, f"RBAC: allowed by {visit.source}")
            if visit.error:
                errors.append(visit.error)
        return Decision(False, f"RBAC: {aggregate_errors(errors)}" if errors else "")

    def rules_for(self, user: UserInfo, namespace: str) -> tuple[list[Rule], list[str]]:
        """The rules RBAC grants `user` in `namespace` (SelfSubjectRulesReview) and resolution errors."""
        return self.resolver.rules_for(user, namespace)


# -- 403 wording ---------------------------------------------------------------------------------------------

_SANITIZE = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})


def denial_text(user: UserInfo, attrs: AttributesLike) -> str:
    """`User "x" cannot list resource "pods" in API group "" in the namespace "y"` (and the other cases)."""
    if not attrs.is_resource:
        return f"User {_quote(user.name)} cannot {attrs.verb} path {_quote(attrs.path)}"
    resource = f"{attrs.resource}/{attrs.subresource}" if attrs.subresource else attrs.resource
    text = f"User {_quote(user.name)} cannot {attrs.verb} resource {_quote(resource)} in API group {_quote(attrs.api_group)}"
    if attrs.namespace:
        return f"{text} in the namespace {_quote(attrs.namespace)}"
    return f"{text} at the cluster scope"


def _group_resource(resource: str, group: str) -> str:
    return f"{resource}.{group}" if group else resource


def forbidden_message(user: UserInfo, attrs: AttributesLike, reason: str = "") -> str:
    """The whole 403 message: `pods "p" is forbidden: User "x" cannot get resource ...[: reason]`."""
    text = denial_text(user, attrs).translate(_SANITIZE)
    if reason:
        text = f"{text}: {reason}"
    resource = attrs.resource if attrs.is_resource else ""
    group = attrs.api_group if attrs.is_resource else ""
    name = attrs.name if attrs.is_resource else ""
    return forbidden_prefix(resource, group, name) + text


def forbidden_prefix(resource: str, group: str, name: str) -> str:
    """How `NewForbidden` opens its message for a group/resource and name."""
    if not resource and not group:
        return "forbidden: "
    gr = _group_resource(resource, group)
    return f"{gr} {_quote(name)} is forbidden: " if name else f"{gr} is forbidden: "


class ForbiddenError(StatusError):
    """A 403 Status whose `details` is always present (`{}` for non-resource paths), as upstream sends it."""

    def status(self) -> dict[str, Any]:
        body = super().status()
        if "details" not in body:
            code = body.pop("code")
            body["details"] = {}
            body["code"] = code
        return body


def forbidden_status(resource: str, group: str, name: str, message: str) -> ForbiddenError:
    """`apierrors.NewForbidden(group/resource, name, err)` with the message already composed."""
    details: dict[str, Any] = {}
    if name:
        details["name"] = name
    if group:
        details["group"] = group
    if resource:
        details["kind"] = resource
    return ForbiddenError(403, "Forbidden", message, details)


def forbidden(user: UserInfo, attrs: AttributesLike, reason: str = "") -> ForbiddenError:
    """The 403 StatusError for a request the authorizer did not allow."""
    message = forbidden_message(user, attrs, reason)
    if not attrs.is_resource:
        return forbidden_status("", "", "", message)
    return forbidden_status(attrs.resource, attrs.api_group, attrs.name, message)
