"""Dynamic admission webhooks against a real TLS webhook server, driven with real kubectl."""

from __future__ import annotations

import base64
import json
import socket
import time

import orjson
import pytest
from mini_kube.client import ApiError, ResourceRef
from mini_kube.machinery.refs import (
    CONFIGMAPS,
    CUSTOMRESOURCEDEFINITIONS,
    DEPLOYMENTS,
    ENDPOINTS,
    ENDPOINTSLICES,
    NAMESPACES,
    SERVICES,
)

from tests.admission.hooks import MUTATING, VALIDATING, allow, client_config, configuration, make_ca, webhook
from tests.helpers import kubectl

CM = """apiVersion: v1
kind: ConfigMap
metadata:
  name: {name}
  labels: {labels}
data: {{k: v}}
"""
DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}}}
spec:
  replicas: 1
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec: {{containers: [{{name: c, image: nginx}}]}}
"""


def cm(name: str, **labels: str) -> str:
    return CM.format(name=name, labels=json.dumps(labels))


def patch_of(*ops: dict) -> str:
    return base64.b64encode(orjson.dumps(list(ops))).decode()


def deny_labelled(request: dict) -> dict:
    labels = (request["object"].get("metadata") or {}).get("labels") or {}
    if "forbidden" in labels:
        return {"allowed": False, "status": {"code": 403, "reason": "Forbidden",
                                             "message": "label 'forbidden' is not allowed"}}
    return {"allowed": True}


def register(kube, ref: ResourceRef, kind: str, *hooks: dict, name: str = "hooks") -> None:
    kube.client.create(ref, configuration(kind, name, *hooks))


def gone(kube, name: str) -> bool:
    try:
        kube.client.get(CONFIGMAPS, name, "default")
    except ApiError as exc:
        return exc.status == 404
    return False


def test_validating_webhook_denial_reaches_kubectl_in_upstream_words(mini_kube, webhook_server):
    path = webhook_server.handle("deny-labelled", deny_labelled)
    register(mini_kube, VALIDATING, "ValidatingWebhookConfiguration",
             webhook("deny.example.com", client_config(webhook_server, path)))
    ok = kubectl(mini_kube, "create", "-f", "-", input=cm("fine", app="x"))
    assert 'configmap/fine created' in ok.stdout
    bad = kubectl(mini_kube, "create", "-f", "-", input=cm("bad", forbidden="yes"), check=False)
    assert bad.returncode == 1
    assert bad.stderr.strip() == ('Error from server (Forbidden): error when creating "STDIN": admission webhook '
                                  '"deny.example.com" denied the request: label \'forbidden\' is not allowed')
    assert gone(mini_kube, "bad")
    with pytest.raises(ApiError) as info:
        mini_kube.client.create(CONFIGMAPS, {"metadata": {"name": "bad2", "labels": {"forbidden": "1"}}}, "default")
    assert info.value.status == 403 and info.value.reason == "Forbidden"
    assert [r["request"]["name"] for r in webhook_server.reviews[path]] == ["fine", "bad", "bad2"]


def test_denial_without_status_uses_the_default_wording_and_code(mini_kube, webhook_server):
    path = webhook_server.handle("deny-bare", lambda request: {"allowed": False})
    register(mini_kube, VALIDATING, "ValidatingWebhookConfiguration",
             webhook("bare.example.com", client_config(webhook_server, path)))
    with pytest.raises(ApiError) as info:
        mini_kube.client.create(CONFIGMAPS, {"metadata": {"name": "x"}}, "default")
    assert info.value.status == 400
    assert info.value.body["message"] == 'admission webhook "bare.example.com" denied the request without explanation'


def test_mutating_webhook_json_patch_and_warnings(mini_kube, webhook_server):
    def mutate(request: dict) -> dict:
        return {"allowed": True, "warnings": ["labelled by the webhook"], "patchType": "JSONPatch",
                "patch": patch_of({"op": "add", "path": "/metadata/labels/mutated", "value": "yes"},
                                  {"op": "replace", "path": "/data/k", "value": "patched"})}

    path = webhook_server.handle("mutate", mutate)
    register(mini_kube, MUTATING, "MutatingWebhookConfiguration",
             webhook("mutate.example.com", client_config(webhook_server, path)))
    out = kubectl(mini_kube, "create", "-f", "-", input=cm("m", app="x"))
    assert "Warning: labelled by the webhook" in out.stderr
    stored = mini_kube.client.get(CONFIGMAPS, "m", "default")
    assert stored["metadata"]["labels"] == {"app": "x", "mutated": "yes"}
    assert stored["data"] == {"k": "patched"}
    dry = kubectl(mini_kube, "create", "-f", "-", "--dry-run=server", "-o", "json", input=cm("dry", app="y"))
    assert json.loads(dry.stdout)["metadata"]["labels"]["mutated"] == "yes"
    assert gone(mini_kube, "dry")
    assert webhook_server.reviews[path][-1]["request"]["dryRun"] is True


def test_review_request_carries_operation_user_objects_and_options(mini_kube, webhook_server):
    path = webhook_server.handle("record", allow)
    register(mini_kube, VALIDATING, "ValidatingWebhookConfiguration",
             webhook("record.example.com", client_config(webhook_server, path),
                     operations=("CREATE", "UPDATE", "DELETE")))
    kubectl(mini_kube, "create", "-f", "-", input=cm("r", app="one"))
    kubectl(mini_kube, "label", "configmap", "r", "app=two", "--overwrite")
    kubectl(mini_kube, "delete", "configmap", "r")
    create, update, delete = (r["request"] for r in webhook_server.reviews[path])
    review = webhook_server.reviews[path][0]
    assert review["apiVersion"] == "admission.k8s.io/v1" and review["kind"] == "AdmissionReview"
    assert create["kind"] == {"group": "", "version": "v1", "kind": "ConfigMap"}
    assert create["resource"] == {"group": "", "version": "v1", "resource": "configmaps"}
    assert create["requestKind"] == create["kind"] and create["requestResource"] == create["resource"]
    assert (create["name"], create["namespace"], create["operation"]) == ("r", "default", "CREATE")
    assert create["userInfo"]["username"] == "system:admin"
    assert "system:masters" in create["userInfo"]["groups"]
    assert create["oldObject"] is None and create["object"]["metadata"]["labels"] == {"app": "one"}
    assert create["object"]["metadata"]["uid"]  # validating webhooks see the object as it will be stored
    assert create["dryRun"] is False
    assert create["options"]["kind"] == "CreateOptions" and create["options"]["apiVersion"] == "meta.k8s.io/v1"
    assert create["options"]["fieldManager"] == "kubectl-create"
    assert update["operation"] == "UPDATE" and update["options"]["kind"] == "UpdateOptions"
    assert update["oldObject"]["metadata"]["labels"] == {"app": "one"}
    assert update["object"]["metadata"]["labels"] == {"app": "two"}
    assert delete["operation"] == "DELETE" and delete["object"] is None
    assert delete["oldObject"]["metadata"]["labels"] == {"app": "two"}
    assert delete["options"]["kind"] == "DeleteOptions"
    assert len({create["uid"], update["uid"], delete["uid"]}) == 3


def test_delete_is_refused_by_a_validating_webhook(mini_kube, webhook_server):
    path = webhook_server.handle("no-delete", lambda request: {
        "allowed": False, "status": {"code": 403, "reason": "Forbidden", "message": "keep it"}})
    mini_kube.client.create(CONFIGMAPS, {"metadata": {"name": "keep"}}, "default")
    register(mini_kube, VALIDATING, "ValidatingWebhookConfiguration",
             webhook("keep.example.com", client_config(webhook_server, path), operations=("DELETE",)))
    out = kubectl(mini_kube, "delete", "configmap", "keep", check=False)
    assert out.returncode == 1
    assert 'admission webhook "keep.example.com" denied the request: keep it' in out.stderr
    assert mini_kube.client.get(CONFIGMAPS, "keep", "default")["metadata"]["name"] == "keep"


def test_mutating_webhook_may_not_patch_a_delete(mini_kube, webhook_server):
    path = webhook_server.handle("patch-delete", lambda request: {
        "allowed": True, "patchType": "JSONPatch", "patch": patch_of({"op": "add", "path": "/x", "value": 1})})
    mini_kube.client.create(CONFIGMAPS, {"metadata": {"name": "d"}}, "default")
    register(mini_kube, MUTATING, "MutatingWebhookConfiguration",
             webhook("pd.example.com", client_config(webhook_server, path), operations=("DELETE",)))
    with pytest.raises(ApiError) as info:
        mini_kube.client.delete(CONFIGMAPS, "d", "default")
    assert info.value.status == 500
    assert info.value.body["message"] == ('Internal error occurred: admission webhook "pd.example.com" attempted to '
                                          "modify the object, which is not supported for this operation")


def _service(kube, server, spec: dict) -> None:
    kube.client.create(SERVICES, {"metadata": {"name": "hooks"}, "spec": spec}, "default")


def _by_service(kube, server, path: str, port: int = 443) -> None:
    service = {"service": {"namespace": "default", "name": "hooks", "path": f"/{path}", "port": port},
               "caBundle": server.ca_bundle}
    register(kube, VALIDATING, "ValidatingWebhookConfiguration", webhook("svc.example.com", service))


def _denied_through_service(kube, server, path: str) -> None:
    bad = kubectl(kube, "create", "-f", "-", input=cm("bad", forbidden="1"), check=False)
    assert 'admission webhook "svc.example.com" denied the request: label \'forbidden\' is not allowed' in bad.stderr
    assert len(server.reviews[path]) == 1


def test_service_reference_reaches_the_webhook_through_its_endpoints(mini_kube, webhook_server):
    if webhook_server.host_ip is None:
        pytest.skip("no non-loopback address to put in Endpoints")
    path = webhook_server.handle("by-endpoints", deny_labelled)
    _service(mini_kube, webhook_server, {"ports": [{"name": "https", "port": 443, "targetPort": 9443}]})
    mini_kube.client.create(ENDPOINTS, {"metadata": {"name": "hooks"}, "subsets": [{
        "addresses": [{"ip": webhook_server.host_ip}], "ports": [{"name": "https", "port": webhook_server.port}]}]},
        "default")
    _by_service(mini_kube, webhook_server, path)
    _denied_through_service(mini_kube, webhook_server, path)


def test_service_reference_reaches_the_webhook_through_its_endpoint_slices(mini_kube, webhook_server):
    if webhook_server.host_ip is None:
        pytest.skip("no non-loopback address to put in an EndpointSlice")
    path = webhook_server.handle("by-slices", deny_labelled)
    _service(mini_kube, webhook_server, {"ports": [{"port": 8443, "targetPort": 9443}]})
    mini_kube.client.create(ENDPOINTSLICES, {"metadata": {"name": "hooks-abc", "labels": {
        "kubernetes.io/service-name": "hooks"}}, "addressType": "IPv4", "endpoints": [
        {"addresses": [webhook_server.host_ip], "conditions": {"ready": True}}],
        "ports": [{"name": "", "port": webhook_server.port, "protocol": "TCP"}]}, "default")
    _by_service(mini_kube, webhook_server, path, port=8443)
    _denied_through_service(mini_kube, webhook_server, path)


def test_service_reference_to_an_external_name(mini_kube, webhook_server):
    path = webhook_server.handle("by-external-name", deny_labelled)
    _service(mini_kube, webhook_server, {"type": "ExternalName", "externalName": "localhost"})
    _by_service(mini_kube, webhook_server, path, port=webhook_server.port)
    _denied_through_service(mini_kube, webhook_server, path)


def test_missing_service_fails_closed_with_upstream_wording(mini_kube, webhook_server):
    service = {"service": {"namespace": "default", "name": "nowhere", "path": "/x"},
               "caBundle": webhook_server.ca_bundle}
    register(mini_kube, VALIDATING, "ValidatingWebhookConfiguration", webhook("gone.example.com", service))
    out = kubectl(mini_kube, "create", "configmap", "c", check=False)
    assert out.returncode == 1
    assert ('Internal error occurred: failed calling webhook "gone.example.com": failed to call webhook: '
            'Post "https://nowhere.default.svc:443/x?timeout=10s": service "nowhere" not found') in out.stderr
    assert gone(mini_kube, "c")


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_failure_policy_fail_refuses_and_ignore_lets_through(mini_kube, webhook_server):
    port = _closed_port()
    dead = {"url": f"https://127.0.0.1:{port}/dead", "caBundle": webhook_server.ca_bundle}
    register(mini_kube, VALIDATING, "ValidatingWebhookConfiguration", webhook("dead.example.com", dead))
    out = kubectl(mini_kube, "create", "configmap", "refused", check=False)
    assert out.stderr.strip() == (
        'error: failed to create configmap: Internal error occurred: failed calling webhook "dead.example.com": '
        f'failed to call webhook: Post "https://127.0.0.1:{port}/dead?timeout=10s": dial tcp 127.0.0.1:{port}: '
        "connect: connection refused")
    assert gone(mini_kube, "refused")
    mini_kube.client.delete(VALIDATING, "hooks")
    register(mini_kube, VALIDATING, "ValidatingWebhookConfiguration",
             webhook("dead.example.com", dead, failurePolicy="Ignore"), name="hooks-ignore")
    deadline = time.monotonic() + 5
    while True:  # the old configuration is gone from the cache at once; this is only a guard
        out = kubectl(mini_kube, "create", "configmap", "allowed", check=False)
        if out.returncode == 0 or time.monotonic() > deadline:
            break
    assert out.returncode == 0, out.stderr


def test_timeout_seconds_is_honoured(mini_kube, webhook_server):
    async def slow(request: dict) -> dict:
        import asyncio

        await asyncio.sleep(3)
        return {"allowed": True}

    path = webhook_server.handle("slow", slow)
    register(mini_kube, VALIDATING, "ValidatingWebhookConfiguration",
             webhook("slow.example.com", client_config(webhook_server, path), timeoutSeconds=1))
    started = time.monotonic()
    with pytest.raises(ApiError) as info:
        mini_kube.client.create(CONFIGMAPS, {"metadata": {"name": "late"}}, "default")
    assert time.monotonic() - started < 2.5
    assert info.value.status == 500
    assert info.value.body["message"] == (
        'Internal error occurred: failed calling webhook "slow.example.com": failed to call webhook: Post '
        f'"{webhook_server.url(path)}?timeout=1s": context deadline exceeded')


def test_ca_bundle_decides_trust(mini_kube, webhook_server):
    from cryptography.hazmat.primitives import serialization

    other_ca = base64.b64encode(make_ca("someone-else")[0].public_bytes(serialization.Encoding.PEM)).decode()
    path = webhook_server.handle("trust", allow)
    register(mini_kube, VALIDATING, "ValidatingWebhookConfiguration",
             webhook("trust.example.com", client_config(webhook_server, path, ca_bundle=other_ca)))
    with pytest.raises(ApiError) as info:
        mini_kube.client.create(CONFIGMAPS, {"metadata": {"name": "untrusted"}}, "default")
    assert info.value.body["message"].endswith(
        "tls: failed to verify certificate: x509: certificate signed by unknown authority")
    assert webhook_server.reviews[path] == []


def test_invalid_responses_are_call_failures(mini_kube, webhook_server):
    path = webhook_server.handle("bad-uid", lambda request: {
        "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": {"uid": "nope", "allowed": True}})
    register(mini_kube, VALIDATING, "ValidatingWebhookConfiguration",
             webhook("uid.example.com", client_config(webhook_server, path)))
    with pytest.raises(ApiError) as info:
        mini_kube.client.create(CONFIGMAPS, {"metadata": {"name": "x"}}, "default")
    uid = webhook_server.reviews[path][0]["request"]["uid"]
    assert info.value.body["message"] == ('Internal error occurred: failed calling webhook "uid.example.com": '
                                          f'received invalid webhook response: expected response.uid="{uid}", '
                                          'got "nope"')


def test_rules_and_selectors_decide_who_is_called(mini_kube, webhook_server):
    path = webhook_server.handle("selective", allow)
    config = client_config(webhook_server, path)
    register(mini_kube, VALIDATING, "ValidatingWebhookConfiguration",
             webhook("ns.example.com", config, namespaceSelector={"matchLabels": {"hooked": "yes"}}),
             webhook("obj.example.com", config, objectSelector={"matchExpressions": [
                 {"key": "watch", "operator": "Exists"}]}),
             webhook("secrets.example.com", config, resources=("secrets",)))
    mini_kube.client.create(NAMESPACES, {"metadata": {"name": "hooked", "labels": {"hooked": "yes"}}})
    mini_kube.client.create(CONFIGMAPS, {"metadata": {"name": "a"}}, "default")  # nobody
    mini_kube.client.create(CONFIGMAPS, {"metadata": {"name": "b"}}, "hooked")  # ns.example.com
    mini_kube.client.create(CONFIGMAPS, {"metadata": {"name": "c", "labels": {"watch": ""}}}, "default")  # obj
    names = sorted(r["request"]["name"] for r in webhook_server.reviews[path])
    assert names == ["b", "c"]


def test_exact_match_policy_and_subresource_rules(mini_kube, webhook_server):
    path = webhook_server.handle("subresources", allow)
    config = client_config(webhook_server, path)
    register(mini_kube, VALIDATING, "ValidatingWebhookConfiguration",
             webhook("scale.example.com", config, resources=("deployments/scale",), groups=("apps",),
                     operations=("UPDATE",)),
             webhook("status.example.com", config, resources=("deployments/status",), groups=("apps",),
                     operations=("UPDATE",)),
             webhook("main.example.com", config, resources=("deployments",), groups=("apps",),
                     operations=("UPDATE",), matchPolicy="Exact"))
    kubectl(mini_kube, "create", "-f", "-", input=DEPLOYMENT.format(name="web"))
    kubectl(mini_kube, "scale", "deployment", "web", "--replicas=3")
    kubectl(mini_kube, "patch", "deployment", "web", "--subresource=status", "--type=merge",
            "-p", '{"status": {"replicas": 3}}')
    kubectl(mini_kube, "label", "deployment", "web", "tier=fe")
    scale, status, main = (r["request"] for r in webhook_server.reviews[path])
    assert scale["subResource"] == "scale" and scale["requestSubResource"] == "scale"
    assert scale["kind"] == {"group": "autoscaling", "version": "v1", "kind": "Scale"}
    assert scale["resource"] == {"group": "apps", "version": "v1", "resource": "deployments"}
    assert scale["object"]["kind"] == "Scale" and scale["object"]["spec"] == {"replicas": 3}
    assert scale["oldObject"]["spec"] == {"replicas": 1}
    assert status["subResource"] == "status" and status["kind"]["kind"] == "Deployment"
    assert status["object"]["status"]["replicas"] == 3
    assert "subResource" not in main and main["object"]["metadata"]["labels"] == {"tier": "fe"}


def test_mutating_webhook_on_scale_changes_the_replicas(mini_kube, webhook_server):
    path = webhook_server.handle("cap-scale", lambda request: {
        "allowed": True, "patchType": "JSONPatch",
        "patch": patch_of({"op": "replace", "path": "/spec/replicas", "value": 2})})
    register(mini_kube, MUTATING, "MutatingWebhookConfiguration",
             webhook("cap.example.com", client_config(webhook_server, path), resources=("deployments/scale",),
                     groups=("apps",), operations=("UPDATE",)))
    kubectl(mini_kube, "create", "-f", "-", input=DEPLOYMENT.format(name="capped"))
    kubectl(mini_kube, "scale", "deployment", "capped", "--replicas=9")
    assert mini_kube.client.get(DEPLOYMENTS, "capped", "default")["spec"]["replicas"] == 2


def test_dry_run_honours_side_effects(mini_kube, webhook_server):
    path = webhook_server.handle("effects", allow)
    register(mini_kube, VALIDATING, "ValidatingWebhookConfiguration",
             webhook("safe.example.com", client_config(webhook_server, path), sideEffects="NoneOnDryRun"))
    kubectl(mini_kube, "create", "configmap", "dry", "--dry-run=server")
    assert gone(mini_kube, "dry") and webhook_server.reviews[path][-1]["request"]["dryRun"] is True
    # A configuration stored before v1 forbade side effects (written straight to the store here).
    res = mini_kube.server.resources.lookup("admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations")
    legacy = configuration("ValidatingWebhookConfiguration", "legacy",
                           webhook("effects.example.com", client_config(webhook_server, path), sideEffects="Unknown"))
    legacy["metadata"].update(uid="legacy-uid", creationTimestamp="2020-01-01T00:00:00Z")
    mini_kube.run(mini_kube.server.store.create(res.key(None, "legacy"), lambda rev: orjson.dumps(legacy)))
    out = kubectl(mini_kube, "create", "configmap", "dry2", "--dry-run=server", check=False)
    assert out.returncode == 1
    assert 'admission webhook "effects.example.com" does not support dry run' in out.stderr
    before = len(webhook_server.reviews[path])
    kubectl(mini_kube, "create", "configmap", "real")  # not a dry run: called as usual
    assert len(webhook_server.reviews[path]) == before + 2


def test_reinvocation_if_needed(mini_kube, webhook_server):
    def first(request: dict) -> dict:
        labels = request["object"]["metadata"].get("labels") or {}
        seen = "saw-second" if "second" in labels else "alone"
        op = "replace" if "first" in labels else "add"
        return {"allowed": True, "patchType": "JSONPatch",
                "patch": patch_of({"op": op, "path": "/metadata/labels/first", "value": seen})}

    def second(request: dict) -> dict:
        return {"allowed": True, "patchType": "JSONPatch",
                "patch": patch_of({"op": "add", "path": "/metadata/labels/second", "value": "yes"})}

    a, b = webhook_server.handle("first", first), webhook_server.handle("second", second)
    register(mini_kube, MUTATING, "MutatingWebhookConfiguration",
             webhook("first.example.com", client_config(webhook_server, a), reinvocationPolicy="IfNeeded"),
             name="a-first")
    register(mini_kube, MUTATING, "MutatingWebhookConfiguration",
             webhook("second.example.com", client_config(webhook_server, b)), name="b-second")
    mini_kube.client.create(CONFIGMAPS, {"metadata": {"name": "re", "labels": {"app": "x"}}}, "default")
    labels = mini_kube.client.get(CONFIGMAPS, "re", "default")["metadata"]["labels"]
    assert labels == {"app": "x", "first": "saw-second", "second": "yes"}
    assert len(webhook_server.reviews[a]) == 2 and len(webhook_server.reviews[b]) == 1


def test_match_conditions_filter_calls(mini_kube, webhook_server):
    path = webhook_server.handle("conditional", deny_labelled)
    register(mini_kube, VALIDATING, "ValidatingWebhookConfiguration",
             webhook("cond.example.com", client_config(webhook_server, path), matchConditions=[
                 {"name": "not-system", "expression": "!request.userInfo.username.startsWith('system:node')"},
                 {"name": "named-x", "expression": "object.metadata.name.startsWith('x')"}]))
    mini_kube.client.create(CONFIGMAPS, {"metadata": {"name": "y", "labels": {"forbidden": "1"}}}, "default")
    with pytest.raises(ApiError):
        mini_kube.client.create(CONFIGMAPS, {"metadata": {"name": "x1", "labels": {"forbidden": "1"}}}, "default")
    assert [r["request"]["name"] for r in webhook_server.reviews[path]] == ["x1"]


def test_webhook_configurations_themselves_are_exempt(mini_kube, webhook_server):
    path = webhook_server.handle("everything", lambda request: {"allowed": False})
    register(mini_kube, VALIDATING, "ValidatingWebhookConfiguration",
             webhook("all.example.com", client_config(webhook_server, path), resources=("*",), groups=("*",)))
    mini_kube.client.delete(VALIDATING, "hooks")  # not locked out
    assert webhook_server.reviews[path] == []


def test_bad_webhook_configuration_is_refused_and_not_stored(mini_kube, webhook_server):
    bad = configuration("ValidatingWebhookConfiguration", "bad", {
        "name": "short", "clientConfig": {"url": "http://127.0.0.1/x?q=1"},
        "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]}],
        "timeoutSeconds": 31})
    out = kubectl(mini_kube, "create", "-f", "-", input=json.dumps(bad), check=False)
    assert out.returncode == 1
    err = out.stderr
    assert 'The ValidatingWebhookConfiguration "bad" is invalid:' in err
    assert ('webhooks[0].name: Invalid value: "short": should be a domain with at least three segments separated '
            "by dots") in err
    assert "webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun" in err
    assert ('webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds'
            in err)
    assert ("webhooks[0].clientConfig.url: Invalid value: \"http\": 'https' is the only allowed URL scheme; "
            "desired format: https://host[/path]") in err
    assert "webhooks[0].admissionReviewVersions: Required value: must specify one of v1, v1beta1" in err
    with pytest.raises(ApiError) as info:
        mini_kube.client.get(VALIDATING, "bad")
    assert info.value.status == 404


def test_webhook_configuration_changes_apply_to_the_next_request(mini_kube, webhook_server):
    path = webhook_server.handle("toggle", deny_labelled)
    register(mini_kube, VALIDATING, "ValidatingWebhookConfiguration",
             webhook("toggle.example.com", client_config(webhook_server, path), resources=("secrets",)))
    mini_kube.client.create(CONFIGMAPS, {"metadata": {"name": "t1", "labels": {"forbidden": "1"}}}, "default")
    config = mini_kube.client.get(VALIDATING, "hooks")
    config["webhooks"][0]["rules"][0]["resources"] = ["configmaps"]
    mini_kube.client.replace(VALIDATING, config)
    with pytest.raises(ApiError):
        mini_kube.client.create(CONFIGMAPS, {"metadata": {"name": "t2", "labels": {"forbidden": "1"}}}, "default")


WIDGETS_V2 = ResourceRef("example.com", "v2", "widgets")


def _two_version_crd(kube) -> None:
    schema = {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}
    kube.client.create(CUSTOMRESOURCEDEFINITIONS, {"metadata": {"name": "widgets.example.com"}, "spec": {
        "group": "example.com", "scope": "Namespaced", "names": {"plural": "widgets", "kind": "Widget"},
        "versions": [{"name": "v1", "served": True, "storage": True, "schema": schema},
                     {"name": "v2", "served": True, "storage": False, "schema": schema}]}})
    deadline = time.monotonic() + 5
    while kube.server.resources.lookup("example.com", "v2", "widgets") is None and time.monotonic() < deadline:
        time.sleep(0.02)


def test_equivalent_match_policy_sends_the_matched_version(mini_kube, webhook_server):
    _two_version_crd(mini_kube)
    path = webhook_server.handle("equivalent", lambda request: {
        "allowed": True, "patchType": "JSONPatch",
        "patch": patch_of({"op": "add", "path": "/spec/seenAs", "value": request["object"]["apiVersion"]})})
    config = client_config(webhook_server, path)
    rules = {"resources": ("widgets",), "groups": ("example.com",)}
    only_v1 = [{"operations": ["CREATE"], "apiGroups": ["example.com"], "apiVersions": ["v1"],
                "resources": ["widgets"]}]
    register(mini_kube, MUTATING, "MutatingWebhookConfiguration",
             {**webhook("equivalent.example.com", config, **rules), "rules": only_v1},
             {**webhook("exact.example.com", config, matchPolicy="Exact", **rules), "rules": only_v1})
    created = mini_kube.client.create(WIDGETS_V2, {"metadata": {"name": "w"}, "spec": {"size": 1}}, "default")
    assert created["apiVersion"] == "example.com/v2" and created["spec"]["seenAs"] == "example.com/v1"
    (request,) = (r["request"] for r in webhook_server.reviews[path])  # the Exact webhook was not called
    assert request["kind"] == {"group": "example.com", "version": "v1", "kind": "Widget"}
    assert request["resource"] == {"group": "example.com", "version": "v1", "resource": "widgets"}
    assert request["requestKind"]["version"] == "v2" and request["requestResource"]["version"] == "v2"
