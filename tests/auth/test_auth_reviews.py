"""Review APIs and TokenRequest: the objects kubectl auth whoami / can-i / create token get back."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from mini_kube.apiserver.auth import bootstrap, reviews
from mini_kube.apiserver.auth.rbac import RbacAuthorizer, StaticSource
from mini_kube.apiserver.auth.sa_token import ServiceAccountTokens
from mini_kube.apiserver.auth.tokenrequest import token_request
from mini_kube.apiserver.auth.user import UserInfo
from mini_kube.apiserver.errors import StatusError

REFERENCE = Path(__file__).resolve().parents[1] / "fixtures" / "reference" / "protobuf"
G = "rbac.authorization.k8s.io"
ADMIN = UserInfo("kubernetes-admin", "", ("system:masters", "system:authenticated"))
ALICE = UserInfo("alice", "", ("system:authenticated",))


@pytest.fixture(scope="module")
def authz() -> RbacAuthorizer:
    return RbacAuthorizer(StaticSource(bootstrap.default_objects()).add(
        {"kind": "Role", "metadata": {"name": "r1", "namespace": "pb"},
         "rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["p1"]}]},
        {"kind": "RoleBinding", "metadata": {"name": "rb1", "namespace": "pb"},
         "roleRef": {"apiGroup": G, "kind": "Role", "name": "r1"}, "subjects": [{"kind": "User", "name": "alice"}]},
        {"kind": "RoleBinding", "metadata": {"name": "broken", "namespace": "pb"},
         "roleRef": {"apiGroup": G, "kind": "Role", "name": "gone"}, "subjects": [{"kind": "User", "name": "alice"}]},
    ))


def _ssar(spec: dict) -> dict:
    return {"kind": "SelfSubjectAccessReview", "apiVersion": "authorization.k8s.io/v1", "metadata": {}, "spec": spec}


def test_whoami() -> None:
    now = dt.datetime(2026, 11, 22, 2, 21, 28, tzinfo=dt.UTC)
    got = reviews.self_subject_review(UserInfo("admin", "admin", ("system:masters", "system:authenticated")), now)
    assert got == {"kind": "SelfSubjectReview", "apiVersion": "authentication.k8s.io/v1",
                   "metadata": {"creationTimestamp": "2026-11-22T02:21:28Z"},
                   "status": {"userInfo": {"username": "admin", "uid": "admin",
                                           "groups": ["system:masters", "system:authenticated"]}}}
    assert got == json.loads((REFERENCE / "selfsubjectreview.json").read_text())


def test_ssar_allowed_for_masters_without_reason(authz: RbacAuthorizer) -> None:
    spec = {"resourceAttributes": {"namespace": "pb", "verb": "list", "resource": "pods"}}
    got = reviews.self_subject_access_review(_ssar(spec), ADMIN, authz)
    assert got["status"] == {"allowed": True}
    assert got["spec"] == spec and got["metadata"] == {"creationTimestamp": None}


def test_ssar_denied_is_just_not_allowed(authz: RbacAuthorizer) -> None:
    spec = {"resourceAttributes": {"namespace": "default", "verb": "create", "resource": "pods"}}
    assert reviews.self_subject_access_review(_ssar(spec), ALICE, authz)["status"] == {"allowed": False}


def test_ssar_non_resource(authz: RbacAuthorizer) -> None:
    spec = {"nonResourceAttributes": {"path": "/healthz", "verb": "get"}}
    status = reviews.self_subject_access_review(_ssar(spec), ALICE, authz)["status"]
    assert status == {"allowed": True, "reason": ('RBAC: allowed by ClusterRoleBinding "system:discovery" of '
                                                'ClusterRole "system:discovery" to Group "system:authenticated"')}


def test_ssar_validation() -> None:
    with pytest.raises(StatusError) as err:
        reviews.self_subject_access_review(_ssar({}), ALICE, None)  # type: ignore[arg-type]
    status = err.value.status()
    assert status["code"] == 422
    assert status["message"] == ('SelfSubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes: '
                                 'Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes '
                                 "must be specified")
    assert status["details"]["causes"][0]["field"] == "spec.resourceAttributes"


def test_sar_reason_names_the_binding(authz: RbacAuthorizer) -> None:
    body = {"kind": "SubjectAccessReview", "apiVersion": "authorization.k8s.io/v1", "metadata": {},
            "spec": {"resourceAttributes": {"namespace": "pb", "verb": "get", "resource": "pods", "name": "p1"},
                     "user": "alice", "groups": ["devs"]}}
    got = reviews.subject_access_review(body, authz)
    assert got["status"] == {"allowed": True,
                             "reason": 'RBAC: allowed by RoleBinding "rb1/pb" of Role "r1" to User "alice"'}
    body["spec"]["resourceAttributes"]["name"] = "p2"
    assert reviews.subject_access_review(body, authz)["status"] == {
        "allowed": False, "reason": 'RBAC: role.rbac.authorization.k8s.io "gone" not found'}


def test_sar_needs_a_user_or_group(authz: RbacAuthorizer) -> None:
    body = {"spec": {"nonResourceAttributes": {"path": "/", "verb": "get"}}}
    with pytest.raises(StatusError, match="at least one of user or group must be specified"):
        reviews.subject_access_review(body, authz)


def test_local_sar_is_confined_to_its_namespace(authz: RbacAuthorizer) -> None:
    body = {"metadata": {"namespace": "pb"},
            "spec": {"resourceAttributes": {"namespace": "pb", "verb": "get", "resource": "pods", "name": "p1"},
                     "user": "alice"}}
    assert reviews.local_subject_access_review(body, "pb", authz)["status"]["allowed"]
    body["spec"]["resourceAttributes"]["namespace"] = "other"
    with pytest.raises(StatusError, match="must match metadata.namespace"):
        reviews.local_subject_access_review(body, "pb", authz)


def test_rules_review_for_admin(authz: RbacAuthorizer) -> None:
    body = {"kind": "SelfSubjectRulesReview", "spec": {"namespace": "default"}}
    got = reviews.self_subject_rules_review(body, ADMIN, authz)
    assert got["spec"] == {} and got["metadata"] == {"creationTimestamp": None}
    status = got["status"]
    assert status["incomplete"] is False and "evaluationError" not in status
    assert {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]} in status["resourceRules"]
    assert {"verbs": ["create"], "apiGroups": ["authentication.k8s.io"], "resources": ["selfsubjectreviews"]} \
        in status["resourceRules"]
    assert {"verbs": ["*"], "nonResourceURLs": ["*"]} in status["nonResourceRules"]
    assert {"verbs": ["get"], "nonResourceURLs": ["/healthz", "/livez", "/readyz", "/version", "/version/"]} \
        in status["nonResourceRules"]


def test_rules_review_reports_resolution_errors(authz: RbacAuthorizer) -> None:
    status = reviews.self_subject_rules_review({"spec": {"namespace": "pb"}}, ALICE, authz)["status"]
    assert {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["p1"]} \
        in status["resourceRules"]
    assert status["evaluationError"] == 'role.rbac.authorization.k8s.io "gone" not found'
    with pytest.raises(StatusError, match="no namespace on request"):
        reviews.self_subject_rules_review({"spec": {}}, ALICE, authz)


# -- TokenRequest ----------------------------------------------------------------------------------------------

SA = {"metadata": {"name": "sa1", "namespace": "pb", "uid": "57be85e5"}}


def test_token_request_defaults_and_shape(pki) -> None:
    tokens = ServiceAccountTokens(pki.sa_key)
    now = dt.datetime(2026, 11, 22, 2, 21, 28, tzinfo=dt.UTC)
    got = token_request({"kind": "TokenRequest", "apiVersion": "authentication.k8s.io/v1", "spec": {}}, SA, tokens,
                        now=now)
    assert got["metadata"] == {"name": "sa1", "namespace": "pb", "creationTimestamp": "2026-11-22T02:21:28Z"}
    assert got["spec"] == {"audiences": ["https://kubernetes.default.svc.cluster.local"], "expirationSeconds": 3600,
                           "boundObjectRef": None}
    assert got["status"]["expirationTimestamp"] == "2026-11-22T03:21:28Z"
    token = got["status"]["token"]
    assert token.count(".") == 2


def test_token_request_validation(pki) -> None:
    tokens = ServiceAccountTokens(pki.sa_key)
    with pytest.raises(StatusError) as err:
        token_request({"spec": {"expirationSeconds": 60}}, SA, tokens)
    assert err.value.status()["message"] == ('TokenRequest.authentication.k8s.io "sa1" is invalid: '
                                             "spec.expirationSeconds: Invalid value: 60: may not specify a duration "
                                             "less than 10 minutes")


TOKEN_DECODE = 'TokenRequest in version "v1" cannot be handled as a TokenRequest: json: cannot unmarshal '


@pytest.mark.parametrize(("body", "code", "message"), [
    ({"spec": "x"}, 400, TOKEN_DECODE + "string into Go struct field TokenRequest.spec of type v1.TokenRequestSpec"),
    ({"spec": {"audiences": "x"}}, 400,  # was taken as ["x"]
     TOKEN_DECODE + "string into Go struct field TokenRequestSpec.spec.audiences of type []string"),
    ({"spec": {"expirationSeconds": 3600.5}}, 400,  # was a 422
     TOKEN_DECODE + "number 3600.5 into Go struct field TokenRequestSpec.spec.expirationSeconds of type int64"),
    ({"kind": "Pod", "spec": {}}, 400, "the kind in the data (Pod) does not match the expected kind (TokenRequest)"),
    ({"metadata": {"name": "other"}}, 422, 'TokenRequest.authentication.k8s.io "sa1" is invalid: metadata.name: '
                                           'Invalid value: "other": must match the service account name if specified'),
    ({"metadata": {"namespace": "x"}}, 422, 'TokenRequest.authentication.k8s.io "sa1" is invalid: metadata.namespace: '
                                            'Invalid value: "x": must match the service account namespace if '
                                            "specified"),
])
def test_token_request_bodies_are_checked(pki, body, code, message) -> None:
    """{"spec": "x"} was a 500 (dict() of a string); the others were issued a token or answered a 422."""
    with pytest.raises(StatusError) as err:
        token_request(body, SA, ServiceAccountTokens(pki.sa_key))
    assert (err.value.code, err.value.status()["message"]) == (code, message)


def test_token_request_bound_to_a_pod(pki) -> None:
    tokens = ServiceAccountTokens(pki.sa_key)
    objects = {("Pod", "pb", "p1"): {"metadata": {"uid": "pod-uid"}, "spec": {"serviceAccountName": "sa1",
                                                                               "nodeName": "n1"}},
               ("Node", "", "n1"): {"metadata": {"uid": "node-uid"}}}
    ref = {"kind": "Pod", "apiVersion": "v1", "name": "p1"}
    got = token_request({"spec": {"boundObjectRef": ref}}, SA, tokens, lambda *k: objects.get(k))
    live = {("ServiceAccount", "pb", "sa1"): "57be85e5", ("Pod", "pb", "p1"): "pod-uid"}
    user = tokens.verify(got["status"]["token"], lambda *k: live.get(k))
    assert user.extra["authentication.kubernetes.io/pod-name"] == ("p1",)
    assert user.extra["authentication.kubernetes.io/node-name"] == ("n1",)
    with pytest.raises(StatusError) as err:
        token_request({"spec": {"boundObjectRef": {**ref, "name": "nope"}}}, SA, tokens, lambda *k: objects.get(k))
    assert err.value.code == 404
    with pytest.raises(StatusError) as err:
        token_request({"spec": {"boundObjectRef": {**ref, "uid": "old"}}}, SA, tokens, lambda *k: objects.get(k))
    assert err.value.code == 409
