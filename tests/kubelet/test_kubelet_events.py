"""The kubelet's events about a Pod's containers, as real kubectl shows them: Pulled ("already present") or
Pulling/Pulled for imagePullPolicy Always, Created, Started, Killing, BackOff, FailedMount with the volume's name;
each container event names its container in involvedObject.fieldPath (`kubectl get events -o wide`: SUBOBJECT).
And about its Node: Starting, then the conditions' NodeHasSufficientMemory, NodeHasNoDiskPressure, NodeHasSufficientPID."""

from __future__ import annotations

import re

from mini_kube.machinery.refs import EVENTS, PODS

from tests.helpers import kubectl

from .conftest import eventually, new_namespace, pod, status_of

SIM_EXIT = {"sim.mini-kube.dev/run-seconds": "0.05", "sim.mini-kube.dev/exit-code": "1"}


def event_lines(kube, ns: str, name: str, kind: str = "pod") -> list[str]:
    """`kubectl describe`'s Events, one line each with runs of spaces made one (the Age column dropped)."""
    out = kubectl(kube, "-n", ns, "describe", kind, name).stdout
    events = out.split("\nEvents:\n", 1)[1].splitlines()[2:]
    return [re.sub(r"^(\S+) (\S+) \S+(?: \(x\d+ over \S+\))? ", r"\1 \2 ", " ".join(line.split())) for line in events]


def events_of(kube, ns: str, name: str) -> list[dict]:
    return [e for e in kube.client.list(EVENTS, ns)["items"] if e["involvedObject"]["name"] == name]


def test_describe_shows_pulled_created_and_started_for_every_container(simulated_cluster):
    kube = simulated_cluster
    ns = new_namespace(kube)
    node = kube.nodes.kubelets[0].name
    kube.client.create(PODS, pod("web", {"name": "web", "image": "nginx:1.27"},
                                 {"name": "side", "image": "busybox"}, node=node,
                                 initContainers=[{"name": "setup", "image": "busybox:1.36"}]), ns)
    want = [
        'Normal Pulled kubelet Container image "busybox:1.36" already present on machine',
        "Normal Created kubelet Created container: setup",
        "Normal Started kubelet Started container setup",
        'Normal Pulled kubelet Container image "nginx:1.27" already present on machine',
        "Normal Created kubelet Created container: web",
        "Normal Started kubelet Started container web",
        'Normal Pulling kubelet Pulling image "busybox"',
        "Normal Created kubelet Created container: side",
        "Normal Started kubelet Started container side",
    ]
    eventually(lambda: len(events_of(kube, ns, "web")) >= 10)
    lines = event_lines(kube, ns, "web")
    for line in want:
        assert line in lines, (line, lines)
    pulled = [line for line in lines if line.startswith("Normal Pulled kubelet Successfully pulled image")]
    assert len(pulled) == 1 and re.fullmatch(
        r'Normal Pulled kubelet Successfully pulled image "busybox" in (0s|\d+ms) \(\1 including waiting\)\. '
        r"Image size: \d+ bytes\.", pulled[0]), lines
    assert lines.index("Normal Started kubelet Started container setup") < lines.index(
        "Normal Created kubelet Created container: web")

    wide = kubectl(kube, "-n", ns, "get", "events", "-o", "wide").stdout
    assert re.search(r"Started\s+pod/web\s+spec\.containers\{side\}\s+kubelet, " + re.escape(node), wide), wide
    assert re.search(r"Created\s+pod/web\s+spec\.initContainers\{setup\}\s+kubelet, ", wide), wide
    started = next(e for e in events_of(kube, ns, "web") if e["message"] == "Started container web")
    assert started["involvedObject"]["fieldPath"] == "spec.containers{web}"
    assert started["source"] == {"component": "kubelet", "host": node} and started["reportingComponent"] == "kubelet"

    kubectl(kube, "-n", ns, "delete", "pod", "web", "--wait=false")
    killing = eventually(lambda: sorted((e["involvedObject"]["fieldPath"], e["message"]) for e in
                                        events_of(kube, ns, "web") if e["reason"] == "Killing")
                         if len(events_of(kube, ns, "web")) >= 12 else None)
    assert killing == [("spec.containers{side}", "Stopping container side"),
                       ("spec.containers{web}", "Stopping container web")]


def test_a_crashing_container_is_backed_off_and_a_missing_configmap_fails_its_mount(simulated_cluster):
    kube = simulated_cluster
    ns = new_namespace(kube)
    node = kube.nodes.kubelets[0].name
    kube.client.create(PODS, {**pod("crash", {"name": "main", "image": "busybox:1.36"}, node=node),
                              "metadata": {"name": "crash", "annotations": SIM_EXIT}}, ns)
    kube.client.create(PODS, pod("mount", {"name": "main", "image": "busybox:1.36"}, node=node,
                                 volumes=[{"name": "cfg", "configMap": {"name": "missing"}}]), ns)
    uid = kube.client.get(PODS, "crash", ns)["metadata"]["uid"]
    backoff = f"Warning BackOff kubelet Back-off restarting failed container main in pod crash_{ns}({uid})"
    eventually(lambda: any(e["reason"] == "BackOff" for e in events_of(kube, ns, "crash")))
    lines = event_lines(kube, ns, "crash")
    assert backoff in lines
    assert "Normal Started kubelet Started container main" in lines
    mount = 'Warning FailedMount kubelet MountVolume.SetUp failed for volume "cfg" : configmap "missing" not found'
    eventually(lambda: any(e["reason"] == "FailedMount" for e in events_of(kube, ns, "mount")))
    lines = event_lines(kube, ns, "mount")
    assert mount in lines
    assert not any("Created" in line for line in lines)
    assert status_of(kube, ns, "mount")["phase"] == "Pending"
    failed = next(e for e in events_of(kube, ns, "mount") if e["reason"] == "FailedMount")
    assert "fieldPath" not in failed["involvedObject"]


def test_describe_node_shows_the_kubelets_start_and_its_conditions(simulated_cluster):
    kube = simulated_cluster
    node = kube.nodes.kubelets[1].name
    eventually(lambda: any(e["reason"] == "NodeHasSufficientPID" and e["involvedObject"]["name"] == node
                           for e in kube.client.list(EVENTS, "default")["items"]))
    lines = event_lines(kube, "default", node, "node")
    assert lines[:4] == ["Normal Starting kubelet Starting kubelet.",
                         f"Normal NodeHasSufficientMemory kubelet Node {node} status is now: NodeHasSufficientMemory",
                         f"Normal NodeHasNoDiskPressure kubelet Node {node} status is now: NodeHasNoDiskPressure",
                         f"Normal NodeHasSufficientPID kubelet Node {node} status is now: NodeHasSufficientPID"], lines
    started = next(e for e in kube.client.list(EVENTS, "default")["items"]
                   if e["reason"] == "Starting" and e["involvedObject"]["name"] == node)
    assert started["involvedObject"] == {"kind": "Node", "name": node, "uid": node}  # upstream's nodeRef
