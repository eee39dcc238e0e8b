"""ValidatingAdmissionPolicy and its bindings: CEL validations, actions, params, failure policy, with kubectl."""

from __future__ import annotations

import json
from typing import Any

import pytest
from mini_kube.client import ApiError, ResourceRef
from mini_kube.machinery.refs import CONFIGMAPS, DEPLOYMENTS, NAMESPACES

from tests.admission.hooks import BINDINGS, POLICIES
from tests.helpers import kubectl

DEPLOYMENT_RULES = {"resourceRules": [{"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"],
                                       "resources": ["deployments"]}]}
CONFIGMAP_RULES = {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"],
                                      "resources": ["configmaps"]}]}


def policy(name: str, *validations: dict[str, Any], rules: dict[str, Any] = DEPLOYMENT_RULES,
           **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": name},
            "spec": {"matchConstraints": rules, "validations": list(validations), **spec}}


def binding(name: str, policy_name: str, actions: tuple[str, ...] = ("Deny",), **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": name},
            "spec": {"policyName": policy_name, "validationActions": list(actions), **spec}}


def deployment(name: str, replicas: int, **labels: str) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "labels": labels},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}


def install(kube, *objects: dict[str, Any]) -> None:
    for obj in objects:
        kube.client.create(POLICIES if obj["kind"] == "ValidatingAdmissionPolicy" else BINDINGS, obj)


def absent(kube, ref: ResourceRef, name: str, namespace: str | None = "default") -> bool:
    try:
        kube.client.get(ref, name, namespace)
    except ApiError as exc:
        return exc.status == 404
    return False


REPLICAS = {"expression": "object.spec.replicas <= 5"}


def test_policy_denial_through_kubectl_and_the_api(mini_kube):
    install(mini_kube, policy("max-replicas", REPLICAS), binding("max-replicas-binding", "max-replicas"))
    out = kubectl(mini_kube, "create", "-f", "-", input=json.dumps(deployment("big", 6)), check=False)
    assert out.returncode == 1
    assert out.stderr.strip() == (
        'The deployments "big" is invalid: : ValidatingAdmissionPolicy \'max-replicas\' with binding '
        "'max-replicas-binding' denied request: failed expression: object.spec.replicas <= 5")
    assert absent(mini_kube, DEPLOYMENTS, "big")
    with pytest.raises(ApiError) as info:
        mini_kube.client.create(DEPLOYMENTS, deployment("big", 7), "default")
    body = info.value.body
    assert info.value.status == 422 and body["reason"] == "Invalid"
    assert body["message"] == ('deployments.apps "big" is forbidden: ValidatingAdmissionPolicy \'max-replicas\' '
                               "with binding 'max-replicas-binding' denied request: failed expression: "
                               "object.spec.replicas <= 5")
    assert body["details"]["kind"] == "deployments" and body["details"]["group"] == "apps"
    kubectl(mini_kube, "create", "-f", "-", input=json.dumps(deployment("small", 2)))
    scaled = kubectl(mini_kube, "patch", "deployment", "small", "--type=merge", "-p", '{"spec":{"replicas":9}}',
                     check=False)
    assert "denied request: failed expression: object.spec.replicas <= 5" in scaled.stderr


def test_message_expression_and_reason(mini_kube):
    check = {"expression": "object.spec.replicas <= 5", "reason": "Forbidden", "message": "too many",
             "messageExpression": "'replicas ' + string(object.spec.replicas) + ' exceed 5'"}
    install(mini_kube, policy("p", check), binding("b", "p"))
    with pytest.raises(ApiError) as info:
        mini_kube.client.create(DEPLOYMENTS, deployment("d", 8), "default")
    assert info.value.status == 403 and info.value.reason == "Forbidden"
    assert info.value.body["message"].endswith("denied request: replicas 8 exceed 5")
    out = kubectl(mini_kube, "create", "-f", "-", input=json.dumps(deployment("d", 9)), check=False)
    assert out.stderr.strip() == ('Error from server (Forbidden): error when creating "STDIN": deployments.apps "d" '
                                  "is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: "
                                  "replicas 9 exceed 5")


def test_warn_action_adds_a_warning_and_admits(mini_kube):
    install(mini_kube, policy("p", {**REPLICAS, "message": "prefer at most 5 replicas"}),
            binding("b", "p", ("Warn", "Audit")))
    out = kubectl(mini_kube, "create", "-f", "-", input=json.dumps(deployment("warned", 6)))
    assert ("Warning: Validation failed for ValidatingAdmissionPolicy 'p' with binding 'b': prefer at most 5 "
            "replicas") in out.stderr
    assert mini_kube.client.get(DEPLOYMENTS, "warned", "default")["spec"]["replicas"] == 6


def test_params_by_name_and_selector(mini_kube):
    params = policy("limits", {"expression": "object.spec.replicas <= int(params.data.max)",
                               "messageExpression": "'at most ' + params.data.max + ' replicas'"},
                    paramKind={"apiVersion": "v1", "kind": "ConfigMap"})
    mini_kube.client.create(NAMESPACES, {"metadata": {"name": "team"}})
    mini_kube.client.create(CONFIGMAPS, {"metadata": {"name": "limits"}, "data": {"max": "3"}}, "default")
    mini_kube.client.create(CONFIGMAPS, {"metadata": {"name": "strict", "labels": {"limits": "yes"}},
                                         "data": {"max": "1"}}, "team")
    install(mini_kube, params, binding("by-name", "limits", paramRef={
        "name": "limits", "namespace": "default", "parameterNotFoundAction": "Deny"},
        matchResources={"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "default"}}}))
    install(mini_kube, binding("by-selector", "limits", paramRef={
        "selector": {"matchLabels": {"limits": "yes"}}, "parameterNotFoundAction": "Allow"}))
    mini_kube.client.create(DEPLOYMENTS, deployment("three", 3), "default")  # by-selector finds none here
    with pytest.raises(ApiError) as info:
        mini_kube.client.create(DEPLOYMENTS, deployment("four", 4), "default")
    assert info.value.body["message"].endswith("with binding 'by-name' denied request: at most 3 replicas")
    with pytest.raises(ApiError) as info:
        mini_kube.client.create(DEPLOYMENTS, deployment("two", 2), "team")
    assert info.value.body["message"].endswith("with binding 'by-selector' denied request: at most 1 replicas")


def test_missing_param_with_deny_refuses(mini_kube):
    install(mini_kube, policy("p", {"expression": "params != null"}, paramKind={"apiVersion": "v1",
                                                                                "kind": "ConfigMap"}),
            binding("b", "p", paramRef={"name": "absent", "parameterNotFoundAction": "Deny"}))
    with pytest.raises(ApiError) as info:
        mini_kube.client.create(DEPLOYMENTS, deployment("d", 1), "default")
    assert info.value.body["message"] == (
        "deployments.apps \"d\" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: "
        "failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction")


def test_runtime_errors_follow_the_failure_policy(mini_kube):
    missing = {"expression": "object.spec.paused == false"}  # `paused` is unset: a runtime error
    install(mini_kube, policy("strict", missing, rules=DEPLOYMENT_RULES), binding("strict-b", "strict"))
    with pytest.raises(ApiError) as info:
        mini_kube.client.create(DEPLOYMENTS, deployment("d", 1), "default")
    assert info.value.body["message"].endswith(
        "denied request: expression 'object.spec.paused == false' resulted in error: no such key: paused")
    mini_kube.client.delete(POLICIES, "strict")
    install(mini_kube, policy("lenient", missing, failurePolicy="Ignore"), binding("lenient-b", "lenient"))
    mini_kube.client.create(DEPLOYMENTS, deployment("d", 1), "default")


def test_variables_request_namespace_and_match_conditions(mini_kube):
    mini_kube.client.create(NAMESPACES, {"metadata": {"name": "prod", "labels": {"env": "prod"}}})
    checks = policy(
        "labels", {"expression": "!variables.isProd || variables.owner != ''",
                   "messageExpression": "'owner label required in ' + namespaceObject.metadata.name"},
        {"expression": "request.userInfo.username != '' && request.operation in ['CREATE', 'UPDATE']"},
        rules=CONFIGMAP_RULES,
        variables=[{"name": "labels", "expression": "has(object.metadata.labels) ? object.metadata.labels : {}"},
                   {"name": "owner", "expression": "'owner' in variables.labels ? variables.labels.owner : ''"},
                   {"name": "isProd", "expression": "'env' in namespaceObject.metadata.labels && "
                                                  "namespaceObject.metadata.labels.env == 'prod'"}],
        matchConditions=[{"name": "not-exempt", "expression": "!object.metadata.name.startsWith('exempt-')"}])
    install(mini_kube, checks, binding("labels-b", "labels"))
    mini_kube.client.create(CONFIGMAPS, {"metadata": {"name": "free"}}, "default")
    mini_kube.client.create(CONFIGMAPS, {"metadata": {"name": "exempt-x"}}, "prod")
    mini_kube.client.create(CONFIGMAPS, {"metadata": {"name": "owned", "labels": {"owner": "me"}}}, "prod")
    with pytest.raises(ApiError) as info:
        mini_kube.client.create(CONFIGMAPS, {"metadata": {"name": "orphan"}}, "prod")
    assert info.value.body["message"].endswith("denied request: owner label required in prod")


def test_unbound_policy_does_nothing_and_binding_match_resources_narrow(mini_kube):
    install(mini_kube, policy("p", REPLICAS))
    mini_kube.client.create(DEPLOYMENTS, deployment("free", 9), "default")
    install(mini_kube, binding("only-labelled", "p", matchResources={
        "objectSelector": {"matchLabels": {"limited": "yes"}}}))
    mini_kube.client.create(DEPLOYMENTS, deployment("free2", 9), "default")
    with pytest.raises(ApiError):
        mini_kube.client.create(DEPLOYMENTS, deployment("limited", 9, limited="yes"), "default")


def test_bad_policy_and_binding_are_refused_and_not_stored(mini_kube):
    bad = policy("bad", {"expression": "object.spec.replicas <"}, {"expression": "params.x"})
    out = kubectl(mini_kube, "create", "-f", "-", input=json.dumps(bad), check=False)
    assert out.returncode == 1
    assert 'The ValidatingAdmissionPolicy "bad" is invalid:' in out.stderr
    assert ('spec.validations[0].expression: Invalid value: "object.spec.replicas <": compilation failed: ERROR: '
            "<input>:1:23: Syntax error:") in out.stderr
    assert ('spec.validations[1].expression: Invalid value: "params.x": compilation failed: ERROR: <input>:1:1: '
            "undeclared reference to 'params' (in container '')") in out.stderr
    assert absent(mini_kube, POLICIES, "bad", None)
    empty = policy("empty")
    del empty["spec"]["matchConstraints"]
    with pytest.raises(ApiError) as info:
        mini_kube.client.create(POLICIES, empty)
    causes = {(c["field"], c["message"]) for c in info.value.body["details"]["causes"]}
    assert ("spec.matchConstraints", "Required value") in causes
    assert ("spec.validations", "Required value: validations or auditAnnotations must contain at least one item") \
        in causes
    out = kubectl(mini_kube, "create", "-f", "-", input=json.dumps(binding("b", "p", ("Deny", "Warn", "Shout"))),
                  check=False)
    assert 'spec.validationActions[2]: Unsupported value: "Shout": supported values: "Audit", "Deny", "Warn"' \
        in out.stderr
    assert "must not contain both Deny and Warn" in out.stderr
    assert absent(mini_kube, BINDINGS, "b", None)


def test_policies_do_not_apply_to_admission_configuration(mini_kube):
    everything = {"resourceRules": [{"apiGroups": ["*"], "apiVersions": ["*"], "operations": ["*"],
                                     "resources": ["*"]}]}
    install(mini_kube, policy("lockout", {"expression": "false"}, rules=everything), binding("lockout-b", "lockout"))
    with pytest.raises(ApiError):
        mini_kube.client.create(CONFIGMAPS, {"metadata": {"name": "x"}}, "default")
    mini_kube.client.delete(BINDINGS, "lockout-b")  # admission configuration stays writable
    mini_kube.client.create(CONFIGMAPS, {"metadata": {"name": "x"}}, "default")
