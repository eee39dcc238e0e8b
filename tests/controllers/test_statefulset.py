"""StatefulSets through real kubectl and the official Python client: ordered creation (a Pod only after its
predecessor is Running and Ready, readiness driven through the status subresource as a kubelet would), reverse
scale-down, claims from volumeClaimTemplates and their retention policy, partitioned rolling updates in reverse
ordinal order, OnDelete, ControllerRevisions with `kubectl rollout status|history|undo`."""

from __future__ import annotations

import contextlib
import datetime as dt
import threading
import time
import uuid

import kubernetes
import pytest
from mini_kube.client import ResourceRef
from mini_kube.machinery.refs import CONTROLLERREVISIONS, PERSISTENTVOLUMECLAIMS, PODS, STATEFULSETS

from tests.controllers.test_workloads import StandInKubelet, eventually
from tests.helpers import kubectl

MANIFEST = """
apiVersion: apps/v1
kind: StatefulSet
metadata: {{name: {name}}}
spec:
  serviceName: {name}-svc
  replicas: {replicas}
  podManagementPolicy: {policy}
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec: {{containers: [{{name: c, image: "img:1"}}]}}
  volumeClaimTemplates:
  - metadata: {{name: data}}
    spec: {{accessModes: [ReadWriteOnce], resources: {{requests: {{storage: 1Gi}}}}}}
"""


@pytest.fixture(scope="module")
def cluster():
    from mini_kube.testing import MiniKube

    with MiniKube(controllers="garbagecollector,statefulset") as kube:
        yield kube


@pytest.fixture
def namespace(cluster):
    name = f"s-{uuid.uuid4().hex[:8]}"
    cluster.client.create(ResourceRef("", "v1", "namespaces", namespaced=False), {"metadata": {"name": name}})
    return name


def names(kube, ns: str) -> list[str]:
    return sorted(p["metadata"]["name"] for p in kube.client.list(PODS, ns)["items"]
                  if not p["metadata"].get("deletionTimestamp"))


def images(kube, ns: str) -> dict[str, str]:
    return {p["metadata"]["name"]: p["spec"]["containers"][0]["image"] for p in kube.client.list(PODS, ns)["items"]}


def set_ready(kube, ns: str, name: str, ready: bool = True) -> None:
    """What a kubelet reports: Running, and Ready (or not)."""
    stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    kube.client.patch(PODS, name, {"status": {"phase": "Running", "conditions": [
        {"type": "Ready", "status": "True" if ready else "False", "lastTransitionTime": stamp}]}}, ns,
        subresource="status")


class Deletions:
    """The order in which Pods of a namespace are deleted, from a watch (the official client)."""

    def __init__(self, kube, ns: str) -> None:
        api = kubernetes.client.CoreV1Api(kubernetes.config.new_client_from_config(config_file=kube.kubeconfig))
        self.api, self.ns, self.order = api, ns, []
        self.version = api.list_namespaced_pod(ns).metadata.resource_version
        self.watch = kubernetes.watch.Watch()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        with contextlib.suppress(Exception):  # the stream ends with the test's server
            for event in self.watch.stream(self.api.list_namespaced_pod, self.ns, resource_version=self.version,
                                           timeout_seconds=30):
                if event["type"] == "DELETED":
                    self.order.append(event["object"].metadata.name)

    def stop(self) -> None:
        self.watch.stop()


@pytest.mark.slow
def test_ordered_ready_creates_one_pod_at_a_time_and_scales_down_in_reverse(cluster, namespace):
    kube, ns = cluster, namespace
    kubectl(kube, "-n", ns, "apply", "-f", "-", input=MANIFEST.format(name="web", replicas=3, policy="OrderedReady"))
    for i in range(3):
        eventually(lambda i=i: names(kube, ns) == [f"web-{j}" for j in range(i + 1)])
        time.sleep(0.4)  # the successor must not appear while this Pod is not Ready
        assert names(kube, ns) == [f"web-{j}" for j in range(i + 1)]
        assert kube.client.get(PERSISTENTVOLUMECLAIMS, f"data-web-{i}", ns)["metadata"]["labels"] == {"app": "web"}
        set_ready(kube, ns, f"web-{i}")
    pod = kube.client.get(PODS, "web-1", ns)
    labels = pod["metadata"]["labels"]
    revision = labels["controller-revision-hash"]
    assert labels == {"app": "web", "statefulset.kubernetes.io/pod-name": "web-1",
                      "apps.kubernetes.io/pod-index": "1", "controller-revision-hash": revision}
    assert (pod["spec"]["hostname"], pod["spec"]["subdomain"]) == ("web-1", "web-svc")
    assert pod["spec"]["volumes"][0] == {"name": "data", "persistentVolumeClaim": {"claimName": "data-web-1"}}
    assert pod["metadata"]["ownerReferences"][0]["kind"] == "StatefulSet"
    out = kubectl(kube, "-n", ns, "rollout", "status", "sts/web", "--timeout=20s").stdout
    # the defaulted rollingUpdate has a partition (0): kubectl reports a partitioned roll-out, as on a real cluster
    assert out.strip().endswith("partitioned roll out complete: 3 new pods have been updated...")
    status = eventually(lambda: (s := kube.client.get(STATEFULSETS, "web", ns)["status"]).get("readyReplicas") == 3
                        and s)
    assert status == {"observedGeneration": 1, "replicas": 3, "readyReplicas": 3, "currentReplicas": 3,
                      "updatedReplicas": 3, "currentRevision": revision, "updateRevision": revision,
                      "collisionCount": 0, "availableReplicas": 3}
    kubectl(kube, "-n", ns, "label", "pod", "web-1", "statefulset.kubernetes.io/pod-name-")  # identity restored
    eventually(lambda: kube.client.get(PODS, "web-1", ns)["metadata"]["labels"].get(
        "statefulset.kubernetes.io/pod-name") == "web-1")
    revisions = kube.client.list(CONTROLLERREVISIONS, ns)["items"]
    assert [(r["metadata"]["name"], r["revision"]) for r in revisions] == [(revision, 1)]
    assert revisions[0]["metadata"]["labels"]["controller.kubernetes.io/hash"] == revision.removeprefix("web-")

    # an unready Pod that is not the first unhealthy one blocks an ordered scale-down
    set_ready(kube, ns, "web-1", False)
    set_ready(kube, ns, "web-2", False)
    deletions = Deletions(kube, ns)
    kubectl(kube, "-n", ns, "scale", "sts/web", "--replicas=1")
    time.sleep(0.5)
    assert names(kube, ns) == ["web-0", "web-1", "web-2"]
    set_ready(kube, ns, "web-2")
    set_ready(kube, ns, "web-1")
    eventually(lambda: names(kube, ns) == ["web-0"])
    eventually(lambda: len(deletions.order) == 2)
    deletions.stop()
    assert deletions.order == ["web-2", "web-1"]
    assert {c["metadata"]["name"] for c in kube.client.list(PERSISTENTVOLUMECLAIMS, ns)["items"]} == {
        "data-web-0", "data-web-1", "data-web-2"}  # Retain: claims outlive their Pods
    eventually(lambda: kube.client.get(STATEFULSETS, "web", ns)["status"]["replicas"] == 1)
    events = kubectl(kube, "-n", ns, "get", "events", "-o",
                     "custom-columns=REASON:.reason,MESSAGE:.message", "--no-headers").stdout
    assert "create Pod web-0 in StatefulSet web successful" in events
    assert "create Claim data-web-0 Pod web-0 in StatefulSet web success" in events
    assert "delete Pod web-2 in StatefulSet web successful" in events


@pytest.mark.slow
def test_parallel_partitioned_rolling_update_history_and_undo(cluster, namespace):
    kube, ns = cluster, namespace
    with StandInKubelet(kube, ns):
        kubectl(kube, "-n", ns, "apply", "-f", "-", input=MANIFEST.format(name="db", replicas=4, policy="Parallel"))
        kubectl(kube, "-n", ns, "rollout", "status", "sts/db", "--timeout=20s")
        assert names(kube, ns) == ["db-0", "db-1", "db-2", "db-3"]
        first = kube.client.get(STATEFULSETS, "db", ns)["status"]["currentRevision"]

        kubectl(kube, "-n", ns, "patch", "sts/db", "-p", '{"spec":{"updateStrategy":{"rollingUpdate":{"partition":2}}}}')
        deletions = Deletions(kube, ns)
        kubectl(kube, "-n", ns, "set", "image", "sts/db", "c=img:2")
        out = kubectl(kube, "-n", ns, "rollout", "status", "sts/db", "--timeout=20s").stdout
        assert "partitioned roll out complete: 2 new pods have been updated..." in out
        assert images(kube, ns) == {"db-0": "img:1", "db-1": "img:1", "db-2": "img:2", "db-3": "img:2"}
        deletions.stop()
        assert deletions.order == ["db-3", "db-2"]  # highest ordinal first, one at a time
        status = kube.client.get(STATEFULSETS, "db", ns)["status"]
        assert status["currentRevision"] == first != status["updateRevision"]
        assert (status["currentReplicas"], status["updatedReplicas"]) == (2, 2)

        kubectl(kube, "-n", ns, "patch", "sts/db", "-p", '{"spec":{"updateStrategy":{"rollingUpdate":{"partition":0}}}}')
        out = kubectl(kube, "-n", ns, "rollout", "status", "sts/db", "--timeout=20s").stdout
        assert out.strip().endswith("partitioned roll out complete: 4 new pods have been updated...")
        status = kube.client.get(STATEFULSETS, "db", ns)["status"]
        assert status["currentRevision"] == status["updateRevision"] and status["currentReplicas"] == 4
        assert {p["spec"]["containers"][0]["image"] for p in kube.client.list(PODS, ns)["items"]} == {"img:2"}

        history = kubectl(kube, "-n", ns, "rollout", "history", "sts/db").stdout
        assert [line.split()[0] for line in history.splitlines()[2:] if line.strip()] == ["1", "2"]
        undo = kubectl(kube, "-n", ns, "rollout", "undo", "sts/db").stdout
        assert "rolled back" in undo
        kubectl(kube, "-n", ns, "rollout", "status", "sts/db", "--timeout=20s")
        eventually(lambda: {p["spec"]["containers"][0]["image"] for p in kube.client.list(PODS, ns)["items"]}
                   == {"img:1"})
        assert kube.client.get(STATEFULSETS, "db", ns)["status"]["updateRevision"] == first  # the old revision, reused
        history = kubectl(kube, "-n", ns, "rollout", "history", "sts/db").stdout
        assert [line.split()[0] for line in history.splitlines()[2:] if line.strip()] == ["2", "3"]
        again = kubectl(kube, "-n", ns, "rollout", "undo", "sts/db", "--to-revision=3").stdout
        assert "skipped rollback (current template already matches revision 3)" in again

        kubectl(kube, "-n", ns, "patch", "sts/db", "--type=json", "-p",
                '[{"op":"replace","path":"/spec/updateStrategy","value":{"type":"OnDelete"}}]')
        kubectl(kube, "-n", ns, "set", "image", "sts/db", "c=img:3")
        time.sleep(0.5)
        assert {p["spec"]["containers"][0]["image"] for p in kube.client.list(PODS, ns)["items"]} == {"img:1"}
        kubectl(kube, "-n", ns, "delete", "pod", "db-1")
        eventually(lambda: images(kube, ns).get("db-1") == "img:3")
        assert images(kube, ns)["db-0"] == "img:1"
    kubectl(kube, "-n", ns, "delete", "sts", "db")
    eventually(lambda: not names(kube, ns))


def test_claim_retention_policy_deletes_claims_with_their_pods(cluster, namespace):
    kube, ns = cluster, namespace
    manifest = MANIFEST.format(name="kv", replicas=2, policy="Parallel") + \
        "  persistentVolumeClaimRetentionPolicy: {whenDeleted: Delete, whenScaled: Delete}\n"
    with StandInKubelet(kube, ns):
        kubectl(kube, "-n", ns, "apply", "-f", "-", input=manifest)
        kubectl(kube, "-n", ns, "rollout", "status", "sts/kv", "--timeout=20s")
        claim = kube.client.get(PERSISTENTVOLUMECLAIMS, "data-kv-0", ns)
        assert [(r["kind"], r["name"]) for r in claim["metadata"]["ownerReferences"]] == [("StatefulSet", "kv")]
        kubectl(kube, "-n", ns, "scale", "sts/kv", "--replicas=1")
        eventually(lambda: {c["metadata"]["name"] for c in kube.client.list(PERSISTENTVOLUMECLAIMS, ns)["items"]} == {"data-kv-0"})
        kubectl(kube, "-n", ns, "delete", "sts", "kv")
        eventually(lambda: not kube.client.list(PERSISTENTVOLUMECLAIMS, ns)["items"])


def test_ordered_rollout_on_real_nodes_with_the_scheduler_and_kubelets():
    """With nodes (kubelets on the simulated runtime) and the scheduler, no stand-in: the Pods come up in order
    and a rolling update completes."""
    from mini_kube.testing import MiniKube

    with MiniKube(controllers="garbagecollector,statefulset", nodes=2, node_runtime="simulated") as kube:
        kubectl(kube, "apply", "-f", "-", input=MANIFEST.format(name="web", replicas=3, policy="OrderedReady"))
        kubectl(kube, "rollout", "status", "sts/web", "--timeout=30s")
        pods = {p["metadata"]["name"]: p for p in kube.client.list(PODS, "default")["items"]}
        assert sorted(pods) == ["web-0", "web-1", "web-2"]
        started = [pods[f"web-{i}"]["status"]["startTime"] for i in range(3)]
        assert started == sorted(started) and all(p["spec"].get("nodeName") for p in pods.values())
        kubectl(kube, "set", "image", "sts/web", "c=img:2")
        kubectl(kube, "rollout", "status", "sts/web", "--timeout=30s")
        eventually(lambda: set(images(kube, "default").values()) == {"img:2"})
        status = kube.client.get(STATEFULSETS, "web", "default")["status"]
        assert status["currentRevision"] == status["updateRevision"] and status["readyReplicas"] == 3
