"""Table-driven checks of the admission pieces: rule matching, response verification, CEL, validation."""

from __future__ import annotations

import base64
from types import SimpleNamespace
from typing import Any

import orjson
import pytest
from mini_kube.apiserver.admission import review
from mini_kube.apiserver.admission.chain import Attributes
from mini_kube.apiserver.admission.config_validation import (
    validate_binding,
    validate_policy,
    validate_resources,
)
from mini_kube.apiserver.admission.expressions import Activation, EvaluationError, compile_expression
from mini_kube.apiserver.admission.matching import rule_matches
from mini_kube.apiserver.registry.generic import WriteOptions
from mini_kube.apiserver.registry.kinds import builtin_resources
from mini_kube.apiserver.resources import ResourceRegistry

RESOURCES = ResourceRegistry(builtin_resources())


def attrs(plural: str, group: str = "", *, operation: str = "CREATE", subresource: str = "",
          namespace: str | None = "default", name: str = "x") -> Attributes:
    res = next(r for r in RESOURCES.all() if r.plural == plural and r.group == group)
    ctx = SimpleNamespace(registry=SimpleNamespace(resources=RESOURCES), subresource=subresource)
    return Attributes(operation, res, namespace if res.namespaced else None, name, subresource,
                      {"metadata": {"name": name}}, None, False, None, WriteOptions(), ctx)  # type: ignore[arg-type]


def rule(resources: list[str], scope: str = "*", operations: tuple[str, ...] = ("*",)) -> dict[str, Any]:
    return {"operations": list(operations), "apiGroups": ["*"], "apiVersions": ["*"], "resources": resources,
            "scope": scope}


@pytest.mark.parametrize(("resources", "subresource", "expected"), [
    (["pods"], "", True),
    (["pods"], "status", False),
    (["pods/status"], "status", True),
    (["pods/*"], "status", True),
    (["pods/*"], "", True),  # upstream: a `*` subresource matches the main resource too
    (["*"], "", True),
    (["*"], "status", False),
    (["*/*"], "status", True),
    (["*/status"], "status", True),
    (["*/scale"], "status", False),
    (["deployments"], "", False),
])
def test_resource_and_subresource_wildcards(resources, subresource, expected):
    a = attrs("pods", operation="UPDATE", subresource=subresource)
    assert rule_matches(rule(resources), a, "", "v1", "pods") is expected


@pytest.mark.parametrize(("plural", "namespace", "scope", "operation", "expected"), [
    ("configmaps", "default", "Namespaced", "CREATE", True),
    ("configmaps", "default", "Cluster", "CREATE", False),
    ("clusterroles", None, "Cluster", "CREATE", True),
    ("clusterroles", None, "Namespaced", "CREATE", False),
    ("namespaces", None, "Cluster", "UPDATE", True),  # a Namespace is cluster-scoped even with its own namespace
    ("namespaces", None, "Namespaced", "UPDATE", False),
])
def test_scope(plural, namespace, scope, operation, expected):
    group = "rbac.authorization.k8s.io" if plural == "clusterroles" else ""
    a = attrs(plural, group, operation=operation, namespace=namespace)
    version = "v1"
    assert rule_matches(rule([plural], scope), a, group, version, plural) is expected


def test_operations_must_match():
    a = attrs("configmaps", operation="DELETE")
    assert not rule_matches(rule(["configmaps"], operations=("CREATE", "UPDATE")), a, "", "v1", "configmaps")
    assert rule_matches(rule(["configmaps"], operations=("DELETE",)), a, "", "v1", "configmaps")


def test_namespace_requests_report_their_own_name_except_on_create():
    assert attrs("namespaces", operation="UPDATE", name="team").request_namespace == "team"
    assert attrs("namespaces", operation="CREATE", name="team").request_namespace == ""


def _answer(**response: Any) -> dict[str, Any]:
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": {"uid": "u", **response}}


PATCH = base64.b64encode(orjson.dumps([{"op": "add", "path": "/a", "value": 1}])).decode()


@pytest.mark.parametrize(("answer", "mutating", "error"), [
    ({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"}, False, "webhook response was absent"),
    ({**_answer(allowed=True), "apiVersion": "admission.k8s.io/v1beta1"}, False,
     "expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got admission.k8s.io/v1beta1, "
     "Kind=AdmissionReview"),
    (_answer(allowed=True, patch=PATCH), True, "webhook returned response.patch but not response.patchType"),
    (_answer(allowed=True, patchType="JSONPatch"), True, "webhook returned response.patchType but not response.patch"),
    (_answer(allowed=True, patch=PATCH, patchType="JSONPatch"), False,
     "validating webhook may not return response.patch"),
    (_answer(allowed=True, patch=PATCH, patchType="Merge"), True, 'unsupported patch type "Merge"'),
])
def test_invalid_answers(answer, mutating, error):
    with pytest.raises(review.InvalidResponse) as info:
        review.verify(answer, "u", "v1", mutating)
    assert str(info.value) == error


def test_v1beta1_answers_need_no_uid_and_patches_are_json_patches():
    answer = {"response": {"allowed": True, "patch": PATCH}}
    response = review.verify(answer, "other", "v1beta1", True)
    assert response.allowed and response.patch == [{"op": "add", "path": "/a", "value": 1}]


@pytest.mark.parametrize(("status", "code", "message"), [
    ({"code": 200, "message": "no"}, 400, 'admission webhook "w" denied the request: no'),
    ({"code": 409, "reason": "AlreadyExists"}, 409, 'admission webhook "w" denied the request: AlreadyExists'),
    (None, 400, 'admission webhook "w" denied the request without explanation'),
])
def test_denial_wording(status, code, message):
    error = review.denial("w", status)
    assert (error.code, error.message) == (code, message)


def test_cel_variables_params_and_errors():
    assert compile_expression("params.x").error.startswith(
        "compilation failed: ERROR: <input>:1:1: undeclared reference to 'params'")
    assert compile_expression("params.x", params=True).error is None
    assert "undefined field 'nope'" in compile_expression("variables.nope == 1").error
    composited = {"a": compile_expression("object.spec.replicas * 2"),
                  "b": compile_expression("variables.a + 1", variables=["a"])}
    activation = Activation({"object": {"spec": {"replicas": 3}}}, composited)
    assert activation.evaluate(compile_expression("variables.b == 7", variables=["a", "b"])) is True
    with pytest.raises(EvaluationError) as info:
        activation.evaluate(compile_expression("object.spec.paused"))
    assert str(info.value) == "expression 'object.spec.paused' resulted in error: no such key: paused"


def test_resource_list_rules():
    assert validate_resources(["*/*", "pods"], "r")[0].detail == "if '*/*' is present, must not specify other resources"
    assert [e.detail for e in validate_resources(["pods/*", "pods/status"], "r")] == [
        "if 'pods/*' is present, must not specify pods/status"]
    assert validate_resources(["pods", "pods/status"], "r") == []


def test_policy_and_binding_validation():
    good = {"spec": {"failurePolicy": "Fail", "matchConstraints": {
        "matchPolicy": "Equivalent", "namespaceSelector": {}, "objectSelector": {},
        "resourceRules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                           "resources": ["pods"]}]},
        "validations": [{"expression": "object.metadata.name != ''", "reason": "Forbidden"}]}}
    assert validate_policy(good) == []
    good["spec"]["validations"][0]["reason"] = "Teapot"
    assert [str(e) for e in validate_policy(good)] == [
        'spec.validations[0].reason: Unsupported value: "Teapot": supported values: "Forbidden", "Invalid", '
        '"RequestEntityTooLarge"']
    errs = validate_binding({"spec": {"policyName": "p", "validationActions": ["Deny"],
                                      "paramRef": {"name": "a", "selector": {}}}})
    assert [str(e) for e in errs] == ["spec.paramRef.name: Forbidden: name and selector are mutually exclusive",
                                      "spec.paramRef.parameterNotFoundAction: Required value"]
