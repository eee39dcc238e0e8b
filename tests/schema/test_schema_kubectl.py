"""Real kubectl reads our OpenAPI (explain, apply's patch type) and gets the real strict-validation errors."""

from __future__ import annotations

import json
import time
import urllib.request

import pytest
from mini_kube.apiserver.resources import ResourceType
from mini_kube.apiserver.schema import openapi

from tests.helpers import kubectl

DEPLOY = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
  labels:
    app: web
spec:
  {replicas}
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
        ports:
        - containerPort: 80
"""

# `kubectl explain deployment.spec.replicas` against kube-apiserver 1.32 (kubectl 1.32).
EXPLAIN_REPLICAS = (
    "GROUP:      apps\nKIND:       Deployment\nVERSION:    v1\n\nFIELD: replicas <integer>\n\n\n"
    "DESCRIPTION:\n    Number of desired pods. This is a pointer to distinguish between explicit\n"
    "    zero and not specified. Defaults to 1.\n    \n\n"
)


def deployment(name: str, replicas: str = "replicas: 1") -> str:
    return DEPLOY.format(name=name, replicas=replicas)


def test_explain_field_matches_the_real_server(mini_kube_session):
    assert kubectl(mini_kube_session, "explain", "deployment.spec.replicas").stdout == EXPLAIN_REPLICAS


def test_explain_nested_struct_lists_its_fields(mini_kube_session):
    out = kubectl(mini_kube_session, "explain", "deployment.spec.strategy").stdout
    assert "FIELD: strategy <DeploymentStrategy>" in out
    assert "rollingUpdate\t<RollingUpdateDeployment>" in out and "type\t<string>" in out
    assert "FIELD: maxSurge <IntOrString>" in kubectl(
        mini_kube_session, "explain", "deployment.spec.strategy.rollingUpdate.maxSurge").stdout
    containers = kubectl(mini_kube_session, "explain", "pod.spec.containers").stdout
    assert "FIELD: containers <[]Container>" in containers and "imagePullPolicy\t<string>" in containers


def test_apply_creates_defaulted_object_and_patches_strategically(mini_kube_session, kube_namespace):
    ns = ["-n", kube_namespace]
    kubectl(mini_kube_session, "apply", "-f", "-", *ns, input=deployment("web"))
    got = json.loads(kubectl(mini_kube_session, "get", "deploy", "web", "-o", "json", *ns).stdout)
    spec = got["spec"]
    assert (spec["replicas"], spec["revisionHistoryLimit"], spec["progressDeadlineSeconds"]) == (1, 10, 600)
    assert spec["strategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}}
    pod = spec["template"]["spec"]
    assert pod["containers"][0]["imagePullPolicy"] == "IfNotPresent"
    assert pod["containers"][0]["ports"] == [{"containerPort": 80, "protocol": "TCP"}]
    assert spec["template"]["metadata"]["creationTimestamp"] is None
    assert got["status"] == {}
    result = kubectl(mini_kube_session, "-v=6", "apply", "-f", "-", *ns, input=deployment("web", "replicas: 2"))
    assert "deployment.apps/web configured" in result.stdout
    assert "GET" in result.stderr and "/openapi/v3/apis/apps/v1?hash=" in result.stderr
    verbose = kubectl(mini_kube_session, "-v=8", "apply", "-f", "-", *ns, input=deployment("web", "replicas: 3"))
    assert "Content-Type: application/strategic-merge-patch+json" in verbose.stderr
    assert json.loads(kubectl(mini_kube_session, "get", "deploy", "web", "-o", "json", *ns).stdout)[
        "spec"]["replicas"] == 3


def test_unknown_fields_are_rejected_in_strict_and_warned_otherwise(mini_kube_session, kube_namespace):
    ns = ["-n", kube_namespace]
    bad = deployment("bad", "replicaz: 2\n  bogus: 1").replace("image: nginx:1.27", "image: nginx:1.27\n        imagez: x")
    created = kubectl(mini_kube_session, "create", "-f", "-", *ns, input=bad, check=False)
    assert created.returncode == 1
    assert ('Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: '
            'unknown field "spec.bogus", unknown field "spec.replicaz", '
            'unknown field "spec.template.spec.containers[0].imagez"') in created.stderr
    kubectl(mini_kube_session, "apply", "-f", "-", *ns, input=deployment("web2"))
    patched = kubectl(mini_kube_session, "apply", "-f", "-", *ns, input=deployment("web2", "replicaz: 2"), check=False)
    assert patched.returncode == 1
    assert 'strict decoding error: unknown field "spec.replicaz"' in patched.stderr
    warned = kubectl(mini_kube_session, "create", "--validate=warn", "-f", "-", *ns,
                     input=deployment("warned", "replicaz: 2"))
    assert 'Warning: unknown field "spec.replicaz"' in warned.stderr
    assert "deployment.apps/warned created" in warned.stdout


def test_explain_custom_resource(mini_kube_session):
    registry = mini_kube_session.server.resources
    row = ResourceType(group="explain.example.com", version="v1", kind="Gizmo", plural="gizmos", namespaced=True,
                       crd={"metadata": {"name": "gizmos.explain.example.com"}},
                       schema={"type": "object", "properties": {"spec": {
                           "type": "object", "description": "What the gizmo should do.",
                           "properties": {"size": {"type": "integer", "description": "How big."}}}}})
    registry.add([row])
    try:
        out = kubectl(mini_kube_session, "explain", "gizmos.spec").stdout
        assert "KIND:       Gizmo" in out and "GROUP:      explain.example.com" in out
        assert "What the gizmo should do." in out and "size\t<integer>" in out
        top = kubectl(mini_kube_session, "explain", "gizmo").stdout
        assert "metadata\t<ObjectMeta>" in top
    finally:
        registry.remove("explain.example.com", "gizmos")


def _serves_v2_protobuf(kube) -> bool:
    request = urllib.request.Request(kube.url + "/openapi/v2", headers={
        "Accept": "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.headers.get("Content-Type", "") == openapi.V2_PROTOBUF
    except OSError:
        return False


@pytest.mark.parametrize("version", ["1.27", "1.28"])
@pytest.mark.slow
def test_old_kubectl_reads_protobuf_openapi_v2(mini_kube_session, kube_namespace, version):
    if not _serves_v2_protobuf(mini_kube_session):
        pytest.skip("the HTTP layer does not answer /openapi/v2 with openapi.openapi_v2_protobuf_bytes yet")
    ns = ["-n", kube_namespace]
    out = kubectl(mini_kube_session, "explain", "deployment.spec.strategy", version=version).stdout
    assert "rollingUpdate\t<RollingUpdateDeployment>" in out
    name = f"old{version.replace('.', '')}"
    kubectl(mini_kube_session, "apply", "-f", "-", *ns, input=deployment(name), version=version)
    bad = kubectl(mini_kube_session, "apply", "-f", "-", *ns, input=deployment(name, "replicaz: 2"),
                  version=version, check=False)
    assert 'strict decoding error: unknown field "spec.replicaz"' in bad.stderr


def test_crd_custom_resource_unknown_field(mini_kube_session, kube_namespace):
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "widgets.strict.example.com"},
           "spec": {"group": "strict.example.com", "scope": "Namespaced",
                    "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                    "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                        "type": "object", "properties": {"spec": {"type": "object", "properties": {
                            "size": {"type": "integer"}}}}}}}]}}
    kubectl(mini_kube_session, "apply", "-f", "-", input=json.dumps(crd))
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if any(r.group == "strict.example.com" for r in mini_kube_session.server.resources.all()):
            break
        time.sleep(0.2)
    else:
        pytest.skip("CustomResourceDefinitions are not served yet")
    widget = {"apiVersion": "strict.example.com/v1", "kind": "Widget", "metadata": {"name": "w1"},
              "spec": {"size": 1, "colour": "red"}}
    out = kubectl(mini_kube_session, "apply", "-f", "-", "-n", kube_namespace, input=json.dumps(widget), check=False)
    assert out.returncode == 1
    assert ('Widget in version "v1" cannot be handled as a Widget: strict decoding error: '
            'unknown field "spec.colour"') in out.stderr
