"""ReplicaSets and Deployments through real kubectl, with a stand-in kubelet (a thread that marks Pods Running
and Ready through the status subresource, as a kubelet would): create, rolling update within maxSurge and
maxUnavailable, rollout status, history, undo, scale, pause/resume, and deletion cascading to Pods."""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import threading
import time

import pytest
from mini_kube.client import ApiError, ResourceRef
from mini_kube.machinery.refs import DEPLOYMENTS, PODS, REPLICASETS

from tests.helpers import eventually as _eventually
from tests.helpers import kubectl

eventually = functools.partial(_eventually, timeout=20.0, interval=0.05)


class StandInKubelet:
    """Marks every Pod of a namespace Running and Ready, and records the most Pods seen at once."""

    def __init__(self, kube, namespace: str) -> None:
        self.kube, self.namespace = kube, namespace
        self.running = True
        self.most = 0
        self.ips = iter(f"10.244.{i // 250}.{i % 250 + 2}" for i in range(10_000))
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        while self.running:
            try:
                pods = self.kube.client.list(PODS, self.namespace)["items"]
            except ApiError:
                continue
            live = [p for p in pods if not p["metadata"].get("deletionTimestamp")]
            self.most = max(self.most, len(live))
            for pod in live:
                if not (pod.get("status") or {}).get("podIP"):
                    stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
                    ip = next(self.ips)
                    status = {"phase": "Running", "podIP": ip, "podIPs": [{"ip": ip}], "conditions": [
                        {"type": "Ready", "status": "True", "lastTransitionTime": stamp}]}
                    with contextlib.suppress(ApiError):
                        self.kube.client.patch(PODS, pod["metadata"]["name"], {"status": status}, self.namespace,
                                               subresource="status")
            time.sleep(0.05)

    def __enter__(self) -> StandInKubelet:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.running = False
        self.thread.join(5)


@pytest.fixture(scope="module")
def cluster():
    """A cluster with every controller, as the pytest plugin and `mini-kube serve` run them."""
    from mini_kube.testing import MiniKube

    with MiniKube() as kube:
        yield kube


@pytest.fixture
def namespace(cluster):
    import uuid

    name = f"w-{uuid.uuid4().hex[:8]}"
    cluster.client.create(ResourceRef("", "v1", "namespaces", namespaced=False), {"metadata": {"name": name}})
    return name




def _pods(kube, ns: str) -> list[dict]:
    return [p for p in kube.client.list(PODS, ns)["items"] if not p["metadata"].get("deletionTimestamp")]


def test_replicaset_keeps_its_count_and_adopts_orphans(cluster, namespace):
    kube, ns = cluster, namespace
    kube.client.create(PODS, {"metadata": {"name": "orphan", "labels": {"app": "rs"}}, "spec": {
        "containers": [{"name": "c", "image": "i"}]}}, ns)
    kube.client.create(REPLICASETS, {"metadata": {"name": "rs"}, "spec": {
        "replicas": 3, "selector": {"matchLabels": {"app": "rs"}},
        "template": {"metadata": {"labels": {"app": "rs"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}}},
        ns)
    eventually(lambda: len(_pods(kube, ns)) == 3)
    time.sleep(0.3)
    pods = _pods(kube, ns)
    assert len(pods) == 3 and "orphan" in [p["metadata"]["name"] for p in pods]
    assert all(p["metadata"]["ownerReferences"][0]["name"] == "rs" for p in pods)
    kubectl(kube, "-n", ns, "scale", "rs/rs", "--replicas=1")
    eventually(lambda: len(_pods(kube, ns)) == 1)
    kube.client.delete(PODS, _pods(kube, ns)[0]["metadata"]["name"], ns)
    eventually(lambda: len(_pods(kube, ns)) == 1)
    # the status written right after the replacement's creation still counts 0: wait for the one that sees it
    eventually(lambda: (status := kube.client.get(REPLICASETS, "rs", ns).get("status") or {}).get("replicas") == 1
               and status.get("observedGeneration") == 2)


def test_replicaset_releases_a_relabelled_pod_and_counts_ready_ones(cluster, namespace):
    """A Pod relabelled out of the selector loses its controller reference and is replaced; the status counts
    Ready Pods; scaling down removes the Pods that are not Ready first."""
    kube, ns = cluster, namespace
    kube.client.create(REPLICASETS, {"metadata": {"name": "rs"}, "spec": {
        "replicas": 3, "selector": {"matchLabels": {"app": "rs"}},
        "template": {"metadata": {"labels": {"app": "rs"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}}},
        ns)
    eventually(lambda: len(_pods(kube, ns)) == 3)
    first, *rest = sorted(p["metadata"]["name"] for p in _pods(kube, ns))
    kube.client.patch(PODS, first, {"metadata": {"labels": {"app": "other"}}}, ns)
    eventually(lambda: not kube.client.get(PODS, first, ns)["metadata"].get("ownerReferences"))
    eventually(lambda: len([p for p in _pods(kube, ns) if p["metadata"]["labels"]["app"] == "rs"]) == 3)
    ready = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True",
                                                 "lastTransitionTime": "2026-01-01T00:00:00Z"}]}
    for name in rest:
        kube.client.patch(PODS, name, {"status": ready}, ns, subresource="status")
    eventually(lambda: (kube.client.get(REPLICASETS, "rs", ns).get("status") or {}).get("readyReplicas") == 2)
    kubectl(kube, "-n", ns, "scale", "rs/rs", "--replicas=2")
    eventually(lambda: sorted(p["metadata"]["name"] for p in _pods(kube, ns)
                              if p["metadata"]["labels"]["app"] == "rs") == sorted(rest))
    assert kube.client.get(PODS, first, ns)["metadata"]["labels"] == {"app": "other"}  # released, kept


@pytest.mark.slow
def test_deployment_rolls_out_through_kubectl(cluster, namespace):
    kube, ns = cluster, namespace
    with StandInKubelet(kube, ns) as kubelet:
        kubectl(kube, "-n", ns, "create", "deployment", "web", "--image=nginx:1", "--replicas=4")
        done = kubectl(kube, "-n", ns, "rollout", "status", "deploy/web", "--timeout=30s")
        assert done.stdout.strip().endswith('deployment "web" successfully rolled out')
        assert len(_pods(kube, ns)) == 4
        kubelet.most = 0
        kubectl(kube, "-n", ns, "set", "image", "deploy/web", "nginx=nginx:2")
        kubectl(kube, "-n", ns, "rollout", "status", "deploy/web", "--timeout=30s")
        assert kubelet.most <= 4 + 1  # maxSurge 25% of 4, rounded up
        images = {p["spec"]["containers"][0]["image"] for p in _pods(kube, ns)}
        assert images == {"nginx:2"}
        history = kubectl(kube, "-n", ns, "rollout", "history", "deploy/web").stdout
        assert [line.split()[0] for line in history.splitlines()[2:] if line.strip()] == ["1", "2"]
        kubectl(kube, "-n", ns, "rollout", "undo", "deploy/web")
        kubectl(kube, "-n", ns, "rollout", "status", "deploy/web", "--timeout=30s")
        eventually(lambda: {p["spec"]["containers"][0]["image"] for p in _pods(kube, ns)} == {"nginx:1"})
        kubectl(kube, "-n", ns, "scale", "deploy/web", "--replicas=2")
        eventually(lambda: len(_pods(kube, ns)) == 2)
        kubectl(kube, "-n", ns, "rollout", "pause", "deploy/web")
        kubectl(kube, "-n", ns, "set", "image", "deploy/web", "nginx=nginx:3")
        time.sleep(0.5)
        assert {p["spec"]["containers"][0]["image"] for p in _pods(kube, ns)} == {"nginx:1"}
        kubectl(kube, "-n", ns, "rollout", "resume", "deploy/web")
        kubectl(kube, "-n", ns, "rollout", "status", "deploy/web", "--timeout=30s")
        d = kube.client.get(DEPLOYMENTS, "web", ns)
        assert d["status"]["updatedReplicas"] == d["status"]["availableReplicas"] == 2
        assert {c["type"]: c["reason"] for c in d["status"]["conditions"]} == {
            "Available": "MinimumReplicasAvailable", "Progressing": "NewReplicaSetAvailable"}
        events = kubectl(kube, "-n", ns, "describe", "deploy", "web").stdout
        assert "ScalingReplicaSet" in events
    kubectl(kube, "-n", ns, "delete", "deploy", "web")
    eventually(lambda: not _pods(kube, ns) and not kube.client.list(REPLICASETS, ns)["items"])


@pytest.mark.parametrize("strategy", ["Recreate"])
def test_recreate_removes_old_pods_first(cluster, namespace, strategy):
    kube, ns = cluster, namespace
    with StandInKubelet(kube, ns):
        kube.client.create(DEPLOYMENTS, {"metadata": {"name": "r"}, "spec": {
            "replicas": 2, "strategy": {"type": strategy}, "selector": {"matchLabels": {"app": "r"}},
            "template": {"metadata": {"labels": {"app": "r"}}, "spec": {"containers": [
                {"name": "c", "image": "a"}]}}}}, ns)
        kubectl(kube, "-n", ns, "rollout", "status", "deploy/r", "--timeout=30s")
        kubectl(kube, "-n", ns, "set", "image", "deploy/r", "c=b")
        kubectl(kube, "-n", ns, "rollout", "status", "deploy/r", "--timeout=30s")
        assert {p["spec"]["containers"][0]["image"] for p in _pods(kube, ns)} == {"b"}
