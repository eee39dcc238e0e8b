"""The default policy: names, labels, aggregation, and what the default bindings grant."""

from __future__ import annotations

import pytest
from mini_kube.apiserver.auth import bootstrap
from mini_kube.apiserver.auth.rbac import Attributes, RbacAuthorizer, StaticSource
from mini_kube.apiserver.auth.user import ANONYMOUS_USER, UserInfo


@pytest.fixture(scope="module")
def by_name() -> dict[str, dict]:
    return {r["metadata"]["name"]: r for r in bootstrap.cluster_roles()}


@pytest.fixture(scope="module")
def authz() -> RbacAuthorizer:
    return RbacAuthorizer(StaticSource(bootstrap.default_objects()))


def test_user_facing_roles_exist(by_name: dict) -> None:
    for name in ("cluster-admin", "admin", "edit", "view", "system:discovery", "system:basic-user",
                 "system:public-info-viewer", "system:monitoring", "system:auth-delegator", "system:node",
                 "system:kube-scheduler", "system:kube-controller-manager", "system:service-account-issuer-discovery"):
        assert name in by_name


def test_metadata_marks_bootstrap_objects() -> None:
    for obj in bootstrap.default_objects():
        meta = obj["metadata"]
        assert meta["labels"]["kubernetes.io/bootstrapping"] == "rbac-defaults"
        assert meta["annotations"] == {"rbac.authorization.kubernetes.io/autoupdate": "true"}
        assert obj["apiVersion"] == "rbac.authorization.k8s.io/v1"


def test_aggregation_rules_and_labels(by_name: dict) -> None:
    assert by_name["admin"]["aggregationRule"] == {
        "clusterRoleSelectors": [{"matchLabels": {"rbac.authorization.k8s.io/aggregate-to-admin": "true"}}]}
    assert by_name["edit"]["metadata"]["labels"]["rbac.authorization.k8s.io/aggregate-to-admin"] == "true"
    assert by_name["view"]["metadata"]["labels"]["rbac.authorization.k8s.io/aggregate-to-edit"] == "true"
    assert "aggregationRule" not in by_name["cluster-admin"]


def test_aggregated_rules_chain_view_into_edit_into_admin(by_name: dict) -> None:
    view, edit, admin = (by_name[n]["rules"] for n in ("view", "edit", "admin"))
    assert view == by_name["system:aggregate-to-view"]["rules"]
    assert edit == by_name["system:aggregate-to-edit"]["rules"] + view
    assert admin == edit + by_name["system:aggregate-to-admin"]["rules"]
    assert bootstrap.aggregate_cluster_roles(by_name.values()) == {}


def test_unaggregated_roles_start_empty_and_a_new_label_joins() -> None:
    roles = bootstrap.cluster_roles(aggregated=False)
    assert {r["metadata"]["name"]: r["rules"] for r in roles}["view"] == []
    roles = bootstrap.cluster_roles()
    crd_viewer = {"kind": "ClusterRole", "metadata": {"name": "crontabs-view", "labels": {
        "rbac.authorization.k8s.io/aggregate-to-view": "true"}},
        "rules": [{"verbs": ["get"], "apiGroups": ["stable.example.com"], "resources": ["crontabs"]}]}
    changed = bootstrap.aggregate_cluster_roles([*roles, crd_viewer])
    assert set(changed) == {"view", "edit", "admin"}
    assert crd_viewer["rules"][0] in changed["admin"]


@pytest.mark.parametrize(("selector", "labels", "match"), [
    ({"matchLabels": {"a": "1"}}, {"a": "1", "b": "2"}, True),
    ({"matchLabels": {"a": "1"}}, {"a": "2"}, False),
    ({"matchExpressions": [{"key": "a", "operator": "In", "values": ["1", "2"]}]}, {"a": "2"}, True),
    ({"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["1"]}]}, {"a": "1"}, False),
    ({"matchExpressions": [{"key": "a", "operator": "Exists"}]}, {}, False),
    ({"matchExpressions": [{"key": "a", "operator": "DoesNotExist"}]}, {}, True),
    ({}, {"x": "y"}, True),
    (None, {"x": "y"}, False),
])
def test_selector_matching(selector, labels: dict, match: bool) -> None:
    assert bootstrap.selector_matches(selector, labels) is match


def test_default_bindings(authz: RbacAuthorizer) -> None:
    anyone = UserInfo("jane", "", ("system:authenticated",))
    healthz = Attributes("get", is_resource=False, path="/healthz")
    version = Attributes("get", is_resource=False, path="/version")
    api = Attributes("get", is_resource=False, path="/apis/apps/v1")
    ssar = Attributes("create", "authorization.k8s.io", "selfsubjectaccessreviews")
    ssr = Attributes("create", "authentication.k8s.io", "selfsubjectreviews")
    pods = Attributes("list", "", "pods", namespace="default")
    assert authz.authorize(ANONYMOUS_USER, healthz).reason == (
        'RBAC: allowed by ClusterRoleBinding "system:public-info-viewer" of ClusterRole '
        '"system:public-info-viewer" to Group "system:unauthenticated"')
    assert authz.authorize(ANONYMOUS_USER, version).allowed
    for denied in (api, ssar, pods):
        assert not authz.authorize(ANONYMOUS_USER, denied).allowed
    for allowed in (healthz, api, ssar, ssr):
        assert authz.authorize(anyone, allowed).allowed
    assert not authz.authorize(anyone, pods).allowed
    masters = UserInfo("kubernetes-admin", "", ("system:masters", "system:authenticated"))
    rules, errors = authz.rules_for(masters, "default")
    assert {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]} in rules and not errors


def test_edit_binding_grants_namespace_work_but_not_rbac(authz: RbacAuthorizer) -> None:
    src = StaticSource(bootstrap.default_objects()).add(
        {"kind": "RoleBinding", "metadata": {"name": "dev-edit", "namespace": "dev"},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "edit"},
         "subjects": [{"kind": "User", "name": "dev1"}]})
    dev = UserInfo("dev1", "", ("system:authenticated",))
    a = RbacAuthorizer(src)
    assert a.authorize(dev, Attributes("create", "apps", "deployments", namespace="dev")).allowed
    assert a.authorize(dev, Attributes("get", "", "pods", "log", namespace="dev")).allowed
    assert a.authorize(dev, Attributes("create", "", "serviceaccounts", "token", namespace="dev")).allowed
    assert not a.authorize(dev, Attributes("create", "rbac.authorization.k8s.io", "roles", namespace="dev")).allowed
    assert not a.authorize(dev, Attributes("update", "", "resourcequotas", namespace="dev")).allowed
    assert not a.authorize(dev, Attributes("create", "apps", "deployments", namespace="prod")).allowed


def test_namespaced_defaults() -> None:
    names = {(r["metadata"]["namespace"], r["metadata"]["name"]) for r in bootstrap.roles()}
    assert ("kube-system", "extension-apiserver-authentication-reader") in names
    assert ("kube-public", "system:controller:bootstrap-signer") in names
    for rb in bootstrap.role_bindings():
        assert (rb["metadata"]["namespace"], rb["roleRef"]["name"]) in names
