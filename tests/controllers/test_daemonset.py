"""DaemonSets over Node objects made by the test (labels, taints, unschedulable), through real kubectl: one Pod
per eligible node pinned by node affinity with the standard daemon tolerations, Pods following nodes as they
come, go, change labels and get tainted, status as kube-controller-manager reports it, rolling updates (with
maxUnavailable and with maxSurge), OnDelete, failed Pods replaced, `kubectl rollout status|history|undo ds`."""

from __future__ import annotations

import contextlib
import time
import uuid

import pytest
from mini_kube.client import NotFound, ResourceRef
from mini_kube.machinery.refs import CONTROLLERREVISIONS, DAEMONSETS, NODES, PODS

from tests.controllers.test_workloads import StandInKubelet, eventually
from tests.helpers import kubectl

STANDARD_TOLERATIONS = [
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/disk-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/pid-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
]


def manifest(name: str, image: str = "agent:1", extra: str = "") -> str:
    return f"""
apiVersion: apps/v1
kind: DaemonSet
metadata: {{name: {name}}}
spec:
  selector: {{matchLabels: {{app: {name}}}}}
{extra}  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:
      containers: [{{name: c, image: "{image}"}}]
"""


@pytest.fixture(scope="module")
def cluster():
    from mini_kube.testing import MiniKube

    with MiniKube(controllers="garbagecollector,daemonset") as kube:
        yield kube


@pytest.fixture
def namespace(cluster):
    name = f"d-{uuid.uuid4().hex[:8]}"
    cluster.client.create(ResourceRef("", "v1", "namespaces", namespaced=False), {"metadata": {"name": name}})
    return name


@pytest.fixture
def nodes(cluster):
    """Make Nodes (removed after the test, so that the next one starts without them)."""
    made: list[str] = []

    def make(name: str, labels: dict | None = None, taints: list | None = None, unschedulable: bool = False) -> str:
        spec = {"taints": taints} if taints else {}
        if unschedulable:
            spec["unschedulable"] = True
        cluster.client.create(NODES, {"metadata": {"name": name, "labels": labels or {}}, "spec": spec})
        made.append(name)
        return name

    yield make
    for name in made:
        with contextlib.suppress(NotFound):
            cluster.client.delete(NODES, name)


def placed(kube, ns: str, ds: str) -> dict[str, str]:
    """node -> Pod of the DaemonSet, read from each Pod's node affinity."""
    result = {}
    for pod in kube.client.list(PODS, ns, labelSelector=f"app={ds}")["items"]:
        if pod["metadata"].get("deletionTimestamp"):
            continue
        node = placed_node(pod)
        assert node not in result, f"two Pods for {node}"
        result[node] = pod["metadata"]["name"]
    return result


def status(kube, ns: str, ds: str) -> dict:
    return kube.client.get(DAEMONSETS, ds, ns).get("status") or {}


@pytest.mark.slow
def test_one_pod_per_eligible_node_follows_the_nodes(cluster, namespace, nodes):
    kube, ns = cluster, namespace
    a = nodes("a-" + ns, {"disk": "ssd"})
    b = nodes("b-" + ns, {"disk": "hdd"})
    c = nodes("c-" + ns, taints=[{"key": "dedicated", "value": "db", "effect": "NoSchedule"}])
    d = nodes("d-" + ns, unschedulable=True)  # daemon Pods tolerate unschedulable nodes
    with StandInKubelet(kube, ns):
        kubectl(kube, "-n", ns, "apply", "-f", "-", input=manifest("agent"))
        kubectl(kube, "-n", ns, "apply", "-f", "-", input=manifest("ssd").replace(
            "containers:", "nodeSelector: {disk: ssd}\n      containers:"))
        eventually(lambda: set(placed(kube, ns, "agent")) == {a, b, d} and set(placed(kube, ns, "ssd")) == {a})
        out = kubectl(kube, "-n", ns, "rollout", "status", "ds/agent", "--timeout=20s").stdout
        assert out.strip().endswith('daemon set "agent" successfully rolled out')
        pod = kube.client.get(PODS, placed(kube, ns, "agent")[b], ns)
        assert pod["spec"]["affinity"] == {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [b]}]}]}}}
        assert pod["spec"]["tolerations"] == STANDARD_TOLERATIONS
        ds = kube.client.get(DAEMONSETS, "agent", ns)
        digest = pod["metadata"]["labels"]["controller-revision-hash"]
        assert pod["metadata"]["labels"] == {"app": "agent", "pod-template-generation": "1",
                                             "controller-revision-hash": digest}
        assert ds["metadata"]["annotations"]["deprecated.daemonset.template.generation"] == "1"
        eventually(lambda: status(kube, ns, "agent").get("numberAvailable") == 3)
        assert status(kube, ns, "agent") == {
            "currentNumberScheduled": 3, "numberMisscheduled": 0, "desiredNumberScheduled": 3, "numberReady": 3,
            "observedGeneration": 1, "updatedNumberScheduled": 3, "numberAvailable": 3}
        assert c not in placed(kube, ns, "agent")

        e = nodes("e-" + ns)
        eventually(lambda: set(placed(kube, ns, "agent")) == {a, b, d, e})
        kube.client.delete(NODES, b)
        eventually(lambda: set(placed(kube, ns, "agent")) == {a, d, e})
        kubectl(kube, "label", "node", e, "disk=ssd")
        eventually(lambda: set(placed(kube, ns, "ssd")) == {a, e})
        kubectl(kube, "label", "node", e, "disk-")
        eventually(lambda: set(placed(kube, ns, "ssd")) == {a})
        kubectl(kube, "taint", "node", a, "evict=now:NoExecute")
        eventually(lambda: set(placed(kube, ns, "agent")) == {d, e} and not placed(kube, ns, "ssd"))
        # a NoSchedule taint keeps the running Pod, which is then misscheduled
        kubectl(kube, "taint", "node", d, "maintenance=yes:NoSchedule")
        eventually(lambda: status(kube, ns, "agent").get("numberMisscheduled") == 1)
        assert set(placed(kube, ns, "agent")) == {d, e}
        assert status(kube, ns, "agent")["desiredNumberScheduled"] == 1
    kubectl(kube, "-n", ns, "delete", "ds", "agent", "ssd")
    eventually(lambda: not kube.client.list(PODS, ns)["items"])


@pytest.mark.parametrize("strategy", ["maxUnavailable", "maxSurge"])
@pytest.mark.slow
def test_rolling_update_history_undo_and_on_delete(cluster, namespace, nodes, strategy):
    kube, ns = cluster, namespace
    names = {nodes(f"n{i}-{ns}") for i in range(4)}
    rolling = "  updateStrategy: {rollingUpdate: {maxSurge: 1, maxUnavailable: 0}}\n" if strategy == "maxSurge" else ""
    with StandInKubelet(kube, ns) as kubelet:
        kubectl(kube, "-n", ns, "apply", "-f", "-", input=manifest("roll", extra=rolling))
        kubectl(kube, "-n", ns, "rollout", "status", "ds/roll", "--timeout=20s")
        assert set(placed(kube, ns, "roll")) == names
        kubelet.most = 0
        kubectl(kube, "-n", ns, "set", "image", "ds/roll", "c=agent:2")
        out = kubectl(kube, "-n", ns, "rollout", "status", "ds/roll", "--timeout=30s").stdout
        assert "Waiting for daemon set" in out or "successfully rolled out" in out
        eventually(lambda: {p["spec"]["containers"][0]["image"] for p in kube.client.list(PODS, ns)["items"]}
                   == {"agent:2"} and len(placed(kube, ns, "roll")) == 4)
        assert kubelet.most <= (5 if strategy == "maxSurge" else 4)  # never more Pods than the surge allows
        pod = kube.client.list(PODS, ns)["items"][0]
        assert pod["metadata"]["labels"]["pod-template-generation"] == "2"
        history = kubectl(kube, "-n", ns, "rollout", "history", "ds/roll").stdout
        assert [line.split()[0] for line in history.splitlines()[2:] if line.strip()] == ["1", "2"]
        assert "rolled back" in kubectl(kube, "-n", ns, "rollout", "undo", "ds/roll").stdout
        kubectl(kube, "-n", ns, "rollout", "status", "ds/roll", "--timeout=30s")
        eventually(lambda: {p["spec"]["containers"][0]["image"] for p in kube.client.list(PODS, ns)["items"]}
                   == {"agent:1"})
        history = kubectl(kube, "-n", ns, "rollout", "history", "ds/roll").stdout
        assert [line.split()[0] for line in history.splitlines()[2:] if line.strip()] == ["2", "3"]

        kubectl(kube, "-n", ns, "patch", "ds/roll", "--type=json", "-p",
                '[{"op":"replace","path":"/spec/updateStrategy","value":{"type":"OnDelete"}}]')
        kubectl(kube, "-n", ns, "set", "image", "ds/roll", "c=agent:3")
        generation = kube.client.get(DAEMONSETS, "roll", ns)["metadata"]["generation"]
        eventually(lambda: status(kube, ns, "roll").get("observedGeneration") == generation)
        assert {p["spec"]["containers"][0]["image"] for p in kube.client.list(PODS, ns)["items"]} == {"agent:1"}
        assert status(kube, ns, "roll").get("updatedNumberScheduled") is None  # omitted when 0, as upstream
        victim = sorted(placed(kube, ns, "roll").items())[0]
        kubectl(kube, "-n", ns, "delete", "pod", victim[1])
        eventually(lambda: placed(kube, ns, "roll").get(victim[0]) not in (None, victim[1]))
        images = sorted(p["spec"]["containers"][0]["image"] for p in kube.client.list(PODS, ns)["items"])
        assert images == ["agent:1", "agent:1", "agent:1", "agent:3"]


def test_failed_pod_is_replaced(cluster, namespace, nodes):
    kube, ns = cluster, namespace
    node = nodes("f-" + ns)
    kubectl(kube, "-n", ns, "apply", "-f", "-", input=manifest("f"))
    first = eventually(lambda: placed(kube, ns, "f").get(node))
    kube.client.patch(PODS, first, {"status": {"phase": "Failed"}}, ns, subresource="status")
    eventually(lambda: placed(kube, ns, "f").get(node) not in (None, first))
    events = kubectl(kube, "-n", ns, "get", "events", "-o", "custom-columns=R:.reason,M:.message", "--no-headers").stdout
    assert f"Found failed daemon pod {ns}/{first} on node {node}, will try to kill it" in events
    assert f"Deleted pod: {first}" in events


@pytest.mark.slow
def test_runs_on_real_nodes_with_the_scheduler_and_kubelets():
    """With nodes (kubelets on the simulated runtime) and the scheduler, no stand-in: each daemon Pod is bound
    to the node its affinity names, runs there, and the rollout completes."""
    from mini_kube.testing import MiniKube

    with MiniKube(controllers="garbagecollector,daemonset", nodes=2, node_runtime="simulated") as kube:
        kubectl(kube, "apply", "-f", "-", input=manifest("agent"))
        out = kubectl(kube, "rollout", "status", "ds/agent", "--timeout=30s").stdout
        assert out.strip().endswith('daemon set "agent" successfully rolled out')
        pods = kube.client.list(PODS, "default")["items"]
        assert sorted(p["spec"]["nodeName"] for p in pods) == sorted(
            n["metadata"]["name"] for n in kube.client.list(NODES)["items"])
        assert all(p["status"]["phase"] == "Running" for p in pods)
        assert all(p["spec"]["nodeName"] == placed_node(p) for p in pods)
        # a second revision of the same template, numbered higher (as a client may make one): the controller
        # keeps it, points the Pods at it and drops the first, without restarting a Pod (dedupCurHistories)
        uids = {p["metadata"]["uid"] for p in pods}
        [first] = kube.client.list(CONTROLLERREVISIONS, "default")["items"]
        duplicate = {"metadata": {"name": "agent-duplicate", "labels": {**first["metadata"]["labels"],
                                                                         "controller-revision-hash": "duplicate"},
                                  "ownerReferences": first["metadata"]["ownerReferences"]},
                     "data": first["data"], "revision": first["revision"] + 1}
        kube.client.create(CONTROLLERREVISIONS, duplicate, "default")
        eventually(lambda: [r["metadata"]["name"] for r in kube.client.list(CONTROLLERREVISIONS, "default")[
            "items"]] == ["agent-duplicate"])
        eventually(lambda: {p["metadata"]["labels"]["controller-revision-hash"] for p in kube.client.list(
            PODS, "default")["items"]} == {"duplicate"})
        time.sleep(1)
        assert {p["metadata"]["uid"] for p in kube.client.list(PODS, "default")["items"]} == uids
        kubectl(kube, "set", "image", "ds/agent", "c=agent:2")
        kubectl(kube, "rollout", "status", "ds/agent", "--timeout=30s")
        eventually(lambda: {p["spec"]["containers"][0]["image"] for p in kube.client.list(PODS, "default")["items"]}
                   == {"agent:2"})


def placed_node(pod: dict) -> str:
    terms = pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    return terms["nodeSelectorTerms"][0]["matchFields"][0]["values"][0]
