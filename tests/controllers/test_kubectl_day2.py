"""Day-2 workload operations through real kubectl, as a user runs them against a real cluster: rollout history
with change-causes, undo twice (revisions renumbered as upstream renumbers them), autoscale. One shared cluster
on a simulated node, so Pods run and become Ready without processes."""

from __future__ import annotations

import json

import pytest
from mini_kube.machinery.refs import DEPLOYMENTS, EVENTS, HORIZONTALPODAUTOSCALERS, PODS, REPLICASETS

from tests.helpers import kubectl, new_namespace


@pytest.fixture(scope="module")
def kube():
    from mini_kube.testing import MiniKube

    options = {"horizontalpodautoscaling": {"sync_period": 0.3}}
    with MiniKube(nodes=1, node_runtime="simulated", controller_options=options) as cluster:
        yield cluster


def _history(kube, ns: str, target: str) -> list[list[str]]:
    """`kubectl rollout history` as rows of [revision, change-cause]."""
    out = kubectl(kube, "-n", ns, "rollout", "history", target).stdout
    return [line.split(None, 1) for line in out.splitlines()[2:] if line.strip()]


def _annotations(kube, ns: str, kind: str, name: str) -> dict[str, str]:
    obj = json.loads(kubectl(kube, "-n", ns, "get", kind, name, "-o", "json").stdout)
    return obj["metadata"].get("annotations") or {}


@pytest.mark.slow
def test_rollout_history_change_cause_and_undo_renumber_revisions(kube):
    """The Deployment's change-cause is copied to its ReplicaSet (history shows it), the Deployment carries its
    revision, and an undo moves the old ReplicaSet to the next revision (remembered in revision-history), so a
    second undo goes back again, as kube-controller-manager does."""
    ns = new_namespace(kube, "day2")
    kubectl(kube, "-n", ns, "create", "deployment", "web", "--image=nginx:1", "--replicas=2")
    kubectl(kube, "-n", ns, "rollout", "status", "deploy/web", "--timeout=30s")
    kubectl(kube, "-n", ns, "set", "image", "deploy/web", "nginx=nginx:2")
    kubectl(kube, "-n", ns, "annotate", "deploy/web", "kubernetes.io/change-cause=bump to 2")
    kubectl(kube, "-n", ns, "rollout", "status", "deploy/web", "--timeout=30s")
    assert _history(kube, ns, "deploy/web") == [["1", "<none>"], ["2", "bump to 2"]]
    assert _annotations(kube, ns, "deploy", "web")["deployment.kubernetes.io/revision"] == "2"

    assert "rolled back" in kubectl(kube, "-n", ns, "rollout", "undo", "deploy/web").stdout
    kubectl(kube, "-n", ns, "rollout", "status", "deploy/web", "--timeout=30s")
    assert _history(kube, ns, "deploy/web") == [["2", "bump to 2"], ["3", "<none>"]]
    assert _annotations(kube, ns, "deploy", "web")["deployment.kubernetes.io/revision"] == "3"

    kubectl(kube, "-n", ns, "rollout", "undo", "deploy/web")
    kubectl(kube, "-n", ns, "rollout", "status", "deploy/web", "--timeout=30s")
    assert _history(kube, ns, "deploy/web") == [["3", "<none>"], ["4", "bump to 2"]]
    image = kubectl(kube, "-n", ns, "get", "deploy/web", "-o", "jsonpath={.spec.template.spec.containers[0].image}")
    assert image.stdout == "nginx:2"
    rs = json.loads(kubectl(kube, "-n", ns, "get", "rs", "-o", "json").stdout)["items"]
    current = next(r for r in rs if r["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "4")
    assert current["metadata"]["annotations"]["deployment.kubernetes.io/revision-history"] == "2"
    skipped = kubectl(kube, "-n", ns, "rollout", "undo", "deploy/web", "--to-revision=4").stdout
    assert "skipped rollback (current template already matches revision 4)" in skipped


def _raw(kube, path: str) -> dict:
    return json.loads(kubectl(kube, "get", "--raw", path).stdout)


def test_autoscale_stores_v2_and_serves_both_versions(kube, tmp_path):
    """`kubectl autoscale` writes autoscaling/v1; the HPA is stored as v2 (the CPU target a v2 metric, 80% when
    none is given) and served in either version; what v1 cannot say travels in the round-trip annotations, so a
    PUT through v1 keeps a v2-only metric and behavior (filled with upstream's default scaling rules)."""
    ns = new_namespace(kube, "day2")
    kubectl(kube, "-n", ns, "create", "deployment", "web", "--image=nginx:1")
    assert "autoscaled" in kubectl(kube, "-n", ns, "autoscale", "deploy", "web", "--min=2", "--max=5",
                                   "--cpu-percent=70").stdout
    kubectl(kube, "-n", ns, "autoscale", "deploy", "web", "--name=plain", "--max=3")
    v2 = json.loads(kubectl(kube, "-n", ns, "get", "hpa", "web", "-o", "json").stdout)
    assert v2["apiVersion"] == "autoscaling/v2" and "targetCPUUtilizationPercentage" not in v2["spec"]
    assert v2["spec"]["metrics"] == [{"type": "Resource", "resource": {
        "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 70}}}]
    plain = json.loads(kubectl(kube, "-n", ns, "get", "hpa", "plain", "-o", "json").stdout)
    assert plain["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"] == 80
    base = f"/apis/autoscaling/v1/namespaces/{ns}/horizontalpodautoscalers"
    v1 = _raw(kube, f"{base}/web")
    assert v1["apiVersion"] == "autoscaling/v1" and "metrics" not in v1["spec"]
    assert (v1["spec"]["targetCPUUtilizationPercentage"], v1["spec"]["minReplicas"]) == (70, 2)
    assert {"currentReplicas", "desiredReplicas"} <= set(v1["status"])  # not omitted in v1, even when 0
    assert [i["spec"]["targetCPUUtilizationPercentage"] for i in _raw(kube, base)["items"]] == [80, 70]
    table = kubectl(kube, "-n", ns, "get", "hpa", "web", "--no-headers").stdout
    assert "cpu: <unknown>/70%" in table

    qps = {"type": "Pods", "pods": {"metric": {"name": "qps"}, "target": {"type": "AverageValue",
                                                                          "averageValue": "10"}}}
    patch = {"spec": {"behavior": {"scaleDown": {"stabilizationWindowSeconds": 60}},
                      "metrics": [v2["spec"]["metrics"][0], qps]}}
    kubectl(kube, "-n", ns, "patch", "hpa", "web", "--type=merge", "-p", json.dumps(patch))
    v1 = _raw(kube, f"{base}/web")
    annotations = v1["metadata"]["annotations"]
    assert json.loads(annotations["autoscaling.alpha.kubernetes.io/metrics"]) == [
        {"type": "Pods", "pods": {"metricName": "qps", "targetAverageValue": "10"}}]
    assert json.loads(annotations["autoscaling.alpha.kubernetes.io/behavior"])["scaleDown"][
        "stabilizationWindowSeconds"] == 60

    def put_v1() -> bool:  # again on a conflict: the autoscaler controller writes the status meanwhile
        v1 = _raw(kube, f"{base}/web")
        v1["spec"]["maxReplicas"] = 7
        (tmp_path / "v1.json").write_text(json.dumps(v1))
        done = kubectl(kube, "replace", "--raw", f"{base}/web", "-f", str(tmp_path / "v1.json"), check=False)
        assert done.returncode == 0 or "Conflict" in done.stderr or "modified" in done.stderr, done.stderr
        return done.returncode == 0

    from tests.helpers import eventually

    eventually(put_v1)
    v2 = json.loads(kubectl(kube, "-n", ns, "get", "hpa", "web", "-o", "json").stdout)
    assert v2["spec"]["maxReplicas"] == 7 and "annotations" not in v2["metadata"]
    assert v2["spec"]["metrics"] == [qps, patch["spec"]["metrics"][0]]  # v1's others first, as upstream
    assert v2["spec"]["behavior"] == {
        "scaleUp": {"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [
            {"type": "Pods", "value": 4, "periodSeconds": 15}, {"type": "Percent", "value": 100, "periodSeconds": 15}]},
        "scaleDown": {"stabilizationWindowSeconds": 60, "selectPolicy": "Max", "policies": [
            {"type": "Percent", "value": 100, "periodSeconds": 15}]}}


def test_debug_adds_ephemeral_containers_only_through_their_subresource(kube):
    """pods/ephemeralcontainers changes spec.ephemeralContainers and nothing else; an ephemeral container may not
    be removed or changed, name a missing target, or set ports/probes/resources; the kubelet runs it (never
    ready, no `started`)."""
    from mini_kube.client import ApiError, ResourceRef

    pods = ResourceRef("", "v1", "pods")
    ns = new_namespace(kube, "day2")
    kubectl(kube, "-n", ns, "run", "p", "--image=nginx", "--labels=app=p")
    kubectl(kube, "-n", ns, "wait", "--for=condition=Ready", "pod/p", "--timeout=30s")
    kubectl(kube, "-n", ns, "debug", "p", "--image=busybox", "-c", "dbg", "--profile=general", "--", "sleep", "1d")
    spec = json.loads(kubectl(kube, "-n", ns, "get", "pod", "p", "-o", "json").stdout)["spec"]
    [dbg] = spec["ephemeralContainers"]
    assert (dbg["name"], dbg["image"], dbg["command"]) == ("dbg", "busybox", ["sleep", "1d"])
    assert (dbg["terminationMessagePath"], dbg["imagePullPolicy"]) == ("/dev/termination-log", "Always")

    def running():
        status = kube.client.get(pods, "p", ns)["status"]
        return next((s for s in status.get("ephemeralContainerStatuses") or () if "running" in s["state"]), None)

    from tests.helpers import eventually

    entry = eventually(running)
    assert entry["name"] == "dbg" and entry["ready"] is False and "started" not in entry

    bad = kubectl(kube, "-n", ns, "debug", "p", "--image=busybox", "-c", "dbg2", "--target=nope",
                  "--profile=general", check=False)
    assert 'spec.ephemeralContainers[1].targetContainerName: Not found: "nope"' in bad.stderr

    def patch(body: dict) -> ApiError:
        try:
            kube.client.patch(pods, "p", body, ns, subresource="ephemeralcontainers",
                              patch_type="application/strategic-merge-patch+json")
        except ApiError as exc:
            return exc
        raise AssertionError("the patch was accepted")

    removed = patch({"spec": {"$setElementOrder/ephemeralContainers": [], "ephemeralContainers": [
        {"name": "dbg", "$patch": "delete"}]}})
    assert removed.status == 422 and 'existing ephemeral containers "dbg" may not be removed' in str(removed)
    changed = patch({"spec": {"ephemeralContainers": [{"name": "dbg", "image": "alpine"}]}})
    assert 'spec.ephemeralContainers[dbg]: Forbidden: existing ephemeral containers "dbg" may not be changed' \
        in str(changed)
    ported = patch({"spec": {"ephemeralContainers": [{"name": "web", "image": "busybox", "ports": [
        {"containerPort": 80}], "terminationMessagePolicy": "File"}]}})
    assert "].ports: Forbidden: cannot be set for an Ephemeral Container" in str(ported)

    kube.client.patch(pods, "p", {"metadata": {"labels": {"app": "changed"}}, "spec": {
        "activeDeadlineSeconds": 5, "ephemeralContainers": [{"name": "dbg3", "image": "busybox"}]}}, ns,
        subresource="ephemeralcontainers", patch_type="application/strategic-merge-patch+json")
    pod = kube.client.get(pods, "p", ns)
    assert sorted(c["name"] for c in pod["spec"]["ephemeralContainers"]) == ["dbg", "dbg3"]
    assert pod["metadata"]["labels"] == {"app": "p"} and "activeDeadlineSeconds" not in pod["spec"]


@pytest.mark.slow
def test_rollout_status_reports_an_exceeded_progress_deadline(kube):
    """A rollout whose Pods never become available (here: nowhere to schedule them) gets Progressing=False,
    ProgressDeadlineExceeded after progressDeadlineSeconds without progress, so `kubectl rollout status` fails
    as on a real cluster; a fixed template starts afresh and completes."""
    ns = new_namespace(kube, "day2")
    deployment = json.loads(kubectl(kube, "-n", ns, "create", "deployment", "stuck", "--image=x", "--dry-run=client",
                                    "-o", "json").stdout)
    deployment["spec"]["progressDeadlineSeconds"] = 1
    deployment["spec"]["template"]["spec"]["nodeSelector"] = {"no-such": "node"}
    kubectl(kube, "-n", ns, "apply", "-f", "-", input=json.dumps(deployment))
    stuck = kubectl(kube, "-n", ns, "rollout", "status", "deploy/stuck", "--timeout=30s", check=False)
    assert stuck.returncode == 1 and 'error: deployment "stuck" exceeded its progress deadline' in stuck.stderr
    # a Pod created late (more than the 1 s deadline after its ReplicaSet, under load) is progress again, as on
    # a real cluster: the rollout then times out anew a second later
    kubectl(kube, "-n", ns, "wait", "deploy/stuck", "--timeout=30s",
            "--for=jsonpath={.status.conditions[?(@.type=='Progressing')].reason}=ProgressDeadlineExceeded")
    conditions = json.loads(kubectl(kube, "-n", ns, "get", "deploy", "stuck", "-o", "json").stdout)["status"][
        "conditions"]
    progressing = next(c for c in conditions if c["type"] == "Progressing")
    assert (progressing["status"], progressing["reason"]) == ("False", "ProgressDeadlineExceeded")
    assert progressing["message"].endswith("has timed out progressing.")
    # pausing does not hide the reported lack of progress (checkPausedConditions)
    kubectl(kube, "-n", ns, "rollout", "pause", "deploy/stuck")
    kubectl(kube, "-n", ns, "wait", "--for=jsonpath={.status.observedGeneration}=2", "deploy/stuck",
            "--timeout=30s")
    # the fix, with a deadline the new Pod's start can meet on a loaded machine
    kubectl(kube, "-n", ns, "patch", "deploy", "stuck", "--type=json", "-p",
            '[{"op": "remove", "path": "/spec/template/spec/nodeSelector"},'
            ' {"op": "replace", "path": "/spec/progressDeadlineSeconds", "value": 600}]')
    kubectl(kube, "-n", ns, "wait", "--for=jsonpath={.status.observedGeneration}=3", "deploy/stuck",
            "--timeout=30s")
    conditions = json.loads(kubectl(kube, "-n", ns, "get", "deploy", "stuck", "-o", "json").stdout)["status"][
        "conditions"]
    assert next(c for c in conditions if c["type"] == "Progressing")["reason"] == "ProgressDeadlineExceeded"
    kubectl(kube, "-n", ns, "rollout", "resume", "deploy/stuck")
    kubectl(kube, "-n", ns, "rollout", "status", "deploy/stuck", "--timeout=30s")


@pytest.mark.slow
def test_progress_deadline_counts_whole_seconds_from_the_last_progress(kube):
    """progressDeadlineSeconds is counted from the moment of the last progress, not from the Progressing
    condition's lastUpdateTime, which keeps whole seconds only: a 1 s deadline ran out as little as 0.2 s after
    a Pod was created (so the rollout then "progressed" again). Four stuck rollouts started at different points of
    a second, watched through the official client: each times out only a full second after its last progress."""
    import threading
    import time

    from kubernetes import client as k8s
    from kubernetes import config as k8s_config
    from kubernetes import watch as k8s_watch
    from urllib3.exceptions import ProtocolError

    ns = new_namespace(kube, "day2")
    configuration = k8s.Configuration()
    k8s_config.load_kube_config(config_file=kube.kubeconfig, client_configuration=configuration)
    seen: list[tuple[float, str, str]] = []  # (when, name, Progressing reason)
    with k8s.ApiClient(configuration) as api:
        apps = k8s.AppsV1Api(api)
        stream = k8s_watch.Watch()

        stopped = threading.Event()

        def watch() -> None:
            try:
                for event in stream.stream(apps.list_namespaced_deployment, ns, timeout_seconds=60):
                    d = event["object"]
                    reason = next((c.reason for c in (d.status.conditions or ()) if c.type == "Progressing"), "")
                    seen.append((time.monotonic(), d.metadata.name, reason))
            except ProtocolError:
                if not stopped.is_set():  # only the client closing under it at the end is expected
                    raise

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        time.sleep(0.5)
        names = []
        for fraction in (0.3, 0.5, 0.7, 0.9):
            time.sleep((fraction - time.time() % 1) % 1)
            name = f"slow-{int(fraction * 10)}"
            names.append(name)
            template = {"metadata": {"labels": {"app": name}}, "spec": {
                "nodeSelector": {"no-such": "node"}, "containers": [{"name": "c", "image": "x"}]}}
            apps.create_namespaced_deployment(ns, {"metadata": {"name": name}, "spec": {
                "progressDeadlineSeconds": 1, "selector": {"matchLabels": {"app": name}}, "template": template}})
        for name in names:
            kubectl(kube, "-n", ns, "wait", f"deploy/{name}", "--timeout=30s",
                    "--for=jsonpath={.status.conditions[?(@.type=='Progressing')].reason}=ProgressDeadlineExceeded")
        time.sleep(1.5)  # any late flip back to progressing shows up too
        stopped.set()
        stream.stop()
    for name in names:
        events = [(when, reason) for when, n, reason in seen if n == name]
        for (before, was), (after, now) in zip(events, events[1:], strict=False):
            if was == "ReplicaSetUpdated" and now == "ProgressDeadlineExceeded":
                assert after - before >= 0.8, f"{name} timed out {after - before:.2f} s after progressing: {events}"
        assert events[-1][1] == "ProgressDeadlineExceeded", f"{name} progressed after timing out: {events}"


def test_set_image_on_a_pod_restarts_its_container_with_the_new_image(kube):
    """`kubectl set image pod/...` changes the one mutable field of a Pod's containers: the kubelet stops the
    container ("definition changed") and starts it again with the new image, counting a restart."""
    from tests.helpers import eventually

    ns = new_namespace(kube, "day2")
    kubectl(kube, "-n", ns, "run", "p", "--image=nginx:1")
    kubectl(kube, "-n", ns, "wait", "--for=condition=Ready", "pod/p", "--timeout=30s")
    kubectl(kube, "-n", ns, "set", "image", "pod/p", "p=nginx:2")

    def restarted(pod: dict) -> dict | None:
        [status] = pod["status"]["containerStatuses"]
        return status if status["restartCount"] == 1 and "running" in status["state"] else None

    eventually(lambda: restarted(kube.client.get(PODS, "p", ns)))  # waited for in-process, then read with kubectl
    status = restarted(json.loads(kubectl(kube, "-n", ns, "get", "pod", "p", "-o", "json").stdout))
    assert status is not None
    assert status["image"] == "docker.io/library/nginx:2" and "terminated" in status["lastState"]
    events = kubectl(kube, "-n", ns, "get", "events", "--field-selector", "reason=Killing", "-o",
                     "jsonpath={.items[*].message}").stdout
    assert events == "Container p definition changed, will be restarted"
    kubectl(kube, "-n", ns, "wait", "--for=condition=Ready", "pod/p", "--timeout=30s")


def test_describe_lists_events_of_one_second_in_the_order_they_happened(kube):
    """Events are named `<object>.<hex unix nanoseconds>` as client-go names them, so the API's name order is
    their order, and `kubectl describe` (which sorts by a timestamp of one-second precision) tells a rollout's
    steps in sequence."""
    ns = new_namespace(kube, "day2")
    kubectl(kube, "-n", ns, "create", "deployment", "web", "--image=nginx:1", "--replicas=2")
    kubectl(kube, "-n", ns, "rollout", "status", "deploy/web", "--timeout=30s")
    kubectl(kube, "-n", ns, "set", "image", "deploy/web", "nginx=nginx:2")
    kubectl(kube, "-n", ns, "rollout", "status", "deploy/web", "--timeout=30s")
    events = json.loads(kubectl(kube, "-n", ns, "get", "events", "--field-selector",
                                "involvedObject.kind=Deployment", "-o", "json").stdout)["items"]
    assert len(events) >= 4
    versions = [int(e["metadata"]["resourceVersion"]) for e in events]  # listed in name order
    assert versions == sorted(versions)
    described = kubectl(kube, "-n", ns, "describe", "deploy", "web").stdout
    messages = [line.split("deployment-controller", 1)[1].strip()
                for line in described.splitlines() if "deployment-controller" in line]
    assert messages == [e["message"] for e in events]
    assert messages[0].endswith("from 0 to 2") and messages[-1].endswith("to 0")


def test_scaling_a_deployment_updates_its_replicasets_replica_annotations(kube):
    """The ReplicaSet a Deployment scales carries the Deployment's desired and maximum (desired + surge) replica
    counts in its annotations, as kube-controller-manager's scaleReplicaSet keeps them (`kubectl describe rs`)."""
    ns = new_namespace(kube, "day2")
    kubectl(kube, "-n", ns, "create", "deployment", "web", "--image=nginx:1", "--replicas=2")
    kubectl(kube, "-n", ns, "rollout", "status", "deploy/web", "--timeout=30s")
    kubectl(kube, "-n", ns, "scale", "deploy/web", "--current-replicas=2", "--replicas=5")
    kubectl(kube, "-n", ns, "rollout", "status", "deploy/web", "--timeout=30s")
    [rs] = json.loads(kubectl(kube, "-n", ns, "get", "rs", "-o", "json").stdout)["items"]
    annotations = rs["metadata"]["annotations"]
    assert rs["spec"]["replicas"] == 5
    assert (annotations["deployment.kubernetes.io/desired-replicas"],
            annotations["deployment.kubernetes.io/max-replicas"]) == ("5", "7")  # surge: 25% of 5, rounded up
    refused = kubectl(kube, "-n", ns, "scale", "deploy/web", "--current-replicas=2", "--replicas=1", check=False)
    assert refused.returncode == 1 and "Expected replicas to be 2, was 5" in refused.stderr


@pytest.mark.slow
def test_a_stuck_rollout_keeps_its_availability_and_scales_in_proportion(kube):
    """A rolling update whose new Pods cannot be placed stops where maxSurge and maxUnavailable say (10 replicas,
    surge 3, unavailable 2: the old ReplicaSet at 8, the new one at 13 - 8 = 5), however often the controller
    looks again; scaling the Deployment to 30 meanwhile shares the new maximum (33) in proportion to the two
    ReplicaSets' sizes (8/13 and 5/13 of 20 more), as kube-controller-manager does."""
    ns = new_namespace(kube, "day2")
    kubectl(kube, "-n", ns, "create", "deployment", "web", "--image=nginx:1", "--replicas=10")
    kubectl(kube, "-n", ns, "patch", "deploy", "web", "-p",
            '{"spec": {"strategy": {"rollingUpdate": {"maxSurge": 3, "maxUnavailable": 2}}}}')
    kubectl(kube, "-n", ns, "rollout", "status", "deploy/web", "--timeout=60s")
    kubectl(kube, "-n", ns, "patch", "deploy", "web", "-p",
            '{"spec": {"template": {"spec": {"nodeSelector": {"no-such": "node"}}}}}')

    def sizes(by_kubectl: bool = False) -> list[int]:
        """The ReplicaSets' sizes, oldest first: waited for in-process, what is asserted read with kubectl."""
        replicasets = json.loads(kubectl(kube, "-n", ns, "get", "rs", "-o", "json").stdout)["items"] if by_kubectl \
            else kube.client.list(REPLICASETS, ns)["items"]
        replicasets.sort(key=lambda rs: int(rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"]))
        return [rs["spec"]["replicas"] for rs in replicasets]

    from tests.helpers import eventually

    eventually(lambda: sizes() == [8, 5], timeout=30, explain=lambda: f"sizes {sizes()}")
    import time

    time.sleep(2)  # ReplicaSet and Pod updates meanwhile change nothing
    assert sizes(by_kubectl=True) == [8, 5]
    kubectl(kube, "-n", ns, "scale", "deploy/web", "--replicas=30")
    eventually(lambda: sizes() == [20, 13], timeout=30, explain=lambda: f"sizes {sizes()}")
    assert sizes(by_kubectl=True) == [20, 13]
    annotations = [rs["metadata"]["annotations"] for rs in json.loads(
        kubectl(kube, "-n", ns, "get", "rs", "-o", "json").stdout)["items"]]
    assert {(a["deployment.kubernetes.io/desired-replicas"], a["deployment.kubernetes.io/max-replicas"])
            for a in annotations} == {("30", "33")}


@pytest.mark.slow
def test_the_autoscaler_keeps_its_target_within_bounds_and_reports_missing_metrics(kube):
    """With no metrics API (as on a cluster without metrics-server) the HPA controller still moves its target
    into [min, max] (SuccessfulRescale), and otherwise reports why it cannot scale: ScalingActive=False
    FailedGetResourceMetric, events, `currentMetrics` of empty entries; a target that does not exist is
    FailedGetScale."""
    from tests.helpers import eventually

    ns = new_namespace(kube, "day2")
    kubectl(kube, "-n", ns, "create", "deployment", "web", "--image=nginx:1", "--replicas=1")
    kubectl(kube, "-n", ns, "autoscale", "deployment", "web", "--min=2", "--max=3", "--cpu-percent=50")

    def hpa(name: str = "web", by_kubectl: bool = False) -> dict:
        """The autoscaler: waited for in-process (each kubectl run is ~0.1 s of CPU), read with kubectl once."""
        if by_kubectl:
            return json.loads(kubectl(kube, "-n", ns, "get", "hpa", name, "-o", "json").stdout)
        return kube.client.get(HORIZONTALPODAUTOSCALERS, name, ns)

    def condition(obj, kind):
        return next((c for c in obj["status"].get("conditions") or () if c["type"] == kind), {})

    def events(reason):
        return kubectl(kube, "-n", ns, "get", "events", "--field-selector", f"reason={reason}", "-o",
                       "jsonpath={.items[*].message}").stdout

    def event_messages(reason) -> str:
        items = kube.client.list(EVENTS, ns, fieldSelector=f"reason={reason}")["items"]
        return " ".join(e.get("message", "") for e in items)

    eventually(lambda: event_messages("SuccessfulRescale"))
    assert events("SuccessfulRescale") == "New size: 2; reason: Current number of replicas below Spec.MinReplicas"
    kubectl(kube, "-n", ns, "rollout", "status", "deploy/web", "--timeout=30s")
    eventually(lambda: (obj := hpa())["status"].get("currentReplicas") == 2 and
               condition(obj, "ScalingActive").get("reason") and obj["status"])
    status = hpa(by_kubectl=True)["status"]
    missing = ("failed to get cpu utilization: unable to get metrics for resource cpu: unable to fetch metrics from "
               "resource metrics API: the server could not find the requested resource (get pods.metrics.k8s.io)")
    active = condition({"status": status}, "ScalingActive")
    assert (active["status"], active["reason"]) == ("False", "FailedGetResourceMetric")
    assert active["message"] == f"the HPA was unable to compute the replica count: {missing}"
    assert condition({"status": status}, "AbleToScale")["reason"] == "SucceededGetScale"
    assert (status["desiredReplicas"], status["currentMetrics"]) == (2, [{"type": ""}])
    assert "lastScaleTime" in status
    assert events("FailedGetResourceMetric") == missing
    assert events("FailedComputeMetricsReplicas") == (
        f"invalid metrics (1 invalid out of 1), first error is: failed to get cpu resource metric value: {missing}")
    row = kubectl(kube, "-n", ns, "get", "hpa", "web", "--no-headers").stdout.split()
    assert row[:6] == ["web", "Deployment/web", "cpu:", "<unknown>/50%", "2", "3"] and row[6] == "2"

    kubectl(kube, "-n", ns, "scale", "deploy/web", "--replicas=5")
    eventually(lambda: "above Spec.MaxReplicas" in event_messages("SuccessfulRescale"))
    assert "above Spec.MaxReplicas" in events("SuccessfulRescale")
    eventually(lambda: kube.client.get(DEPLOYMENTS, "web", ns)["spec"]["replicas"] == 3)
    assert kubectl(kube, "-n", ns, "get", "deploy", "web", "-o", "jsonpath={.spec.replicas}").stdout == "3"

    kubectl(kube, "-n", ns, "create", "-f", "-", input=json.dumps({
        "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "nowhere"},
        "spec": {"maxReplicas": 2, "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                                      "name": "nowhere"}}}))
    eventually(lambda: condition(hpa("nowhere"), "AbleToScale"))
    able = condition(hpa("nowhere", by_kubectl=True), "AbleToScale")
    assert (able["status"], able["reason"]) == ("False", "FailedGetScale")
    assert able["message"] == ("the HPA controller was unable to get the target's current scale: "
                               'deployments/scale.apps "nowhere" not found')
