"""`pods/binding` and `bindings` through real kubectl and the official Python client: a Pod is assigned once
(PodScheduled=True), a second binding is 409 with upstream's message, a missing Pod 404."""

from __future__ import annotations

import json
import uuid

import kubernetes
import pytest
from mini_kube.client import ApiError
from mini_kube.machinery.refs import NAMESPACES, PODS

from tests.helpers import kubectl


@pytest.fixture(scope="module")
def cluster():
    from mini_kube.testing import MiniKube

    with MiniKube(controllers="namespace") as kube:
        yield kube


@pytest.fixture
def ns(cluster):
    name = f"b-{uuid.uuid4().hex[:8]}"
    cluster.client.create(NAMESPACES, {"metadata": {"name": name}})
    return name


def _pod(kube, ns: str, name: str) -> dict:
    return kube.client.create(PODS, {"metadata": {"name": name}, "spec": {
        "containers": [{"name": "c", "image": "nginx"}]}}, ns)


def test_binding_subresource_assigns_the_pod_once(cluster, ns):
    pod = _pod(cluster, ns, "web")
    body = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "web", "uid": pod["metadata"]["uid"]},
            "target": {"apiVersion": "v1", "kind": "Node", "name": "node-1"}}
    answer = cluster.client.request("POST", f"/api/v1/namespaces/{ns}/pods/web/binding", body=body)
    assert answer == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}
    got = cluster.client.get(PODS, "web", ns)
    assert got["spec"]["nodeName"] == "node-1"
    scheduled = [c for c in got["status"]["conditions"] if c["type"] == "PodScheduled"]
    assert len(scheduled) == 1 and scheduled[0]["status"] == "True" and scheduled[0]["lastTransitionTime"]
    shown = kubectl(cluster, "-n", ns, "get", "pod", "web", "-o", "wide").stdout
    assert "node-1" in shown
    with pytest.raises(ApiError) as err:
        cluster.client.request("POST", f"/api/v1/namespaces/{ns}/pods/web/binding",
                               body={**body, "target": {"kind": "Node", "name": "node-2"}})
    assert err.value.status == 409
    assert err.value.body["message"] == \
        'Operation cannot be fulfilled on pods/binding "web": pod web is already assigned to node "node-1"'
    with pytest.raises(ApiError) as err:
        cluster.client.request("POST", f"/api/v1/namespaces/{ns}/pods/nope/binding",
                               body={**body, "metadata": {"name": "nope"}})
    assert err.value.status == 404 and err.value.body["message"] == 'pods "nope" not found'
    with pytest.raises(ApiError) as err:
        cluster.client.request("POST", f"/api/v1/namespaces/{ns}/pods/web/binding",
                               body={**body, "metadata": {"name": "other"}})
    assert err.value.status == 400


def test_bindings_resource_through_kubectl_create(cluster, ns):
    _pod(cluster, ns, "manual")
    manifest = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "manual"},
                "target": {"apiVersion": "v1", "kind": "Node", "name": "node-7"}}
    result = kubectl(cluster, "-n", ns, "create", "-f", "-", input=json.dumps(manifest))
    assert result.stdout.strip().endswith("created")  # kubectl names the Status it got back, as upstream
    assert cluster.client.get(PODS, "manual", ns)["spec"]["nodeName"] == "node-7"
    again = kubectl(cluster, "-n", ns, "create", "-f", "-", input=json.dumps(manifest), check=False)
    assert again.returncode != 0 and 'pod manual is already assigned to node "node-7"' in again.stderr


def test_python_client_binds_a_pod(cluster, ns):
    pod = _pod(cluster, ns, "py")
    api = kubernetes.client.CoreV1Api(kubernetes.config.new_client_from_config(config_file=cluster.kubeconfig))
    body = kubernetes.client.V1Binding(
        metadata=kubernetes.client.V1ObjectMeta(name="py", uid=pod["metadata"]["uid"]),
        target=kubernetes.client.V1ObjectReference(kind="Node", name="node-3"))
    response = api.create_namespaced_pod_binding("py", ns, body, _preload_content=False)
    assert response.status == 201 and json.loads(response.data)["status"] == "Success"
    assert api.read_namespaced_pod("py", ns).spec.node_name == "node-3"
    stale = kubernetes.client.V1Binding(metadata=kubernetes.client.V1ObjectMeta(name="py", uid="not-the-uid"),
                                        target=kubernetes.client.V1ObjectReference(kind="Node", name="n"))
    with pytest.raises(kubernetes.client.ApiException) as err:
        api.create_namespaced_pod_binding("py", ns, stale, _preload_content=False)
    assert err.value.status == 409 and "Precondition failed: UID in precondition" in str(err.value.body)
