"""The LimitRanger admission plugin through real kubectl: a namespace's LimitRange fills in the requests and
limits a Pod's containers leave unset (and says so in an annotation), and refuses Pods and claims outside its
min/max/ratio with upstream's 403 messages; a changed or deleted LimitRange applies to the next request."""

from __future__ import annotations

import base64
import json

import pytest

from tests.helpers import kubectl, new_namespace

pytestmark = pytest.mark.slow  # each test here takes more than a few seconds


LIMIT_RANGE = """
apiVersion: v1
kind: LimitRange
metadata: {name: limits}
spec:
  limits:
  - type: Container
    min: {cpu: 50m, memory: 100Mi}
    max: {cpu: 500m, memory: 500Mi}
    default: {cpu: 400m, memory: 500Mi}
    defaultRequest: {cpu: 100m, memory: 200Mi}
    maxLimitRequestRatio: {cpu: "4"}
  - type: Pod
    max: {memory: 800Mi}
  - type: PersistentVolumeClaim
    min: {storage: 1Gi}
    max: {storage: 5Gi}
"""


@pytest.fixture(scope="module")
def cluster():
    from mini_kube.testing import MiniKube

    with MiniKube(controllers=False, scheduler=False) as kube:
        yield kube


def pod(name: str, *containers: dict) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": {"containers": [
        {"name": c.get("name", "app"), "image": "registry.k8s.io/pause:3.10", "resources": c.get("resources", {})}
        for c in containers]}})


def get(kube, ns: str, name: str) -> dict:
    return json.loads(kubectl(kube, "-n", ns, "get", "pod", name, "-o", "json").stdout)


def test_defaults_are_filled_in_and_announced(cluster):
    ns = new_namespace(cluster, "lr")
    kubectl(cluster, "-n", ns, "apply", "-f", "-", input=LIMIT_RANGE)
    kubectl(cluster, "-n", ns, "create", "-f", "-", input=pod("bare", {}))
    bare = get(cluster, ns, "bare")
    assert bare["spec"]["containers"][0]["resources"] == {"limits": {"cpu": "400m", "memory": "500Mi"},
                                                          "requests": {"cpu": "100m", "memory": "200Mi"}}
    assert bare["metadata"]["annotations"]["kubernetes.io/limit-ranger"] == \
        "LimitRanger plugin set: cpu, memory request for container app; cpu, memory limit for container app"
    assert bare["status"]["qosClass"] == "Burstable"
    # a limit without a request: the request defaults to the limit first, so only the memory comes from the range
    kubectl(cluster, "-n", ns, "create", "-f", "-", input=pod("partial", {"resources": {"limits": {"cpu": "300m"}}}))
    partial = get(cluster, ns, "partial")
    assert partial["spec"]["containers"][0]["resources"] == {"limits": {"cpu": "300m", "memory": "500Mi"},
                                                             "requests": {"cpu": "300m", "memory": "200Mi"}}
    assert partial["metadata"]["annotations"]["kubernetes.io/limit-ranger"] == \
        "LimitRanger plugin set: memory request for container app; memory limit for container app"


def test_pods_and_claims_outside_the_range_are_refused(cluster):
    ns = new_namespace(cluster, "lr")
    kubectl(cluster, "-n", ns, "apply", "-f", "-", input=LIMIT_RANGE)
    big = kubectl(cluster, "-n", ns, "create", "-f", "-", check=False, input=pod("big", {"resources": {
        "requests": {"cpu": "10m", "memory": "100Mi"}, "limits": {"cpu": "600m", "memory": "500Mi"}}}))
    assert 'pods "big" is forbidden: [minimum cpu usage per Container is 50m, but request is 10m, maximum cpu ' \
           'usage per Container is 500m, but limit is 600m, cpu max limit to request ratio per Container is 4, but ' \
           'provided ratio is 60.000000]' in big.stderr
    two = kubectl(cluster, "-n", ns, "create", "-f", "-", check=False, input=pod(
        "two", {"name": "a", "resources": {"limits": {"memory": "450Mi"}}},
        {"name": "b", "resources": {"limits": {"memory": "450Mi"}}}))
    assert 'pods "two" is forbidden: maximum memory usage per Pod is 800Mi, but limit is 900Mi' in two.stderr
    claim = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "c"},
             "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "10Gi"}}}}
    refused = kubectl(cluster, "-n", ns, "create", "-f", "-", input=json.dumps(claim), check=False)
    assert 'persistentvolumeclaims "c" is forbidden: maximum storage usage per PersistentVolumeClaim is 5Gi, but ' \
           'request is 10Gi' in refused.stderr

    kubectl(cluster, "-n", ns, "patch", "limitrange", "limits", "--type=json", "-p",
            '[{"op": "replace", "path": "/spec/limits/2/max/storage", "value": "20Gi"}]')
    kubectl(cluster, "-n", ns, "create", "-f", "-", input=json.dumps(claim))
    kubectl(cluster, "-n", ns, "delete", "limitrange", "limits")
    kubectl(cluster, "-n", ns, "create", "-f", "-", input=pod("free", {"resources": {"limits": {"cpu": "2"}}}))
    assert "annotations" not in get(cluster, ns, "free")["metadata"]


def test_containers_a_webhook_adds_get_defaults_in_the_reinvocation_round(cluster, webhook_server):
    """A mutating webhook runs after LimitRanger and adds a container; its change reinvokes the built-in mutators,
    so the added container gets the LimitRange's defaults too, as upstream's reinvocation does."""
    from tests.admission.hooks import MUTATING, client_config, configuration, webhook

    ns = new_namespace(cluster, "lr")
    kubectl(cluster, "-n", ns, "apply", "-f", "-", input=LIMIT_RANGE.replace("    max: {memory: 800Mi}", "    max: {}"))
    sidecar = {"name": "added", "image": "registry.k8s.io/pause:3.10"}

    def add_container(request: dict) -> dict:
        names = [c["name"] for c in request["object"]["spec"]["containers"]]
        ops = [] if "added" in names else [{"op": "add", "path": "/spec/containers/-", "value": sidecar}]
        return {"allowed": True, "patchType": "JSONPatch", "patch": base64.b64encode(json.dumps(ops).encode()).decode()}

    path = webhook_server.handle("add-container", add_container)
    hook = webhook("add.example.com", client_config(webhook_server, path), resources=("pods",),
                   operations=("CREATE",), namespaceSelector={"matchLabels": {"kubernetes.io/metadata.name": ns}})
    cluster.client.create(MUTATING, configuration("MutatingWebhookConfiguration", f"{ns}-hooks", hook))
    kubectl(cluster, "-n", ns, "create", "-f", "-", input=pod("grown", {}))
    containers = get(cluster, ns, "grown")["spec"]["containers"]
    assert [c["name"] for c in containers] == ["app", "added"]
    assert containers[1]["resources"] == {"limits": {"cpu": "400m", "memory": "500Mi"},
                                          "requests": {"cpu": "100m", "memory": "200Mi"}}
