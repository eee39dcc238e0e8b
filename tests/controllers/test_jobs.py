"""Jobs through real kubectl with the job, ttl-after-finished and garbage collector controllers. Pods finish
when the test says so: it sets their phase through the status subresource, as a kubelet would."""

from __future__ import annotations

import datetime as dt
import functools
import json
import time
import uuid

import pytest
from mini_kube.machinery.refs import JOBS, NAMESPACES, PODS

from tests.helpers import eventually as _eventually
from tests.helpers import kubectl

eventually = functools.partial(_eventually, timeout=15.0, interval=0.03)
FINALIZER = "batch.kubernetes.io/job-tracking"
BACKOFF = 0.3  # seconds before the first replacement of a failed Pod (upstream: 10 s)


@pytest.fixture(scope="module")
def cluster():
    from mini_kube.client import ApiClient, Connection
    from mini_kube.controllers.kube_controller_manager import KubeControllerManager

    from mini_kube.testing import MiniKube

    with MiniKube(controllers=False) as kube:
        manager = KubeControllerManager(ApiClient(Connection.from_kubeconfig(kube.kubeconfig)),
                          names="job,ttl-after-finished,garbagecollector",
                          options={"job": {"backoff_base": BACKOFF, "backoff_max": 4 * BACKOFF}})
        kube.run(manager.start())
        try:
            yield kube
        finally:
            kube.run(manager.stop())


@pytest.fixture
def ns(cluster):
    name = f"j-{uuid.uuid4().hex[:8]}"
    cluster.client.create(NAMESPACES, {"metadata": {"name": name}})
    return name




def pods(kube, ns: str, job: str = "") -> list[dict]:
    items = kube.client.list(PODS, ns)["items"]
    return [p for p in items if not job or p["metadata"].get("labels", {}).get("job-name") == job]


def running(kube, ns: str, job: str = "") -> list[dict]:
    return [p for p in pods(kube, ns, job) if p["status"].get("phase") not in ("Succeeded", "Failed")
            and not p["metadata"].get("deletionTimestamp")]


def finish(kube, pod: dict, phase: str, exit_code: int | None = None, conditions: list | None = None) -> None:
    """What a kubelet reports when the Pod's container has exited (the API server keeps its times to the second)."""
    stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    code = exit_code if exit_code is not None else (0 if phase == "Succeeded" else 1)
    status = {"phase": phase, "conditions": conditions or [], "containerStatuses": [{
        "name": "c", "image": "busybox", "imageID": "", "ready": False, "restartCount": 0, "started": False,
        "state": {"terminated": {"exitCode": code, "reason": "Completed" if code == 0 else "Error",
                                 "startedAt": stamp, "finishedAt": stamp}}}]}
    kube.client.patch(PODS, pod["metadata"]["name"], {"status": status}, pod["metadata"]["namespace"],
                      subresource="status")


def job(kube, ns: str, name: str) -> dict:
    return kube.client.get(JOBS, name, ns)


def explain(kube, ns: str, name: str) -> str:
    """The Job's status and its Pods as the API has them (for a wait that timed out)."""
    lines = [f"job {name}: {job(kube, ns, name).get('status')}"]
    lines += [f"pod {p['metadata']['name']}: finalizers {p['metadata'].get('finalizers')} deletionTimestamp "
              f"{p['metadata'].get('deletionTimestamp')} grace {p['metadata'].get('deletionGracePeriodSeconds')} "
              f"node {p['spec'].get('nodeName')} phase {p['status'].get('phase')} owners "
              f"{[(r['kind'], r['name']) for r in p['metadata'].get('ownerReferences') or ()]}" for p in pods(kube, ns)]
    return "\n".join(lines)


def conditions(obj: dict) -> dict[str, dict]:
    return {c["type"]: c for c in (obj.get("status") or {}).get("conditions") or ()}


def manifest(name: str, **spec) -> str:
    template = {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}
    return json.dumps({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
                       "spec": {"template": template, **spec}})


def test_job_runs_to_completion_within_parallelism(cluster, ns):
    kube = cluster
    kubectl(kube, "-n", ns, "apply", "-f", "-", input=manifest("work", completions=5, parallelism=2))
    created = job(kube, ns, "work")
    uid = created["metadata"]["uid"]
    assert created["spec"]["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    most = 0
    while True:
        active = eventually(lambda: running(kube, ns) or conditions(job(kube, ns, "work")).get("Complete"))
        if isinstance(active, dict):
            break
        most = max(most, len(active))
        pod = active[0]
        assert pod["metadata"]["finalizers"] == [FINALIZER]
        assert pod["metadata"]["ownerReferences"][0]["kind"] == "Job"
        assert {k: pod["metadata"]["labels"][k] for k in ("controller-uid", "batch.kubernetes.io/controller-uid",
                                                          "job-name", "batch.kubernetes.io/job-name")} == {
            "controller-uid": uid, "batch.kubernetes.io/controller-uid": uid, "job-name": "work",
            "batch.kubernetes.io/job-name": "work"}
        finish(kube, pod, "Succeeded")
        time.sleep(0.05)
    assert most == 2
    kubectl(kube, "-n", ns, "wait", "--for=condition=complete", "job/work", "--timeout=20s")
    status = job(kube, ns, "work")["status"]
    assert status["succeeded"] == 5 and "failed" not in status and "active" not in status
    assert status["ready"] == 0 and status["terminating"] == 0 and status["uncountedTerminatedPods"] == {}
    assert [c["type"] for c in status["conditions"]] == ["SuccessCriteriaMet", "Complete"]
    assert conditions(job(kube, ns, "work"))["Complete"]["reason"] == "CompletionsReached"
    assert status["completionTime"] >= status["startTime"]
    eventually(lambda: all(not p["metadata"].get("finalizers") for p in pods(kube, ns)))
    assert len(pods(kube, ns)) == 5
    table = kubectl(kube, "-n", ns, "get", "job", "work").stdout
    assert "Complete" in table and "5/5" in table
    described = kubectl(kube, "-n", ns, "describe", "job", "work").stdout
    assert "SuccessfulCreate" in described and "Completed" in described


def test_failed_pods_are_replaced_with_back_off_until_the_limit(cluster, ns):
    kube = cluster
    kubectl(kube, "-n", ns, "apply", "-f", "-", input=manifest("flaky", backoffLimit=2))
    failing: list[float] = []  # the second each Pod is reported Failed in (its finishedAt, as the API keeps it)
    seen: list[float] = []  # when each Pod was first seen
    for _ in range(3):
        pod = eventually(lambda: running(kube, ns))[0]
        seen.append(time.time())
        failing.append(float(int(time.time())))
        finish(kube, pod, "Failed")
    kubectl(kube, "-n", ns, "wait", "--for=condition=failed", "job/flaky", "--timeout=20s")
    status = job(kube, ns, "flaky")["status"]
    assert status["failed"] == 3 and "succeeded" not in status
    target, failed = conditions(job(kube, ns, "flaky"))["FailureTarget"], conditions(job(kube, ns, "flaky"))["Failed"]
    assert (failed["reason"], failed["message"]) == ("BackoffLimitExceeded", "Job has reached the specified backoff limit")
    assert target["reason"] == "BackoffLimitExceeded" and "completionTime" not in status
    # the replacements waited: BACKOFF after the first failure, twice that after the second (from finishedAt,
    # which the API server keeps to the second as upstream's metav1.Time does)
    assert seen[1] - failing[0] >= BACKOFF - 0.02
    assert seen[2] - failing[1] >= 2 * BACKOFF - 0.02
    assert len(pods(kube, ns)) == 3 and not running(kube, ns)
    # the event is written by the recorder after the Job's status: wait for it, do not race it
    eventually(lambda: "BackoffLimitExceeded" in kubectl(kube, "-n", ns, "get", "events", "--field-selector",
                                                         "involvedObject.name=flaky").stdout)


def test_work_queue_job_completes_when_one_pod_succeeds_and_the_rest_finish(cluster, ns):
    kube = cluster
    kube.client.create(JOBS, json.loads(manifest("queue", parallelism=3)), ns)  # no completions
    active = eventually(lambda: len(running(kube, ns)) == 3 and running(kube, ns))
    finish(kube, active[0], "Succeeded")
    time.sleep(0.3)
    assert len(running(kube, ns)) == 2 and "Complete" not in conditions(job(kube, ns, "queue"))  # no new Pods
    for pod in active[1:]:
        finish(kube, pod, "Succeeded")
    eventually(lambda: conditions(job(kube, ns, "queue")).get("Complete"))
    assert job(kube, ns, "queue")["status"]["succeeded"] == 3


def test_indexed_job_runs_each_index_once(cluster, ns):
    kube = cluster
    kubectl(kube, "-n", ns, "apply", "-f", "-", input=manifest("idx", completions=3, parallelism=3,
                                                               completionMode="Indexed"))
    active = eventually(lambda: len(running(kube, ns)) == 3 and running(kube, ns))
    by_index = {int(p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"]): p for p in active}
    assert sorted(by_index) == [0, 1, 2]
    for index, pod in by_index.items():
        assert pod["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"] == str(index)
        assert pod["metadata"]["name"].startswith(f"idx-{index}-")
        assert pod["spec"]["hostname"] == f"idx-{index}"
        assert {"name": "JOB_COMPLETION_INDEX", "valueFrom": {"fieldRef": {
            "apiVersion": "v1",
            "fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}} in \
            pod["spec"]["containers"][0]["env"]
    finish(kube, by_index[1], "Succeeded")
    eventually(lambda: job(kube, ns, "idx")["status"].get("completedIndexes") == "1")
    finish(kube, by_index[0], "Failed")
    replacement = eventually(lambda: [p for p in running(kube, ns) if p["metadata"]["name"].startswith("idx-0-")])
    for pod in (replacement[0], by_index[2]):
        finish(kube, pod, "Succeeded")
    eventually(lambda: conditions(job(kube, ns, "idx")).get("Complete"))
    status = job(kube, ns, "idx")["status"]
    assert status["completedIndexes"] == "0-2" and status["succeeded"] == 3 and status["failed"] == 1


def test_active_deadline_fails_the_job_and_removes_its_pods(cluster, ns):
    kube = cluster
    kubectl(kube, "-n", ns, "apply", "-f", "-", input=manifest("slow", activeDeadlineSeconds=1, parallelism=2,
                                                               completions=2))
    # (both Pods run for about the 1 s of the deadline only: a test that must see that moment can miss it on a
    # loaded machine; the 2 failures counted at the end say that both were created)
    kubectl(kube, "-n", ns, "wait", "--for=condition=failed", "job/slow", "--timeout=20s")
    failed = conditions(job(kube, ns, "slow"))["Failed"]
    assert (failed["reason"], failed["message"]) == ("DeadlineExceeded", "Job was active longer than specified deadline")
    eventually(lambda: not pods(kube, ns), explain=lambda: explain(kube, ns, "slow"))
    assert job(kube, ns, "slow")["status"]["failed"] == 2


def test_suspend_deletes_pods_and_resume_recreates_them(cluster, ns):
    kube = cluster
    kubectl(kube, "-n", ns, "apply", "-f", "-", input=manifest("nap", suspend=True, parallelism=2, completions=4))
    eventually(lambda: conditions(job(kube, ns, "nap")).get("Suspended"))
    suspended = conditions(job(kube, ns, "nap"))["Suspended"]
    assert (suspended["status"], suspended["reason"], suspended["message"]) == ("True", "JobSuspended", "Job suspended")
    assert not pods(kube, ns) and "startTime" not in job(kube, ns, "nap")["status"]
    kubectl(kube, "-n", ns, "patch", "job", "nap", "-p", '{"spec":{"suspend":false}}')
    eventually(lambda: len(running(kube, ns)) == 2)
    resumed = eventually(lambda: conditions(job(kube, ns, "nap"))["Suspended"]["status"] == "False" and
                         conditions(job(kube, ns, "nap"))["Suspended"])
    assert resumed["reason"] == "JobResumed" and job(kube, ns, "nap")["status"]["startTime"]
    kubectl(kube, "-n", ns, "patch", "job", "nap", "-p", '{"spec":{"suspend":true}}')
    eventually(lambda: not pods(kube, ns))
    status = eventually(lambda: conditions(job(kube, ns, "nap"))["Suspended"]["status"] == "True" and
                        job(kube, ns, "nap")["status"])
    assert "failed" not in status and "active" not in status  # suspended Pods are not failures
    events = kubectl(kube, "-n", ns, "describe", "job", "nap").stdout
    assert "Suspended" in events and "Resumed" in events


def test_pod_failure_policy(cluster, ns):
    kube = cluster
    policy = {"rules": [
        {"action": "FailJob", "onExitCodes": {"containerName": "c", "operator": "In", "values": [42]}},
        {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]}
    kubectl(kube, "-n", ns, "apply", "-f", "-", input=manifest("pfp", podFailurePolicy=policy, backoffLimit=0))
    pod = eventually(lambda: running(kube, ns))[0]
    finish(kube, pod, "Failed", exit_code=1, conditions=[{"type": "DisruptionTarget", "status": "True"}])
    second = eventually(lambda: running(kube, ns))[0]  # ignored: not counted against backoffLimit 0
    assert "failed" not in job(kube, ns, "pfp")["status"]
    finish(kube, second, "Failed", exit_code=42)
    eventually(lambda: conditions(job(kube, ns, "pfp")).get("Failed"))
    failed = conditions(job(kube, ns, "pfp"))["Failed"]
    assert failed["reason"] == "PodFailurePolicy"
    assert failed["message"] == (f"Container c for pod {ns}/{second['metadata']['name']} failed with exit code 42 "
                                 "matching FailJob rule at index 0")
    assert job(kube, ns, "pfp")["spec"]["podReplacementPolicy"] == "Failed"


def test_finished_job_is_deleted_after_its_ttl(cluster, ns):
    kube = cluster
    kubectl(kube, "-n", ns, "apply", "-f", "-", input=manifest("brief", ttlSecondsAfterFinished=1))
    finish(kube, eventually(lambda: running(kube, ns))[0], "Succeeded")
    complete = eventually(lambda: conditions(job(kube, ns, "brief")).get("Complete"))
    expiry = dt.datetime.fromisoformat(complete["lastTransitionTime"].replace("Z", "+00:00")) + dt.timedelta(seconds=1)
    # not before the TTL, counted from the condition's time (whole seconds, so possibly well under 1 s from now)
    eventually(lambda: not (items := kube.client.list(JOBS, ns)["items"]) or items[0]["metadata"].get(
        "deletionTimestamp"))
    assert dt.datetime.now(dt.UTC) >= expiry
    eventually(lambda: not kube.client.list(JOBS, ns)["items"] and not pods(kube, ns))


def test_deleting_a_running_job_frees_and_removes_its_pods(cluster, ns):
    kube = cluster
    kubectl(kube, "-n", ns, "apply", "-f", "-", input=manifest("gone", parallelism=2, completions=2))
    eventually(lambda: len(running(kube, ns)) == 2)
    kubectl(kube, "-n", ns, "delete", "job", "gone", "--timeout=20s")
    eventually(lambda: not pods(kube, ns))


def test_orphan_pods_matching_a_manual_selector_are_adopted(cluster, ns):
    kube = cluster
    kube.client.create(PODS, {"metadata": {"name": "stray", "labels": {"app": "own"}}, "spec": {
        "restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}, ns)
    body = json.loads(manifest("own", completions=1))
    body["spec"]["manualSelector"] = True
    body["spec"]["selector"] = {"matchLabels": {"app": "own"}}
    body["spec"]["template"]["metadata"] = {"labels": {"app": "own"}}
    time.sleep(0.3)  # the controller's cache has seen the Pod
    kube.client.create(JOBS, body, ns)
    adopted = eventually(lambda: [p for p in pods(kube, ns) if p["metadata"].get("ownerReferences")])
    assert adopted[0]["metadata"]["name"] == "stray" and FINALIZER in adopted[0]["metadata"]["finalizers"]
    time.sleep(0.2)
    assert len(pods(kube, ns)) == 1  # the adopted Pod is the one Pod wanted
    finish(kube, adopted[0], "Succeeded")
    eventually(lambda: conditions(job(kube, ns, "own")).get("Complete"))


def test_kubectl_create_job_from_cronjob(cluster, ns):
    kube = cluster
    kubectl(kube, "-n", ns, "create", "cronjob", "nightly", "--image=busybox", "--schedule=0 3 * * *")
    kubectl(kube, "-n", ns, "create", "job", "now", "--from=cronjob/nightly")
    created = job(kube, ns, "now")
    assert created["metadata"]["annotations"]["cronjob.kubernetes.io/instantiate"] == "manual"
    assert created["metadata"]["ownerReferences"][0]["kind"] == "CronJob"
    finish(kube, eventually(lambda: running(kube, ns))[0], "Succeeded")
    kubectl(kube, "-n", ns, "wait", "--for=condition=complete", "job/now", "--timeout=20s")



@pytest.fixture(scope="module")
def node_cluster():
    """One in-process node whose Pods run as real processes (or on the simulated timeline where network
    namespaces cannot be made): the kubelet, not the test, finishes the Pods."""
    from mini_kube.client import ApiClient, Connection
    from mini_kube.controllers.kube_controller_manager import KubeControllerManager

    from mini_kube.testing import MiniKube

    with MiniKube(controllers=False, nodes=1) as kube:
        manager = KubeControllerManager(ApiClient(Connection.from_kubeconfig(kube.kubeconfig)), names="job,garbagecollector,podgc",
                          options={"job": {"backoff_base": BACKOFF}})
        kube.run(manager.start())
        try:
            yield kube
        finally:
            kube.run(manager.stop())


@pytest.fixture
def node_ns(node_cluster):
    name = f"n-{uuid.uuid4().hex[:8]}"
    node_cluster.client.create(NAMESPACES, {"metadata": {"name": name}})
    return name


def command_job(name: str, script: str, **spec) -> str:
    body = json.loads(manifest(name, **spec))
    body["spec"]["template"]["spec"]["containers"][0]["command"] = ["sh", "-c", script]
    return json.dumps(body)


def test_indexed_job_on_a_node(node_cluster, node_ns):
    kube, ns = node_cluster, node_ns
    kubectl(kube, "-n", ns, "apply", "-f", "-", input=command_job(
        "idx", "echo index=$JOB_COMPLETION_INDEX host=$(hostname)", completions=3, parallelism=3,
        completionMode="Indexed"))
    kubectl(kube, "-n", ns, "wait", "--for=condition=complete", "job/idx", "--timeout=30s")
    assert job(kube, ns, "idx")["status"]["completedIndexes"] == "0-2"
    if kube.nodes.nodes.runtime == "process":
        logs = kubectl(kube, "-n", ns, "logs", "-l", "job-name=idx").stdout.split("\n")
        assert sorted(line for line in logs if line) == [f"index={i} host=idx-{i}" for i in range(3)]


def test_exit_code_fails_the_job_on_a_node(node_cluster, node_ns):
    kube, ns = node_cluster, node_ns
    if kube.nodes.nodes.runtime != "process":
        pytest.skip("exit codes of commands need the process runtime")
    policy = {"rules": [{"action": "FailJob", "onExitCodes": {"operator": "In", "values": [42]}}]}
    kubectl(kube, "-n", ns, "apply", "-f", "-", input=command_job("fails", "exit 42", podFailurePolicy=policy))
    kubectl(kube, "-n", ns, "wait", "--for=condition=failed", "job/fails", "--timeout=30s")
    failed = conditions(job(kube, ns, "fails"))["Failed"]
    assert failed["reason"] == "PodFailurePolicy" and "failed with exit code 42 matching FailJob rule at index 0" in \
        failed["message"]
    kubectl(kube, "-n", ns, "apply", "-f", "-", input=command_job("retries", "exit 3", backoffLimit=1))
    kubectl(kube, "-n", ns, "wait", "--for=condition=failed", "job/retries", "--timeout=30s")
    assert conditions(job(kube, ns, "retries"))["Failed"]["reason"] == "BackoffLimitExceeded"
    assert job(kube, ns, "retries")["status"]["failed"] == 2


def test_server_generated_selector_and_labels_match_the_real_server(cluster, ns):
    from tests.helpers import reference_file

    want = json.loads(reference_file("protobuf/job.json").read_text())
    body = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j1"}, "spec": {
        "backoffLimit": 2, "activeDeadlineSeconds": 100, "template": {"spec": {
            "restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox",
                                                      "command": ["sh", "-c", "exit 0"]}]}}}}
    kubectl(kube := cluster, "-n", ns, "apply", "-f", "-", input=json.dumps(body))
    got = job(kube, ns, "j1")
    as_reference = json.loads(json.dumps({"labels": got["metadata"]["labels"], "spec": got["spec"]}).replace(
        got["metadata"]["uid"], want["metadata"]["uid"]))
    assert as_reference == {"labels": want["metadata"]["labels"], "spec": want["spec"]}
