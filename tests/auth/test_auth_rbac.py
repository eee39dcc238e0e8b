"""RBAC: rule matching, binding resolution, superusers, reasons and the exact 403 wording."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mini_kube.apiserver.auth.rbac import Attributes, RbacAuthorizer, StaticSource, forbidden, rule_allows
from mini_kube.apiserver.auth.user import UserInfo
from mini_kube.apiserver.requestinfo import parse_request_info

REFERENCE = Path(__file__).resolve().parents[1] / "fixtures" / "reference" / "http"


def res(verb: str, resource: str, group: str = "", sub: str = "", ns: str = "", name: str = "") -> Attributes:
    return Attributes(verb, group, resource, sub, ns, name)


def url(verb: str, path: str) -> Attributes:
    return Attributes(verb, is_resource=False, path=path)


PODS_GET = {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}

RULE_TABLE = [
    # (rule, attributes, allowed)
    (PODS_GET, res("get", "pods"), True),
    (PODS_GET, res("list", "pods"), False),
    (PODS_GET, res("get", "pods", group="apps"), False),
    (PODS_GET, res("get", "pods", sub="log"), False),
    (PODS_GET, res("get", "services"), False),
    ({"verbs": ["*"], "apiGroups": [""], "resources": ["pods"]}, res("deletecollection", "pods"), True),
    ({"verbs": ["get"], "apiGroups": ["*"], "resources": ["deployments"]}, res("get", "deployments", "apps"), True),
    ({"verbs": ["get"], "apiGroups": [""], "resources": ["*"]}, res("get", "pods", sub="log"), True),
    ({"verbs": ["get"], "apiGroups": [""], "resources": ["pods/log"]}, res("get", "pods", sub="log"), True),
    ({"verbs": ["get"], "apiGroups": [""], "resources": ["pods/log"]}, res("get", "pods"), False),
    ({"verbs": ["get"], "apiGroups": ["*"], "resources": ["*/scale"]}, res("get", "deployments", "apps", "scale"), True),
    ({"verbs": ["get"], "apiGroups": ["*"], "resources": ["*/scale"]}, res("get", "deployments", "apps"), False),
    ({"verbs": ["get"], "apiGroups": ["*"], "resources": ["*/scale"]}, res("get", "pods", sub="status"), False),
    ({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["p1"]},
     res("get", "pods", name="p1"), True),
    ({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["p1"]},
     res("get", "pods", name="p2"), False),
    ({"verbs": ["list"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["p1"]},
     res("list", "pods"), False),
    ({"verbs": ["get"], "nonResourceURLs": ["/healthz"]}, url("get", "/healthz"), True),
    ({"verbs": ["get"], "nonResourceURLs": ["/healthz"]}, url("get", "/healthz/etcd"), False),
    ({"verbs": ["get"], "nonResourceURLs": ["/healthz/*"]}, url("get", "/healthz/etcd"), True),
    ({"verbs": ["get"], "nonResourceURLs": ["/api*"]}, url("get", "/apis"), True),
    ({"verbs": ["*"], "nonResourceURLs": ["*"]}, url("post", "/anything"), True),
    ({"verbs": ["get"], "nonResourceURLs": ["/healthz"]}, url("post", "/healthz"), False),
    ({"verbs": ["get"], "nonResourceURLs": ["*"]}, res("get", "pods"), False),
    (PODS_GET, url("get", "/api/v1/pods"), False),
    ({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "nonResourceURLs": ["/x"]}, url("get", "/x"), True),
]


@pytest.mark.parametrize(("rule", "attrs", "allowed"), RULE_TABLE)
def test_rule_matching(rule: dict, attrs: Attributes, allowed: bool) -> None:
    assert rule_allows(attrs, rule) is allowed


def _role(kind: str, name: str, rules: list, ns: str = "") -> dict:
    meta = {"name": name, **({"namespace": ns} if ns else {})}
    return {"kind": kind, "apiVersion": "rbac.authorization.k8s.io/v1", "metadata": meta, "rules": rules}


def _binding(kind: str, name: str, role_kind: str, role: str, subjects: list, ns: str = "") -> dict:
    meta = {"name": name, **({"namespace": ns} if ns else {})}
    return {"kind": kind, "apiVersion": "rbac.authorization.k8s.io/v1", "metadata": meta,
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role},
            "subjects": subjects}


ALICE = UserInfo("alice", "", ("devs", "system:authenticated"))


@pytest.fixture
def authz() -> RbacAuthorizer:
    src = StaticSource().add(
        _role("Role", "r1", [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}], "pb"),
        _binding("RoleBinding", "rb1", "Role", "r1", [{"kind": "User", "name": "alice"}], "pb"),
        _role("ClusterRole", "cm-reader", [{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["configmaps"]}]),
        _binding("RoleBinding", "devs-read", "ClusterRole", "cm-reader", [{"kind": "Group", "name": "devs"}], "dev"),
        _role("ClusterRole", "ns-lister", [{"verbs": ["list"], "apiGroups": [""], "resources": ["namespaces"]}]),
        _binding("ClusterRoleBinding", "crb-sa", "ClusterRole", "ns-lister",
                 [{"kind": "ServiceAccount", "name": "robot", "namespace": "ops"}]),
        _binding("RoleBinding", "sa-local", "ClusterRole", "cm-reader", [{"kind": "ServiceAccount", "name": "robot"}],
                 "ops"),
        _binding("ClusterRoleBinding", "dangling", "ClusterRole", "missing", [{"kind": "Group", "name": "devs"}]),
    )
    return RbacAuthorizer(src)


def test_role_binding_reason_matches_upstream(authz: RbacAuthorizer) -> None:
    d = authz.authorize(ALICE, res("get", "pods", ns="pb", name="p1"))
    assert d.allowed
    assert d.reason == 'RBAC: allowed by RoleBinding "rb1/pb" of Role "r1" to User "alice"'


def test_cluster_role_in_a_role_binding_is_namespaced(authz: RbacAuthorizer) -> None:
    d = authz.authorize(ALICE, res("list", "configmaps", ns="dev"))
    assert d.reason == 'RBAC: allowed by RoleBinding "devs-read/dev" of ClusterRole "cm-reader" to Group "devs"'
    assert not authz.authorize(ALICE, res("list", "configmaps", ns="prod")).allowed
    assert not authz.authorize(ALICE, res("list", "configmaps")).allowed


def test_service_account_subjects(authz: RbacAuthorizer) -> None:
    robot = UserInfo("system:serviceaccount:ops:robot", "", ("system:serviceaccounts", "system:serviceaccounts:ops"))
    d = authz.authorize(robot, res("list", "namespaces"))
    assert d.reason == ('RBAC: allowed by ClusterRoleBinding "crb-sa" of ClusterRole "ns-lister" '
                        'to ServiceAccount "robot/ops"')
    d = authz.authorize(robot, res("get", "configmaps", ns="ops"))
    assert d.reason == ('RBAC: allowed by RoleBinding "sa-local/ops" of ClusterRole "cm-reader" '
                        'to ServiceAccount "robot/ops"')
    other = UserInfo("system:serviceaccount:dev:robot")
    assert not authz.authorize(other, res("list", "namespaces")).allowed


def test_missing_role_is_reported_in_the_reason(authz: RbacAuthorizer) -> None:
    d = authz.authorize(ALICE, res("delete", "nodes"))
    assert not d.allowed
    assert d.reason == 'RBAC: clusterrole.rbac.authorization.k8s.io "missing" not found'


def test_masters_are_always_allowed(authz: RbacAuthorizer) -> None:
    admin = UserInfo("anyone", "", ("system:masters",))
    assert authz.authorize(admin, res("escalate", "clusterroles", "rbac.authorization.k8s.io")) == \
        authz.authorize(admin, url("delete", "/whatever"))
    assert authz.authorize(admin, url("delete", "/whatever")).allowed


def test_rules_for_lists_cluster_then_namespace_rules(authz: RbacAuthorizer) -> None:
    rules, errors = authz.rules_for(ALICE, "dev")
    assert rules == [{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["configmaps"]}]
    assert errors == ['clusterrole.rbac.authorization.k8s.io "missing" not found']


WORDING = [
    (parse_request_info("GET", "/api/v1/namespaces/raw/configmaps", {}),
     'configmaps is forbidden: User "alice" cannot list resource "configmaps" in API group "" in the namespace "raw"',
     {"kind": "configmaps"}),
    (parse_request_info("GET", "/api/v1/namespaces", {}),
     'namespaces is forbidden: User "alice" cannot list resource "namespaces" in API group "" at the cluster scope',
     {"kind": "namespaces"}),
    (parse_request_info("GET", "/api/v1/namespaces/d/pods/p1", {}),
     'pods "p1" is forbidden: User "alice" cannot get resource "pods" in API group "" in the namespace "d"',
     {"name": "p1", "kind": "pods"}),
    (parse_request_info("GET", "/api/v1/namespaces/d/pods/p1/log", {}),
     'pods "p1" is forbidden: User "alice" cannot get resource "pods/log" in API group "" in the namespace "d"',
     {"name": "p1", "kind": "pods"}),
    (parse_request_info("PATCH", "/apis/apps/v1/namespaces/d/deployments/web/scale", {}),
     'deployments.apps "web" is forbidden: User "alice" cannot patch resource "deployments/scale" in API group '
     '"apps" in the namespace "d"', {"name": "web", "group": "apps", "kind": "deployments"}),
    (parse_request_info("DELETE", "/apis/rbac.authorization.k8s.io/v1/clusterroles", {}),
     'clusterroles.rbac.authorization.k8s.io is forbidden: User "alice" cannot deletecollection resource '
     '"clusterroles" in API group "rbac.authorization.k8s.io" at the cluster scope',
     {"group": "rbac.authorization.k8s.io", "kind": "clusterroles"}),
    (parse_request_info("GET", "/api/v1/pods", {"watch": "1"}),
     'pods is forbidden: User "alice" cannot watch resource "pods" in API group "" at the cluster scope',
     {"kind": "pods"}),
    (parse_request_info("GET", "/metrics", {}),
     'forbidden: User "alice" cannot get path "/metrics"', {}),
    (parse_request_info("POST", "/api", {}),
     'forbidden: User "alice" cannot post path "/api"', {}),
]


@pytest.mark.parametrize(("attrs", "message", "details"), WORDING)
def test_forbidden_wording(attrs, message: str, details: dict) -> None:
    status = forbidden(ALICE, attrs).status()
    assert status["message"] == message
    assert status["details"] == details
    assert list(status) == ["kind", "apiVersion", "metadata", "status", "message", "reason", "details", "code"]
    assert (status["reason"], status["code"]) == ("Forbidden", 403)


def test_forbidden_appends_the_reason_and_escapes_html() -> None:
    attrs = res("get", "pods", ns="<b>")
    msg = forbidden(ALICE, attrs, 'RBAC: role.rbac.authorization.k8s.io "x" not found').status()["message"]
    assert msg == ('pods is forbidden: User "alice" cannot get resource "pods" in API group "" in the namespace '
                   '"&lt;b&gt;": RBAC: role.rbac.authorization.k8s.io "x" not found')


@pytest.mark.parametrize(("capture", "user", "method", "path"), [
    ("forbidden-403", "alice", "GET", "/api/v1/namespaces/raw/configmaps"),
    ("anonymous-403", "system:anonymous", "GET", "/api/v1/namespaces"),
])
def test_matches_the_reference_server(capture: str, user: str, method: str, path: str) -> None:
    expected = json.loads((REFERENCE / f"{capture}.body").read_text())
    got = forbidden(UserInfo(user), parse_request_info(method, path, {})).status()
    assert got == expected
