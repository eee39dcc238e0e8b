"""Impersonation headers and checks; the audit log's events and writer."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from mini_kube.apiserver.auth.audit import AuditLog, make_event
from mini_kube.apiserver.auth.impersonation import checks, impersonate, impersonated_user, parse_headers
from mini_kube.apiserver.auth.rbac import Attributes, RbacAuthorizer, StaticSource
from mini_kube.apiserver.auth.user import UserInfo
from mini_kube.apiserver.errors import StatusError
from mini_kube.apiserver.requestinfo import parse_request_info

G = "rbac.authorization.k8s.io"
OPS = UserInfo("ops", "", ("system:authenticated",))


def test_parse_headers() -> None:
    req = parse_headers([("Impersonate-User", "jane"), ("impersonate-group", "a"), ("Impersonate-Group", "b"),
                         ("Impersonate-Uid", "u1"), ("Impersonate-Extra-Scopes", "view"),
                         ("Impersonate-Extra-Acme.com%2Fproject", "p1"), ("Impersonate-Extra-scopes", "edit"),
                         ("Accept", "application/json")])
    assert (req.user, req.uid, req.groups) == ("jane", "u1", ("a", "b"))
    assert dict(req.extra) == {"scopes": ("view", "edit"), "acme.com/project": ("p1",)}
    assert not parse_headers([("Accept", "*/*")]).requested


def test_checks_cover_every_header() -> None:
    req = parse_headers([("Impersonate-User", "system:serviceaccount:ns1:robot"), ("Impersonate-Group", "g"),
                         ("Impersonate-Extra-scopes", "view"), ("Impersonate-Uid", "u1")])
    assert checks(req) == [
        Attributes("impersonate", "", "serviceaccounts", namespace="ns1", name="robot"),
        Attributes("impersonate", "", "groups", name="g"),
        Attributes("impersonate", "authentication.k8s.io", "userextras", "scopes", name="view"),
        Attributes("impersonate", "authentication.k8s.io", "uids", name="u1"),
    ]


@pytest.mark.parametrize(("headers", "expected"), [
    ([("Impersonate-User", "jane")], UserInfo("jane", "", ("system:authenticated",))),
    ([("Impersonate-User", "jane"), ("Impersonate-Group", "devs")], UserInfo("jane", "", ("devs", "system:authenticated"))),
    ([("Impersonate-User", "jane"), ("Impersonate-Group", "system:unauthenticated")],
     UserInfo("jane", "", ("system:unauthenticated",))),
    ([("Impersonate-User", "system:serviceaccount:ns1:robot")],
     UserInfo("system:serviceaccount:ns1:robot", "", ("system:serviceaccounts", "system:serviceaccounts:ns1",
                                                        "system:authenticated"))),
    ([("Impersonate-User", "system:anonymous")], UserInfo("system:anonymous", "", ("system:unauthenticated",))),
])
def test_impersonated_user(headers: list, expected: UserInfo) -> None:
    assert impersonated_user(parse_headers(headers)) == expected


@pytest.fixture
def authz() -> RbacAuthorizer:
    return RbacAuthorizer(StaticSource().add(
        {"kind": "ClusterRole", "metadata": {"name": "imp"},
         "rules": [{"verbs": ["impersonate"], "apiGroups": [""], "resources": ["users"], "resourceNames": ["jane"]},
                   {"verbs": ["impersonate"], "apiGroups": [""], "resources": ["groups"]}]},
        {"kind": "ClusterRoleBinding", "metadata": {"name": "imp"},
         "roleRef": {"apiGroup": G, "kind": "ClusterRole", "name": "imp"}, "subjects": [{"kind": "User", "name": "ops"}]},
    ))


def test_impersonation_allowed(authz: RbacAuthorizer) -> None:
    user = impersonate([("Impersonate-User", "jane"), ("Impersonate-Group", "devs")], OPS, authz.authorize)
    assert user == UserInfo("jane", "", ("devs", "system:authenticated"))
    assert impersonate([], OPS, authz.authorize) is None


def test_impersonation_denied_with_upstream_wording(authz: RbacAuthorizer) -> None:
    with pytest.raises(StatusError) as err:
        impersonate([("Impersonate-User", "bob")], OPS, authz.authorize)
    assert err.value.status()["message"] == ('users "bob" is forbidden: User "ops" cannot impersonate resource "users" '
                                             'in API group "" at the cluster scope')
    with pytest.raises(StatusError) as err:
        impersonate([("Impersonate-User", "system:serviceaccount:ns1:robot")], OPS, authz.authorize)
    assert err.value.status()["message"] == (
        'serviceaccounts "robot" is forbidden: User "ops" cannot impersonate resource "serviceaccounts" '
        'in API group "" in the namespace "ns1"')
    with pytest.raises(StatusError) as err:
        impersonate([("Impersonate-User", "jane"), ("Impersonate-Extra-scopes", "all")], OPS, authz.authorize)
    assert err.value.status()["message"] == (
        'userextras.authentication.k8s.io "all" is forbidden: User "ops" cannot impersonate resource '
        '"userextras/scopes" in API group "authentication.k8s.io" at the cluster scope')


def test_groups_without_a_user_is_an_error(authz: RbacAuthorizer) -> None:
    with pytest.raises(StatusError) as err:
        impersonate([("Impersonate-Group", "system:masters")], OPS, authz.authorize)
    assert err.value.code == 500


def test_masters_may_impersonate_anyone() -> None:
    root = UserInfo("root", "", ("system:masters",))
    user = impersonate([("Impersonate-User", "x"), ("Impersonate-Group", "system:masters")], root,
                       RbacAuthorizer(StaticSource()).authorize)
    assert user == UserInfo("x", "", ("system:masters", "system:authenticated"))


# -- audit -----------------------------------------------------------------------------------------------------

def test_event_shape() -> None:
    t0 = dt.datetime(2026, 1, 2, 3, 4, 5, 123456, tzinfo=dt.UTC)
    attrs = parse_request_info("DELETE", "/api/v1/namespaces/dev/configmaps/c1", {})
    event = make_event(user=OPS, attrs=attrs, request_uri="/api/v1/namespaces/dev/configmaps/c1", code=403,
                       received=t0, now=t0, audit_id="a1", impersonated=UserInfo("jane"), source_ips=["127.0.0.1"],
                       user_agent="kubectl/v1.32.4", status_reason="Forbidden", status_message="nope",
                       annotations={"authorization.k8s.io/decision": "forbid"})
    assert event == {
        "kind": "Event", "apiVersion": "audit.k8s.io/v1", "level": "Metadata", "auditID": "a1",
        "stage": "ResponseComplete", "requestURI": "/api/v1/namespaces/dev/configmaps/c1", "verb": "delete",
        "user": {"username": "ops", "groups": ["system:authenticated"]}, "impersonatedUser": {"username": "jane"},
        "sourceIPs": ["127.0.0.1"], "userAgent": "kubectl/v1.32.4",
        "objectRef": {"resource": "configmaps", "namespace": "dev", "name": "c1", "apiVersion": "v1"},
        "responseStatus": {"metadata": {}, "status": "Failure", "message": "nope", "reason": "Forbidden",
                           "code": 403},
        "requestReceivedTimestamp": "2026-01-02T03:04:05.123456Z", "stageTimestamp": "2026-01-02T03:04:05.123456Z",
        "annotations": {"authorization.k8s.io/decision": "forbid"}}
    health = make_event(user=OPS, attrs=parse_request_info("GET", "/healthz", {}), request_uri="/healthz", code=200,
                        received=t0)
    assert "objectRef" not in health and health["responseStatus"] == {"metadata": {}, "code": 200}


def test_audit_log_writes_json_lines(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit" / "audit.log")
    assert log.enabled
    attrs = parse_request_info("GET", "/api/v1/pods", {})
    for i in range(50):
        log.log(make_event(user=OPS, attrs=attrs, request_uri="/api/v1/pods", code=200,
                           received=dt.datetime.now(dt.UTC), audit_id=str(i)))
    log.close()
    lines = (tmp_path / "audit" / "audit.log").read_text().splitlines()
    assert [json.loads(line)["auditID"] for line in lines] == [str(i) for i in range(50)]


def test_audit_log_off_by_default(tmp_path: Path) -> None:
    log = AuditLog(None)
    assert not log.enabled
    log.log({"x": 1})
    log.close()


def test_auditor_hook_records_the_acting_user(tmp_path: Path) -> None:
    from aiohttp.test_utils import make_mocked_request
    from mini_kube.apiserver.auth.auditor import ACTING, Auditor

    auditor = Auditor(str(tmp_path / "a.log"))
    request = make_mocked_request("DELETE", "/api/v1/namespaces/dev/configmaps/c1",
                                  headers={"User-Agent": "kubectl/v1.32.4"})
    request[ACTING] = (OPS, parse_request_info("DELETE", request.path, {}))
    auditor.record_response(request, 200)
    auditor.record_response(make_mocked_request("GET", "/healthz"), 200)  # never authorized: not recorded
    auditor.log.close()
    (line,) = (tmp_path / "a.log").read_text().splitlines()
    event = json.loads(line)
    assert (event["verb"], event["user"]["username"], event["userAgent"]) == ("delete", "ops", "kubectl/v1.32.4")
    assert event["objectRef"] == {"resource": "configmaps", "namespace": "dev", "name": "c1", "apiVersion": "v1"}
    assert event["responseStatus"] == {"metadata": {}, "code": 200}
