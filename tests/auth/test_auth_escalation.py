"""Escalation prevention: covering rules, the bind/escalate verbs, aggregation rules and the 403 wording."""

from __future__ import annotations

import pytest
from mini_kube.apiserver.auth.escalation import check_binding, check_role, compact, compact_string, covers
from mini_kube.apiserver.auth.rbac import RbacAuthorizer, StaticSource
from mini_kube.apiserver.auth.user import UserInfo

G = "rbac.authorization.k8s.io"
ALICE = UserInfo("alice", "", ("system:authenticated",))


def rule(verbs, groups=("",), resources=(), names=(), urls=()) -> dict:
    out: dict = {"verbs": list(verbs)}
    if resources:
        out["apiGroups"] = list(groups)
        out["resources"] = list(resources)
    if names:
        out["resourceNames"] = list(names)
    if urls:
        out["nonResourceURLs"] = list(urls)
    return out


COVERS_TABLE = [
    # owner rules, servant rules, covered
    ([rule(["*"], ["*"], ["*"])], [rule(["get"], [""], ["secrets"])], True),
    ([rule(["get", "list"], [""], ["pods"])], [rule(["get"], [""], ["pods"])], True),
    ([rule(["get"], [""], ["pods"])], [rule(["get", "list"], [""], ["pods"])], False),
    ([rule(["get"], [""], ["pods"])], [rule(["get"], ["apps"], ["pods"])], False),
    ([rule(["get"], [""], ["pods"])], [rule(["get"], [""], ["pods/log"])], False),
    ([rule(["get"], [""], ["*/log"])], [rule(["get"], [""], ["pods/log"])], True),
    ([rule(["get"], [""], ["pods"], names=["a"])], [rule(["get"], [""], ["pods"])], False),
    ([rule(["get"], [""], ["pods"], names=["a", "b"])], [rule(["get"], [""], ["pods"], names=["a"])], True),
    ([rule(["get"], [""], ["pods"])], [rule(["get"], [""], ["pods"], names=["a"])], True),
    ([rule(["get"], urls=["/healthz/*"])], [rule(["get"], urls=["/healthz/etcd"])], True),
    ([rule(["get"], urls=["/healthz"])], [rule(["get"], urls=["/healthz/etcd"])], False),
    ([rule(["*"], urls=["*"])], [rule(["post"], urls=["/x"])], True),
    ([], [], True),
]


@pytest.mark.parametrize(("owner", "servant", "covered"), COVERS_TABLE)
def test_covers(owner: list, servant: list, covered: bool) -> None:
    assert covers(owner, servant)[0] is covered


def test_compact_merges_verbs_of_simple_rules() -> None:
    _, missing = covers([], [rule(["get", "list"], [""], ["pods", "secrets"]), rule(["get"], urls=["/x"])])
    lines = sorted(compact_string(r) for r in compact(missing))
    assert lines == ['{APIGroups:[""], Resources:["pods"], Verbs:["get" "list"]}',
                     '{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list"]}',
                     '{NonResourceURLs:["/x"], Verbs:["get"]}']
    named = compact_string({"apiGroups": ["apps"], "resources": ["deployments"], "resourceNames": ["web"],
                            "verbs": ["patch"]})
    assert named == '{APIGroups:["apps"], Resources:["deployments"], ResourceNames:["web"], Verbs:["patch"]}'


def _obj(kind: str, name: str, ns: str = "", **body) -> dict:
    meta = {"name": name, **({"namespace": ns} if ns else {})}
    return {"kind": kind, "apiVersion": f"{G}/v1", "metadata": meta, **body}


def _ref(kind: str, name: str) -> dict:
    return {"apiGroup": G, "kind": kind, "name": name}


@pytest.fixture
def authz() -> RbacAuthorizer:
    alice = [{"kind": "User", "name": "alice"}]
    src = StaticSource().add(
        _obj("Role", "pod-reader", "dev", rules=[rule(["get", "list"], [""], ["pods"])]),
        _obj("RoleBinding", "alice-pods", "dev", roleRef=_ref("Role", "pod-reader"), subjects=alice),
        _obj("ClusterRole", "role-admin", rules=[rule(["create", "update", "get"], [G], ["roles", "rolebindings"])]),
        _obj("RoleBinding", "alice-roles", "dev", roleRef=_ref("ClusterRole", "role-admin"), subjects=alice),
        _obj("ClusterRole", "secret-reader", rules=[rule(["get"], [""], ["secrets"])]),
        _obj("Role", "binder", "dev", rules=[rule(["bind"], [G], ["clusterroles"], names=["secret-reader"])]),
        _obj("RoleBinding", "bob-binder", "dev", roleRef=_ref("Role", "binder"), subjects=[{"kind": "User", "name": "bob"}]),
        _obj("Role", "escalator", "dev", rules=[rule(["escalate"], [G], ["roles"])]),
        _obj("RoleBinding", "carol-esc", "dev", roleRef=_ref("Role", "escalator"),
             subjects=[{"kind": "User", "name": "carol"}]),
    )
    return RbacAuthorizer(src)


def test_role_with_held_rules_is_allowed(authz: RbacAuthorizer) -> None:
    role = _obj("Role", "mine", "dev", rules=[rule(["get"], [""], ["pods"])])
    assert check_role(authz, ALICE, role, namespace="dev") is None


def test_role_with_unheld_rules_is_forbidden_with_upstream_wording(authz: RbacAuthorizer) -> None:
    role = _obj("Role", "sneaky", "dev", rules=[rule(["get", "list"], [""], ["pods", "secrets"])])
    err = check_role(authz, ALICE, role, namespace="dev")
    assert err is not None
    status = err.status()
    assert status["code"] == 403 and status["reason"] == "Forbidden"
    assert status["message"] == (
        'roles.rbac.authorization.k8s.io "sneaky" is forbidden: user "alice" (groups=["system:authenticated"]) '
        "is attempting to grant RBAC permissions not currently held:\n"
        '{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list"]}')
    assert status["details"] == {"name": "sneaky", "group": G, "kind": "roles"}


def test_rules_held_in_another_namespace_do_not_count(authz: RbacAuthorizer) -> None:
    role = _obj("Role", "mine", "prod", rules=[rule(["get"], [""], ["pods"])])
    assert check_role(authz, ALICE, role, namespace="prod") is not None


def test_escalate_verb_allows_any_rules(authz: RbacAuthorizer) -> None:
    carol = UserInfo("carol")
    role = _obj("Role", "big", "dev", rules=[rule(["*"], ["*"], ["*"])])
    assert check_role(authz, carol, role, namespace="dev") is None
    assert check_role(authz, carol, role, namespace="prod") is not None


def test_masters_may_grant_anything(authz: RbacAuthorizer) -> None:
    root = UserInfo("root", "", ("system:masters",))
    assert check_role(authz, root, _obj("ClusterRole", "all", rules=[rule(["*"], ["*"], ["*"])])) is None


def test_aggregation_rule_needs_full_authority(authz: RbacAuthorizer) -> None:
    agg = _obj("ClusterRole", "agg", rules=[], aggregationRule={"clusterRoleSelectors": [{"matchLabels": {"a": "b"}}]})
    err = check_role(authz, ALICE, agg)
    assert err is not None
    assert err.status()["message"] == ('clusterroles.rbac.authorization.k8s.io "agg" is forbidden: must have '
                                       "cluster-admin privileges to use the aggregationRule")
    plain = _obj("ClusterRole", "agg", rules=[])
    assert check_role(authz, ALICE, plain, old=agg) is not None


def test_gc_only_updates_pass(authz: RbacAuthorizer) -> None:
    old = _obj("Role", "pod-reader2", "dev", rules=[rule(["*"], [""], ["secrets"])])
    new = {**old, "metadata": {**old["metadata"], "finalizers": ["x"],
                               "ownerReferences": [{"kind": "Pod", "name": "p", "uid": "u"}]}}
    assert check_role(authz, ALICE, new, namespace="dev", old=old) is None
    changed = {**new, "metadata": {**new["metadata"], "labels": {"a": "b"}}}
    assert check_role(authz, ALICE, changed, namespace="dev", old=old) is not None


def test_binding_a_role_you_hold(authz: RbacAuthorizer) -> None:
    rb = _obj("RoleBinding", "share", "dev", roleRef=_ref("Role", "pod-reader"), subjects=[{"kind": "User", "name": "x"}])
    assert check_binding(authz, ALICE, rb, namespace="dev") is None


def test_binding_a_role_you_do_not_hold(authz: RbacAuthorizer) -> None:
    rb = _obj("RoleBinding", "grab", "dev", roleRef=_ref("ClusterRole", "secret-reader"),
              subjects=[{"kind": "User", "name": "alice"}])
    err = check_binding(authz, ALICE, rb, namespace="dev")
    assert err is not None
    assert err.status()["message"] == (
        'rolebindings.rbac.authorization.k8s.io "grab" is forbidden: user "alice" (groups=["system:authenticated"]) '
        "is attempting to grant RBAC permissions not currently held:\n"
        '{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}')


def test_bind_verb_allows_binding_the_named_role_only(authz: RbacAuthorizer) -> None:
    bob = UserInfo("bob")
    ok = _obj("RoleBinding", "b", "dev", roleRef=_ref("ClusterRole", "secret-reader"), subjects=[])
    assert check_binding(authz, bob, ok, namespace="dev") is None
    other = _obj("RoleBinding", "b", "dev", roleRef=_ref("ClusterRole", "role-admin"), subjects=[])
    assert check_binding(authz, bob, other, namespace="dev") is not None
    crb = _obj("ClusterRoleBinding", "b", roleRef=_ref("ClusterRole", "secret-reader"), subjects=[])
    err = check_binding(authz, bob, crb)
    assert err is not None and err.status()["details"]["kind"] == "clusterrolebindings"


def test_binding_a_missing_role_is_not_found(authz: RbacAuthorizer) -> None:
    rb = _obj("RoleBinding", "b", "dev", roleRef=_ref("ClusterRole", "nope"), subjects=[])
    err = check_binding(authz, ALICE, rb, namespace="dev")
    assert err is not None
    assert err.status()["code"] == 404
    assert err.status()["message"] == 'clusterrole.rbac.authorization.k8s.io "nope" not found'
