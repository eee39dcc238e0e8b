"""PodDisruptionBudgets: the disruption controller's status (numbers and percentages against the controllers'
scale, conditions, fail-safe), the `pods/eviction` subresource honouring it (official Python client), and
`kubectl drain` / `cordon` / `uncordon` as on a real cluster. A stand-in kubelet thread marks Pods Running and
Ready through the status subresource (those labelled `ready: "no"` Running but not Ready)."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import subprocess
import threading
import time
import uuid

import pytest
from mini_kube.client import ApiError, ResourceRef
from mini_kube.machinery.refs import DEPLOYMENTS, EVENTS, NAMESPACES, NODES, PODDISRUPTIONBUDGETS, PODS

from tests.helpers import kubectl, kubectl_binary


class StandInKubelet:
    """Marks the Pods of a namespace Running (and Ready unless labelled ready=no); makes a kubelet's final delete
    of a Pod whose grace period has begun."""

    def __init__(self, kube, namespace: str) -> None:
        self.kube, self.namespace = kube, namespace
        self.running = True
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        while self.running:
            try:
                pods = self.kube.client.list(PODS, self.namespace)["items"]
            except (ApiError, TimeoutError):
                continue
            for pod in pods:
                if pod["metadata"].get("deletionTimestamp"):
                    with contextlib.suppress(ApiError):
                        self.kube.client.delete(PODS, pod["metadata"]["name"], self.namespace, body={
                            "gracePeriodSeconds": 0, "preconditions": {"uid": pod["metadata"]["uid"]}})
                    continue
                if (pod.get("status") or {}).get("phase") == "Running":
                    continue
                ready = "False" if (pod["metadata"].get("labels") or {}).get("ready") == "no" else "True"
                stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
                status = {"phase": "Running", "conditions": [
                    {"type": "Ready", "status": ready, "lastTransitionTime": stamp}]}
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
    from mini_kube.testing import MiniKube

    with MiniKube(controllers="replicaset,deployment,disruption,garbagecollector", scheduler=False) as kube:
        yield kube


@pytest.fixture
def ns(cluster):
    name = f"pdb-{uuid.uuid4().hex[:8]}"
    cluster.client.create(NAMESPACES, {"metadata": {"name": name}})
    with StandInKubelet(cluster, name):
        yield name


@pytest.fixture(scope="module")
def core(cluster):
    import kubernetes

    api_client = kubernetes.config.new_client_from_config(config_file=cluster.kubeconfig)
    yield kubernetes.client.CoreV1Api(api_client)
    api_client.close()


def eventually(check, timeout: float = 20.0):
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result:
            return result
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.05)


def deployment(kube, ns: str, name: str, replicas: int, node: str = "", labels: dict | None = None,
               scratch: bool = False) -> None:
    labels = labels or {"app": name}
    spec: dict = {"containers": [{"name": "c", "image": "nginx"}]}
    if node:
        spec["nodeName"] = node
    if scratch:
        spec["volumes"] = [{"name": "scratch", "emptyDir": {}}]
    kube.client.create(DEPLOYMENTS, {"metadata": {"name": name}, "spec": {
        "replicas": replicas, "selector": {"matchLabels": {"app": labels["app"]}},
        "template": {"metadata": {"labels": labels}, "spec": spec}}}, ns)


def live_pods(kube, ns: str, selector: str = "") -> list[dict]:
    params = {"labelSelector": selector} if selector else {}
    return [p for p in kube.client.list(PODS, ns, **params)["items"] if not p["metadata"].get("deletionTimestamp")]


def ready_pods(kube, ns: str, selector: str = "") -> list[dict]:
    return [p for p in live_pods(kube, ns, selector) if any(
        c["type"] == "Ready" and c["status"] == "True" for c in p["status"].get("conditions") or ())]


def pdb_status(kube, ns: str, name: str, **wanted) -> dict:
    """The budget's status once it has the wanted values."""
    def check():
        status = kube.client.get(PODDISRUPTIONBUDGETS, name, ns).get("status") or {}
        return status if all(status.get(k) == v for k, v in wanted.items()) else None
    return eventually(check)


def condition(status: dict) -> dict:
    return next(c for c in status["conditions"] if c["type"] == "DisruptionAllowed")


def test_status_for_numbers_and_percentages(cluster, ns):
    kube = cluster
    deployment(kube, ns, "web", 4)
    eventually(lambda: len(ready_pods(kube, ns)) == 4)
    kubectl(kube, "-n", ns, "create", "pdb", "min3", "--selector=app=web", "--min-available=3")
    kubectl(kube, "-n", ns, "create", "pdb", "half", "--selector=app=web", "--max-unavailable=50%")
    kubectl(kube, "-n", ns, "create", "pdb", "all", "--selector=app=web", "--min-available=100%")
    status = pdb_status(kube, ns, "min3", disruptionsAllowed=1)
    assert (status["observedGeneration"], status["currentHealthy"], status["desiredHealthy"],
            status["expectedPods"]) == (1, 4, 3, 4)
    cond = condition(status)
    assert (cond["status"], cond["reason"], cond["message"], cond["observedGeneration"]) == (
        "True", "SufficientPods", "", 1)
    assert list(status) == ["observedGeneration", "disruptionsAllowed", "currentHealthy", "desiredHealthy",
                            "expectedPods", "conditions"]
    status = pdb_status(kube, ns, "half", disruptionsAllowed=2)
    assert (status["desiredHealthy"], status["expectedPods"]) == (2, 4)
    status = pdb_status(kube, ns, "all", observedGeneration=1)
    assert (status["disruptionsAllowed"], status["desiredHealthy"]) == (0, 4)
    assert (condition(status)["status"], condition(status)["reason"]) == ("False", "InsufficientPods")
    table = kubectl(kube, "-n", ns, "get", "pdb").stdout.split("\n")
    assert table[0].split() == ["NAME", "MIN", "AVAILABLE", "MAX", "UNAVAILABLE", "ALLOWED", "DISRUPTIONS", "AGE"]
    rows = {line.split()[0]: line.split()[1:4] for line in table[1:] if line}
    assert rows == {"all": ["100%", "N/A", "0"], "half": ["N/A", "50%", "2"], "min3": ["3", "N/A", "1"]}

    # the percentage follows the Deployment's scale, not the Pods seen; a spec change is observed
    kubectl(kube, "-n", ns, "scale", "deploy/web", "--replicas=6")
    status = pdb_status(kube, ns, "half", expectedPods=6, currentHealthy=6)
    assert (status["desiredHealthy"], status["disruptionsAllowed"]) == (3, 3)
    kubectl(kube, "-n", ns, "patch", "pdb", "min3", "--type=merge", "-p", '{"spec":{"minAvailable":6}}')
    status = pdb_status(kube, ns, "min3", observedGeneration=2, disruptionsAllowed=0)
    assert condition(status)["reason"] == "InsufficientPods" and condition(status)["observedGeneration"] == 2


def _owned_pods(kube, ns: str, owner: dict, app: str, count: int, node: str = "") -> None:
    ref = {"apiVersion": owner["apiVersion"], "kind": owner["kind"], "name": owner["metadata"]["name"],
           "uid": owner["metadata"]["uid"], "controller": True}
    spec: dict = {"containers": [{"name": "c", "image": "i"}], **({"nodeName": node} if node else {})}
    for i in range(count):
        kube.client.create(PODS, {"metadata": {"name": f"{app}-{i}", "labels": {"app": app},
                                               "ownerReferences": [ref]}, "spec": spec}, ns)


def test_percentages_against_statefulsets_rcs_and_custom_scale(cluster, ns):
    """The scale of StatefulSets and ReplicationControllers from their objects, of any other kind through its
    scale subresource (a custom resource here); Pods made by hand so only the disruption controller acts."""
    kube = cluster
    sts = kube.client.create(ResourceRef("apps", "v1", "statefulsets"), {"metadata": {"name": "db"}, "spec": {
        "replicas": 4, "serviceName": "db", "selector": {"matchLabels": {"app": "db"}},
        "template": {"metadata": {"labels": {"app": "db"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}}},
        ns)
    rc = kube.client.create(ResourceRef("", "v1", "replicationcontrollers"), {"metadata": {"name": "old"}, "spec": {
        "replicas": 5, "selector": {"app": "old"},
        "template": {"metadata": {"labels": {"app": "old"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}}},
        ns)
    crds = ResourceRef("apiextensions.k8s.io", "v1", "customresourcedefinitions", namespaced=False)
    with contextlib.suppress(ApiError):
        kube.client.create(crds, {"metadata": {"name": "flocks.example.com"}, "spec": {
            "group": "example.com", "scope": "Namespaced",
            "names": {"plural": "flocks", "singular": "flock", "kind": "Flock", "listKind": "FlockList"},
            "versions": [{"name": "v1", "served": True, "storage": True, "subresources": {"scale": {
                "specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}},
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]}})
    flocks = ResourceRef("example.com", "v1", "flocks")
    flock = eventually(lambda: _try(lambda: kube.client.create(flocks, {
        "apiVersion": "example.com/v1", "kind": "Flock", "metadata": {"name": "birds"}, "spec": {"replicas": 8}}, ns)))
    for owner, app, count in ((sts, "db", 2), (rc, "old", 5), (flock, "birds", 8)):
        _owned_pods(kube, ns, {**owner, "apiVersion": owner.get("apiVersion") or "v1"}, app, count)
        kubectl(kube, "-n", ns, "create", "pdb", app, f"--selector=app={app}", "--max-unavailable=25%")
    status = pdb_status(kube, ns, "db", expectedPods=4, currentHealthy=2)
    assert (status["desiredHealthy"], status["disruptionsAllowed"]) == (3, 0)
    status = pdb_status(kube, ns, "old", expectedPods=5, currentHealthy=5)
    assert (status["desiredHealthy"], status["disruptionsAllowed"]) == (3, 2)  # 25% of 5 rounds up to 2
    status = pdb_status(kube, ns, "birds", expectedPods=8, currentHealthy=8)
    assert (status["desiredHealthy"], status["disruptionsAllowed"]) == (6, 2)
    kubectl(kube, "-n", ns, "scale", "flock/birds", "--replicas=12")
    kube.client.patch(PODS, "birds-0", {"metadata": {"labels": {"touched": "yes"}}}, ns)  # the next sync
    status = pdb_status(kube, ns, "birds", expectedPods=12, desiredHealthy=9)
    assert status["disruptionsAllowed"] == 0


def _try(make):
    try:
        return make()
    except ApiError:
        return None


def test_no_pods_unmanaged_pods_and_fail_safe(cluster, ns):
    kube = cluster
    kube.client.create(PODDISRUPTIONBUDGETS, {"metadata": {"name": "empty"}, "spec": {
        "minAvailable": 1, "selector": {"matchLabels": {"app": "none"}}}}, ns)
    status = pdb_status(kube, ns, "empty", observedGeneration=1)
    assert (status["expectedPods"], status["disruptionsAllowed"]) == (0, 0)
    # a bare Pod under a percentage: counted as unmanaged (expected stays 0), with a warning event
    kube.client.create(PODS, {"metadata": {"name": "bare", "labels": {"app": "bare"}}, "spec": {
        "containers": [{"name": "c", "image": "i"}]}}, ns)
    kube.client.create(PODDISRUPTIONBUDGETS, {"metadata": {"name": "bare"}, "spec": {
        "minAvailable": "50%", "selector": {"matchLabels": {"app": "bare"}}}}, ns)
    status = pdb_status(kube, ns, "bare", observedGeneration=1, currentHealthy=1)
    assert (status["expectedPods"], status["desiredHealthy"], status["disruptionsAllowed"]) == (0, 0, 0)
    # a Pod whose controller has no scale: the budget fails safe (no disruptions, SyncFailed)
    owner = kube.client.create(ResourceRef("", "v1", "configmaps"), {"metadata": {"name": "owner"}}, ns)
    kube.client.create(PODS, {"metadata": {"name": "lost", "labels": {"app": "lost"}, "ownerReferences": [{
        "apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner["metadata"]["uid"],
        "controller": True}]}, "spec": {"containers": [{"name": "c", "image": "i"}]}}, ns)
    kube.client.create(PODDISRUPTIONBUDGETS, {"metadata": {"name": "lost"}, "spec": {
        "maxUnavailable": 1, "selector": {"matchLabels": {"app": "lost"}}}}, ns)

    def failed():
        status = kube.client.get(PODDISRUPTIONBUDGETS, "lost", ns).get("status") or {}
        return next((c for c in status.get("conditions") or () if c["reason"] == "SyncFailed"), None)
    cond = eventually(failed)
    assert cond["status"] == "False" and cond["message"] == "configmaps does not implement the scale subresource"

    def reasons():
        items = kube.client.list(EVENTS, ns)["items"]
        found = {(e["involvedObject"]["name"], e["reason"]) for e in items}
        wanted = {("empty", "NoPods"), ("bare", "UnmanagedPods"), ("lost", "CalculateExpectedPodCountFailed")}
        return wanted <= found
    eventually(reasons)


def _eviction(name: str, ns: str, **delete_options):
    import kubernetes

    options = kubernetes.client.V1DeleteOptions(**delete_options) if delete_options else None
    return kubernetes.client.V1Eviction(metadata=kubernetes.client.V1ObjectMeta(name=name, namespace=ns),
                                        delete_options=options)


def test_eviction_through_the_python_client(cluster, ns, core):
    from kubernetes.client.rest import ApiException

    kube = cluster
    deployment(kube, ns, "db", 3)
    eventually(lambda: len(ready_pods(kube, ns)) == 3)
    kubectl(kube, "-n", ns, "create", "pdb", "db", "--selector=app=db", "--min-available=2")
    pdb_status(kube, ns, "db", disruptionsAllowed=1)
    first, second = sorted(p["metadata"]["name"] for p in live_pods(kube, ns))[:2]

    # dry run: allowed, but nothing is deleted or spent
    core.create_namespaced_pod_eviction(first, ns, _eviction(first, ns), dry_run="All")
    assert kube.client.get(PODS, first, ns)["metadata"]["name"] == first
    assert kube.client.get(PODDISRUPTIONBUDGETS, "db", ns)["status"]["disruptionsAllowed"] == 1

    # a real eviction spends the budget (compare-and-swap on the status) and deletes the Pod
    answer = core.create_namespaced_pod_eviction(first, ns, _eviction(first, ns), _preload_content=False)
    assert answer.status == 201
    assert json.loads(answer.data) == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                                          "code": 201}
    with pytest.raises(ApiError) as gone:
        kube.client.get(PODS, first, ns)
    assert gone.value.status == 404

    # the next one is refused while the budget is spent: 429 with a DisruptionBudget cause
    with pytest.raises(ApiException) as refused:
        core.create_namespaced_pod_eviction(second, ns, _eviction(second, ns))
    assert refused.value.status == 429
    body = json.loads(refused.value.body)
    assert body["reason"] == "TooManyRequests"
    assert body["message"] == "Cannot evict pod as it would violate the pod's disruption budget."
    cause = body["details"]["causes"][0]
    assert cause["reason"] == "DisruptionBudget"
    assert cause["message"].startswith("The disruption budget db needs 2 healthy pods and has ")
    # ... until the replacement is ready and the controller gives the budget back
    eventually(lambda: len(ready_pods(kube, ns, "app=db")) == 3)
    pdb_status(kube, ns, "db", disruptionsAllowed=1, currentHealthy=3)
    core.create_namespaced_pod_eviction(second, ns, _eviction(second, ns, grace_period_seconds=0))
    with pytest.raises(ApiError):
        kube.client.get(PODS, second, ns)


def test_eviction_rules(cluster, ns, core):
    from kubernetes.client.rest import ApiException

    kube = cluster
    for name, labels in (("run1", {"app": "x"}), ("run2", {"app": "x"}), ("sick", {"app": "y", "ready": "no"}),
                         ("sick2", {"app": "y", "ready": "no"}), ("well", {"app": "y"}), ("free", {"app": "free"})):
        kube.client.create(PODS, {"metadata": {"name": name, "labels": labels}, "spec": {
            "containers": [{"name": "c", "image": "i"}]}}, ns)
    eventually(lambda: len(ready_pods(kube, ns, "app=x")) >= 2)
    kube.client.create(PODDISRUPTIONBUDGETS, {"metadata": {"name": "x"}, "spec": {
        "minAvailable": 10, "selector": {"matchLabels": {"app": "x"}}}}, ns)
    pdb_status(kube, ns, "x", observedGeneration=1)

    # a precondition that does not hold (no budget guards this Pod)
    eventually(lambda: kube.client.get(PODS, "free", ns)["status"]["phase"] == "Running")
    with pytest.raises(ApiException) as stale:
        core.create_namespaced_pod_eviction("free", ns, _eviction("free", ns, preconditions={"uid": "nope"}))
    assert stale.value.status == 409
    answer = kube.client.request("POST", PODS.path(ns, "free", "eviction"), body={  # the older policy/v1beta1
        "apiVersion": "policy/v1beta1", "kind": "Eviction", "metadata": {"name": "free"},
        "deleteOptions": {"gracePeriodSeconds": 0}})
    assert (answer["status"], answer["code"]) == ("Success", 201)
    # a budget that allows nothing
    pod = kube.client.get(PODS, "run1", ns)
    with pytest.raises(ApiException) as refused:
        core.create_namespaced_pod_eviction("run1", ns, _eviction("run1", ns))
    assert refused.value.status == 429
    # the URL and the body must name the same Pod
    with pytest.raises(ApiException) as mismatch:
        core.create_namespaced_pod_eviction("run1", ns, _eviction("run2", ns))
    assert mismatch.value.status == 400
    assert json.loads(mismatch.value.body)["message"] == "name in URL does not match name in Eviction object"

    # two budgets over one Pod: 500, as upstream
    kube.client.create(PODDISRUPTIONBUDGETS, {"metadata": {"name": "x2"}, "spec": {
        "maxUnavailable": 1, "selector": {"matchLabels": {"app": "x"}}}}, ns)
    with pytest.raises(ApiException) as twice:
        core.create_namespaced_pod_eviction("run1", ns, _eviction("run1", ns))
    assert twice.value.status == 500
    assert json.loads(twice.value.body)["message"] == ("This pod has more than one PodDisruptionBudget, which the "
                                                       "eviction subresource does not support.")
    assert kube.client.get(PODS, "run1", ns)["metadata"]["uid"] == pod["metadata"]["uid"]

    # a not-ready Pod spends no budget: refused while the budget is not met (IfHealthyBudget, the default) ...
    kube.client.create(PODDISRUPTIONBUDGETS, {"metadata": {"name": "y"}, "spec": {
        "minAvailable": 2, "selector": {"matchLabels": {"app": "y"}}}}, ns)
    pdb_status(kube, ns, "y", observedGeneration=1, expectedPods=3, currentHealthy=1)
    with pytest.raises(ApiException) as blocked:
        core.create_namespaced_pod_eviction("sick", ns, _eviction("sick", ns))
    assert blocked.value.status == 429
    # ... let go with AlwaysAllow ...
    kubectl(kube, "-n", ns, "patch", "pdb", "y", "--type=merge", "-p",
            '{"spec":{"unhealthyPodEvictionPolicy":"AlwaysAllow"}}')
    pdb_status(kube, ns, "y", observedGeneration=2)
    core.create_namespaced_pod_eviction("sick", ns, _eviction("sick", ns))
    with pytest.raises(ApiError):
        kube.client.get(PODS, "sick", ns)
    # ... and by default once the healthy ones meet the budget; neither spends a disruption
    kubectl(kube, "-n", ns, "patch", "pdb", "y", "--type=merge", "-p",
            '{"spec":{"minAvailable":1,"unhealthyPodEvictionPolicy":"IfHealthyBudget"}}')
    status = pdb_status(kube, ns, "y", observedGeneration=3, desiredHealthy=1)
    assert status["disruptionsAllowed"] == 0
    core.create_namespaced_pod_eviction("sick2", ns, _eviction("sick2", ns))
    with pytest.raises(ApiError):
        kube.client.get(PODS, "sick2", ns)
    assert not kube.client.get(PODDISRUPTIONBUDGETS, "y", ns)["status"].get("disruptedPods")


def test_eviction_passes_admission(cluster, core):
    """Evictions are CREATEs of pods/eviction for admission: policies may refuse them, and a terminating
    namespace refuses them with the NamespaceTerminating cause kubectl drain looks for."""
    from kubernetes.client.rest import ApiException

    kube = cluster
    vap = ResourceRef("admissionregistration.k8s.io", "v1", "validatingadmissionpolicies", namespaced=False)
    binding = ResourceRef("admissionregistration.k8s.io", "v1", "validatingadmissionpolicybindings",
                          namespaced=False)
    kube.client.create(vap, {"metadata": {"name": "keep-protected"}, "spec": {
        "failurePolicy": "Fail", "matchConstraints": {"resourceRules": [{
            "apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods/eviction"]}]},
        "validations": [{"expression": "object.kind == 'Eviction' && object.metadata.name != 'protected'",
                         "message": "protected pods stay"}]}})
    kube.client.create(binding, {"metadata": {"name": "keep-protected"}, "spec": {
        "policyName": "keep-protected", "validationActions": ["Deny"]}})
    ns = f"pdb-{uuid.uuid4().hex[:8]}"
    kube.client.create(NAMESPACES, {"metadata": {"name": ns}})
    try:
        for name in ("protected", "other"):
            kube.client.create(PODS, {"metadata": {"name": name, "finalizers": ["example.com/hold"]}, "spec": {
                "containers": [{"name": "c", "image": "i"}]}}, ns)

        def refused():
            try:
                core.create_namespaced_pod_eviction("protected", ns, _eviction("protected", ns), dry_run="All")
            except ApiException as exc:
                return exc
            return None
        assert "protected pods stay" in json.loads(eventually(refused).body)["message"]
        kube.client.delete(NAMESPACES, ns)  # no namespace controller here: it stays Terminating
        with pytest.raises(ApiException) as terminating:
            core.create_namespaced_pod_eviction("other", ns, _eviction("other", ns))
        assert terminating.value.status == 403
        assert json.loads(terminating.value.body)["details"]["causes"][0]["reason"] == "NamespaceTerminating"
    finally:
        kube.client.delete(binding, "keep-protected")
        kube.client.delete(vap, "keep-protected")
        for name in ("protected", "other"):
            kube.client.patch(PODS, name, {"metadata": {"finalizers": None}}, ns)


def test_pending_pods_are_evicted_freely(cluster, core):
    kube = cluster
    ns = f"pdb-{uuid.uuid4().hex[:8]}"  # no kubelet here: the Pod stays Pending
    kube.client.create(NAMESPACES, {"metadata": {"name": ns}})
    kube.client.create(PODS, {"metadata": {"name": "waiting", "labels": {"app": "p"}}, "spec": {
        "containers": [{"name": "c", "image": "i"}]}}, ns)
    kube.client.create(PODDISRUPTIONBUDGETS, {"metadata": {"name": "p"}, "spec": {
        "minAvailable": 5, "selector": {"matchLabels": {"app": "p"}}}}, ns)
    pdb_status(kube, ns, "p", observedGeneration=1)
    core.create_namespaced_pod_eviction("waiting", ns, _eviction("waiting", ns))
    with pytest.raises(ApiError):
        kube.client.get(PODS, "waiting", ns)


def test_stale_disruption_target_is_reset(cluster, ns):
    kube = cluster
    kube.client.create(PODS, {"metadata": {"name": "kept"}, "spec": {"containers": [{"name": "c", "image": "i"}]}},
                       ns)
    eventually(lambda: kube.client.get(PODS, "kept", ns)["status"]["phase"] == "Running")
    old = (dt.datetime.now(dt.UTC) - dt.timedelta(minutes=3)).strftime("%Y-%m-%dT%H:%M:%SZ")
    recent = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    kube.client.create(PODS, {"metadata": {"name": "fresh"}, "spec": {"containers": [{"name": "c", "image": "i"}]}},
                       ns)
    eventually(lambda: kube.client.get(PODS, "fresh", ns)["status"]["phase"] == "Running")
    for name, stamp in (("kept", old), ("fresh", recent)):
        kube.client.patch(PODS, name, {"status": {"conditions": [{
            "type": "DisruptionTarget", "status": "True", "reason": "EvictionByEvictionAPI",
            "message": "Eviction API: evicting", "lastTransitionTime": stamp}]}}, ns, subresource="status",
            patch_type="application/strategic-merge-patch+json")

    def target(name: str) -> dict:
        return next(c for c in kube.client.get(PODS, name, ns)["status"]["conditions"]
                    if c["type"] == "DisruptionTarget")
    eventually(lambda: target("kept")["status"] == "False")
    managers = [m["manager"] for m in kube.client.get(PODS, "kept", ns)["metadata"]["managedFields"]]
    assert "DisruptionController" in managers
    assert target("fresh")["status"] == "True"  # not stale yet (two minutes)


def _node(kube, name: str) -> None:
    with contextlib.suppress(ApiError):
        kube.client.create(NODES, {"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}}})


def test_cordon_and_uncordon(cluster):
    kube = cluster
    _node(kube, "node-c")
    assert kubectl(kube, "cordon", "node-c").stdout.strip() == "node/node-c cordoned"
    assert kube.client.get(NODES, "node-c")["spec"]["unschedulable"] is True
    assert kubectl(kube, "cordon", "node-c").stdout.strip() == "node/node-c already cordoned"
    assert kubectl(kube, "uncordon", "node-c").stdout.strip() == "node/node-c uncordoned"
    assert not kube.client.get(NODES, "node-c")["spec"].get("unschedulable")


@pytest.mark.slow
def test_kubectl_drain_waits_for_the_budget(cluster, ns):
    kube = cluster
    _node(kube, "node-a")
    deployment(kube, ns, "api", 2, node="node-a", scratch=True)
    daemons = kube.client.create(ResourceRef("apps", "v1", "daemonsets"), {"metadata": {"name": "agent"}, "spec": {
        "selector": {"matchLabels": {"app": "agent"}}, "template": {"metadata": {"labels": {"app": "agent"}},
                                                                      "spec": {"containers": [{"name": "c", "image": "i"}]}}}}, ns)
    _owned_pods(kube, ns, {**daemons, "apiVersion": "apps/v1", "kind": "DaemonSet"}, "agent", 1, node="node-a")
    eventually(lambda: len(ready_pods(kube, ns, "app=api")) == 2)
    # Pods with emptyDir data stay unless kubectl is told they may go
    refused = kubectl(kube, "drain", "node-a", "--ignore-daemonsets", "--timeout=2s", check=False)
    assert "cannot delete Pods with local storage (use --delete-emptydir-data to override)" in refused.stderr
    kubectl(kube, "uncordon", "node-a")
    # a server-side dry run evicts nothing and leaves the node schedulable
    dry = kubectl(kube, "drain", "node-a", "--ignore-daemonsets", "--delete-emptydir-data", "--dry-run=server",
                  "--timeout=10s")
    assert dry.stdout.splitlines()[-1] == "node/node-a drained (server dry run)"
    assert len(live_pods(kube, ns, "app=api")) == 2
    assert not kube.client.get(NODES, "node-a")["spec"].get("unschedulable")
    kubectl(kube, "-n", ns, "create", "pdb", "api", "--selector=app=api", "--min-available=2")
    pdb_status(kube, ns, "api", observedGeneration=1, currentHealthy=2)
    before = {p["metadata"]["name"] for p in live_pods(kube, ns, "app=api")}

    # the budget blocks: kubectl retries every 5 s until its timeout
    blocked = kubectl(kube, "drain", "node-a", "--ignore-daemonsets", "--delete-emptydir-data", "--timeout=1s",
                      check=False)
    assert blocked.returncode != 0
    assert "node/node-a cordoned" in blocked.stdout
    assert "Cannot evict pod as it would violate the pod's disruption budget." in blocked.stderr
    assert "global timeout reached: 1s" in blocked.stderr
    assert f"Warning: ignoring DaemonSet-managed Pods: {ns}/agent-0" in blocked.stderr
    assert {p["metadata"]["name"] for p in live_pods(kube, ns, "app=api")} == before
    assert kube.client.get(NODES, "node-a")["spec"]["unschedulable"] is True

    # one disruption allowed: one Pod goes at once, the other after its replacement is ready (a retry later)
    kubectl(kube, "-n", ns, "patch", "pdb", "api", "--type=merge", "-p", '{"spec":{"minAvailable":1}}')
    pdb_status(kube, ns, "api", observedGeneration=2, disruptionsAllowed=1)
    started = time.monotonic()
    drained = subprocess.run([kubectl_binary(), "--kubeconfig", kube.kubeconfig, "drain", "node-a",
                              "--ignore-daemonsets", "--delete-emptydir-data", "--timeout=30s"],
                             capture_output=True, text=True, timeout=60)
    assert drained.returncode == 0, drained.stderr
    lines = drained.stdout.splitlines()
    assert "node/node-a already cordoned" in lines[0]
    assert {line for line in lines if line.startswith("pod/")} == {f"pod/{name} evicted" for name in before}
    assert lines[-1] == "node/node-a drained"
    assert "(will retry after 5s): Cannot evict pod as it would violate the pod's disruption budget." \
        in drained.stderr
    assert time.monotonic() - started < 20
    assert not before & {p["metadata"]["name"] for p in live_pods(kube, ns)}
    assert "agent-0" in {p["metadata"]["name"] for p in live_pods(kube, ns)}  # DaemonSet Pods stay
    kubectl(kube, "uncordon", "node-a")


@pytest.mark.slow
def test_drain_with_nodes_and_the_scheduler_keeps_the_budget():
    """End to end on a cluster with every controller, the scheduler and two in-process (simulated) nodes: the
    drained node's Pods are replaced on the other node one at a time, never leaving fewer Ready than the budget
    asks for."""
    from mini_kube.testing import MiniKube

    with MiniKube(nodes=2, node_runtime="simulated") as kube:
        kubectl(kube, "create", "deployment", "web", "--image=nginx", "--replicas=4")
        kubectl(kube, "rollout", "status", "deploy/web", "--timeout=30s")
        kubectl(kube, "create", "pdb", "web", "--selector=app=web", "--min-available=3")
        pdb_status(kube, "default", "web", disruptionsAllowed=1)
        nodes = sorted({p["spec"]["nodeName"] for p in live_pods(kube, "default")})
        assert len(nodes) == 2
        drained = nodes[0]
        lowest, stop = [4], threading.Event()

        def count_ready() -> None:
            while not stop.is_set():
                with contextlib.suppress(ApiError, TimeoutError):
                    lowest[0] = min(lowest[0], len(ready_pods(kube, "default", "app=web")))
                time.sleep(0.02)
        watcher = threading.Thread(target=count_ready, daemon=True)
        watcher.start()
        try:
            result = kubectl(kube, "drain", drained, "--ignore-daemonsets", "--delete-emptydir-data",
                             "--timeout=60s")
        finally:
            stop.set()
            watcher.join(5)
        assert result.stdout.splitlines()[-1] == f"node/{drained} drained"
        assert lowest[0] >= 3
        pods = eventually(lambda: len(ready_pods(kube, "default", "app=web")) == 4 and ready_pods(
            kube, "default", "app=web"))
        assert {p["spec"]["nodeName"] for p in pods} == {nodes[1]}
        assert kube.client.get(NODES, drained)["spec"]["unschedulable"] is True
