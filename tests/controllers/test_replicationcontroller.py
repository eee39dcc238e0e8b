"""ReplicationControllers through real kubectl: the controller keeps `replicas` Pods (owned with a `kind:
ReplicationController` controller reference), adopts matching orphans and releases relabelled Pods, scales with
`kubectl scale rc`, reports replicas/fullyLabeledReplicas/readyReplicas/availableReplicas/observedGeneration, shows
a ReplicaFailure condition while Pods cannot be created, and its deletion cascades to the Pods."""

from __future__ import annotations

import functools
import uuid

import pytest
from mini_kube.client import ResourceRef
from mini_kube.machinery.refs import PODS, REPLICATIONCONTROLLERS

from tests.helpers import eventually as _eventually
from tests.helpers import kubectl

eventually = functools.partial(_eventually, timeout=20.0, interval=0.05)
NAMESPACES = ResourceRef("", "v1", "namespaces", namespaced=False)

RC_YAML = """
apiVersion: v1
kind: ReplicationController
metadata: {name: web}
spec:
  replicas: 3
  selector: {app: web}
  template:
    metadata: {labels: {app: web, tier: front}}
    spec:
      containers: [{name: c, image: registry.k8s.io/pause:3.10}]
"""


@pytest.fixture(scope="module")
def cluster():
    """Every controller, without a kubelet: Pods stay Pending unless the test marks them Ready."""
    from mini_kube.testing import MiniKube

    with MiniKube(scheduler=False) as kube:
        yield kube


@pytest.fixture
def namespace(cluster):
    name = f"rc-{uuid.uuid4().hex[:8]}"
    cluster.client.create(NAMESPACES, {"metadata": {"name": name}})
    return name


def _pods(kube, ns: str) -> list[dict]:
    return [p for p in kube.client.list(PODS, ns)["items"] if not p["metadata"].get("deletionTimestamp")]


def _status(kube, ns: str) -> dict:
    return kube.client.get(REPLICATIONCONTROLLERS, "web", ns).get("status") or {}


def test_replication_controller_creates_scales_adopts_and_cascades(cluster, namespace):
    kube, ns = cluster, namespace
    kube.client.create(PODS, {"metadata": {"name": "orphan", "labels": {"app": "web"}}, "spec": {
        "containers": [{"name": "c", "image": "i"}]}}, ns)
    kubectl(kube, "-n", ns, "create", "-f", "-", input=RC_YAML)
    eventually(lambda: len(_pods(kube, ns)) == 3)
    rc = kube.client.get(REPLICATIONCONTROLLERS, "web", ns)
    pods = _pods(kube, ns)
    assert "orphan" in [p["metadata"]["name"] for p in pods]  # adopted, so only two were created
    for pod in pods:
        (ref,) = pod["metadata"]["ownerReferences"]
        assert ref == {"apiVersion": "v1", "kind": "ReplicationController", "name": "web",
                       "uid": rc["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}
    # the orphan lacks the template's `tier` label: counted in replicas, not in fullyLabeledReplicas
    eventually(lambda: (s := _status(kube, ns)).get("replicas") == 3 and s.get("fullyLabeledReplicas") == 2)

    ready = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True",
                                                 "lastTransitionTime": "2026-01-01T00:00:00Z"}]}
    kube.client.patch(PODS, "orphan", {"status": ready}, ns, subresource="status")
    eventually(lambda: (s := _status(kube, ns)).get("readyReplicas") == 1 and s.get("availableReplicas") == 1)

    kubectl(kube, "-n", ns, "scale", "rc", "web", "--replicas=5")
    eventually(lambda: len(_pods(kube, ns)) == 5)
    eventually(lambda: (s := _status(kube, ns)).get("replicas") == 5 and s.get("observedGeneration") == 2)
    kubectl(kube, "-n", ns, "scale", "rc/web", "--replicas=1")
    eventually(lambda: [p["metadata"]["name"] for p in _pods(kube, ns)] == ["orphan"])  # not-ready ones go first
    out = kubectl(kube, "-n", ns, "get", "rc", "web").stdout.split("\n")
    assert out[0].split() == ["NAME", "DESIRED", "CURRENT", "READY", "AGE"] and out[1].split()[:4] == [
        "web", "1", "1", "1"]

    kube.client.patch(PODS, "orphan", {"metadata": {"labels": {"app": "gone"}}}, ns)  # released, and replaced
    eventually(lambda: not kube.client.get(PODS, "orphan", ns)["metadata"].get("ownerReferences"))
    eventually(lambda: len([p for p in _pods(kube, ns) if p["metadata"]["labels"]["app"] == "web"]) == 1)

    kubectl(kube, "-n", ns, "delete", "rc", "web")  # background cascading deletion by the garbage collector
    eventually(lambda: [p["metadata"]["name"] for p in _pods(kube, ns)] == ["orphan"])


def test_replica_failure_condition_while_pods_are_refused(cluster, namespace):
    """Pod Security refuses the template's privileged Pod: the RC shows ReplicaFailure/FailedCreate with the
    refusal, and the condition goes once the namespace allows the Pods and they are created."""
    kube, ns = cluster, namespace
    kubectl(kube, "label", "namespace", ns, "pod-security.kubernetes.io/enforce=restricted")
    privileged = RC_YAML.replace("image: registry.k8s.io/pause:3.10}",
                                 "image: registry.k8s.io/pause:3.10, securityContext: {privileged: true}}")
    kubectl(kube, "-n", ns, "create", "-f", "-", input=privileged)

    def failure() -> dict | None:
        return next((c for c in _status(kube, ns).get("conditions") or () if c["type"] == "ReplicaFailure"), None)

    condition = eventually(failure)
    assert condition["status"] == "True" and condition["reason"] == "FailedCreate"
    assert "forbidden" in condition["message"] and "privileged" in condition["message"]
    assert condition["lastTransitionTime"]
    assert _pods(kube, ns) == []
    kubectl(kube, "label", "namespace", ns, "pod-security.kubernetes.io/enforce=privileged", "--overwrite")
    eventually(lambda: len(_pods(kube, ns)) == 3 and failure() is None)


def test_a_delete_naming_no_propagation_orphans_a_replication_controllers_pods(cluster, namespace):
    """core/v1 ReplicationControllers default to orphaning (upstream's DefaultGarbageCollectionPolicy, kept for
    compatibility): a DELETE without propagationPolicy or orphanDependents leaves the Pods, released; kubectl's
    explicit background propagation still cascades (the test above)."""
    kube, ns = cluster, namespace
    kubectl(kube, "-n", ns, "create", "-f", "-", input=RC_YAML)
    eventually(lambda: len(_pods(kube, ns)) == 3)
    kube.client.delete(REPLICATIONCONTROLLERS, "web", ns)
    eventually(lambda: not kube.client.list(REPLICATIONCONTROLLERS, ns)["items"])
    eventually(lambda: all(not p["metadata"].get("ownerReferences") for p in _pods(kube, ns)))
    assert len(_pods(kube, ns)) == 3
