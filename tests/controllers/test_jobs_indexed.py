"""Indexed Jobs whose indexes are retried, fail and succeed on their own: backoffLimitPerIndex with
maxFailedIndexes and the FailIndex action (KEP-3850), and successPolicy (KEP-3998), through real kubectl. As in
test_jobs, the test finishes the Pods the way a kubelet would, except on the node cluster."""

from __future__ import annotations

import datetime as dt
import time

import pytest
from mini_kube.controllers.workloads.jobindex import index_backoff, match_success_policy, replacement_counts

from tests.controllers import test_jobs as base
from tests.controllers.test_jobs import (
    BACKOFF,
    command_job,
    conditions,
    eventually,
    finish,
    job,
    manifest,
    pods,
    running,
)
from tests.helpers import kubectl

cluster, ns, node_cluster, node_ns = base.cluster, base.ns, base.node_cluster, base.node_ns
INDEX = "batch.kubernetes.io/job-completion-index"
FAILURES = "batch.kubernetes.io/job-index-failure-count"
IGNORED = "batch.kubernetes.io/job-index-ignored-failure-count"
FINALIZER = "batch.kubernetes.io/job-tracking"


def index_of(pod: dict) -> int:
    return int(pod["metadata"]["annotations"][INDEX])


def of_index(kube, ns: str, index: int, *, active: bool = True) -> list[dict]:
    found = running(kube, ns) if active else pods(kube, ns)
    return [p for p in found if index_of(p) == index]


def by_index(kube, ns: str, count: int) -> dict[int, dict] | None:
    active = running(kube, ns)
    return {index_of(p): p for p in active} if len(active) == count else None


def jsonpath(kube, ns: str, name: str, path: str) -> str:
    return kubectl(kube, "-n", ns, "get", "job", name, "-o", f"jsonpath={{{path}}}").stdout


def test_backoff_limit_per_index_retries_and_fails_indexes_on_their_own(cluster, ns):
    kube = cluster
    policy = {"rules": [
        {"action": "FailIndex", "onExitCodes": {"containerName": "c", "operator": "In", "values": [42]}},
        {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]}
    kubectl(kube, "-n", ns, "create", "-f", "-", input=manifest(
        "per", completions=4, parallelism=4, completionMode="Indexed", backoffLimitPerIndex=1,
        podFailurePolicy=policy))
    assert jsonpath(kube, ns, "per", ".spec.backoffLimit") == "2147483647"  # only the per-index limit counts
    first = eventually(lambda: by_index(kube, ns, 4))
    assert all(p["metadata"]["annotations"][FAILURES] == "0" and IGNORED not in p["metadata"]["annotations"]
               for p in first.values())

    # index 0: a counted failure is retried once, with the count carried over; the second one fails the index
    finish(kube, first[0], "Failed")
    second = eventually(lambda: of_index(kube, ns, 0))[0]
    assert second["metadata"]["annotations"][FAILURES] == "1"
    eventually(lambda: job(kube, ns, "per")["status"].get("failed") == 1)
    assert not [p for p in pods(kube, ns) if p["metadata"]["uid"] == first[0]["metadata"]["uid"]
                and FINALIZER in p["metadata"].get("finalizers", ())]
    finish(kube, second, "Failed")
    eventually(lambda: jsonpath(kube, ns, "per", ".status.failedIndexes") == "0")

    # index 1: a failure the policy ignores is retried without counting against the index
    finish(kube, first[1], "Failed", conditions=[{"type": "DisruptionTarget", "status": "True"}])
    retry = eventually(lambda: of_index(kube, ns, 1))[0]
    assert {k: retry["metadata"]["annotations"].get(k) for k in (FAILURES, IGNORED)} == {FAILURES: "0", IGNORED: "1"}

    # index 2: exit code 42 matches FailIndex: failed at once, whatever retries are left
    finish(kube, first[2], "Failed", exit_code=42)
    eventually(lambda: jsonpath(kube, ns, "per", ".status.failedIndexes") == "0,2")

    for pod in (retry, first[3]):
        finish(kube, pod, "Succeeded")
    kubectl(kube, "-n", ns, "wait", "--for=condition=failed", "job/per", "--timeout=20s")
    status = job(kube, ns, "per")["status"]
    assert (status["failedIndexes"], status["completedIndexes"], status["succeeded"], status["failed"]) == (
        "0,2", "1,3", 2, 3)
    got = conditions(job(kube, ns, "per"))
    assert (got["Failed"]["reason"], got["Failed"]["message"]) == ("FailedIndexes", "Job has failed indexes")
    assert got["FailureTarget"]["reason"] == "FailedIndexes"
    assert [len(of_index(kube, ns, i, active=False)) for i in range(4)] == [2, 2, 1, 1]
    assert not running(kube, ns)
    described = kubectl(kube, "-n", ns, "describe", "job", "per").stdout
    assert "FailedIndexes" in described and "Job has failed indexes" in described


def test_max_failed_indexes_exceeded_fails_the_job_and_removes_its_pods(cluster, ns):
    kube = cluster
    kubectl(kube, "-n", ns, "create", "-f", "-", input=manifest(
        "capped", completions=4, parallelism=4, completionMode="Indexed", backoffLimitPerIndex=0,
        maxFailedIndexes=1))
    first = eventually(lambda: by_index(kube, ns, 4))
    finish(kube, first[0], "Failed")
    eventually(lambda: job(kube, ns, "capped")["status"].get("failedIndexes") == "0")
    time.sleep(3 * BACKOFF)  # past any back-off: the failed index gets no new Pod
    assert len(running(kube, ns)) == 3 and "Failed" not in conditions(job(kube, ns, "capped"))
    finish(kube, first[1], "Failed")
    kubectl(kube, "-n", ns, "wait", "--for=condition=failed", "job/capped", "--timeout=20s")
    failed = conditions(job(kube, ns, "capped"))["Failed"]
    assert (failed["reason"], failed["message"]) == (
        "MaxFailedIndexesExceeded", "Job has exceeded the specified maximal number of failed indexes")
    eventually(lambda: not running(kube, ns))
    status = job(kube, ns, "capped")["status"]
    assert status["failedIndexes"] == "0,1" and status["failed"] == 4  # the removed Pods count as failed too
    assert "Failed" in kubectl(kube, "-n", ns, "get", "job", "capped").stdout


def test_success_policy_completes_the_job_early_and_removes_the_rest(cluster, ns):
    kube = cluster
    policy = {"rules": [{"succeededIndexes": "4"}, {"succeededIndexes": "0-2", "succeededCount": 2}]}
    kubectl(kube, "-n", ns, "create", "-f", "-", input=manifest(
        "leader", completions=5, parallelism=5, completionMode="Indexed", successPolicy=policy))
    first = eventually(lambda: by_index(kube, ns, 5))
    assert job(kube, ns, "leader")["status"].get("failedIndexes") is None  # only with backoffLimitPerIndex
    finish(kube, first[0], "Succeeded")
    eventually(lambda: job(kube, ns, "leader")["status"].get("completedIndexes") == "0")
    assert "SuccessCriteriaMet" not in conditions(job(kube, ns, "leader"))  # one of the two needed
    finish(kube, first[2], "Succeeded")
    kubectl(kube, "-n", ns, "wait", "--for=condition=complete", "job/leader", "--timeout=20s")
    got = job(kube, ns, "leader")
    assert [c["type"] for c in got["status"]["conditions"]] == ["SuccessCriteriaMet", "Complete"]
    for kind in ("SuccessCriteriaMet", "Complete"):
        assert (conditions(got)[kind]["reason"], conditions(got)[kind]["message"]) == (
            "SuccessPolicy", "Matched rules at index 1")
    status = got["status"]
    assert (status["completedIndexes"], status["succeeded"], "failed" in status) == ("0,2", 2, False)
    eventually(lambda: not running(kube, ns))
    assert "2/5" in kubectl(kube, "-n", ns, "get", "job", "leader").stdout


def test_per_index_and_success_policy_fields_are_validated_like_upstream(cluster, ns):
    kube = cluster
    bad = kubectl(kube, "-n", ns, "create", "-f", "-", check=False, input=manifest(
        "plain", backoffLimitPerIndex=1, successPolicy={"rules": [{"succeededCount": 1}]}))
    assert bad.returncode == 1
    assert 'The Job "plain" is invalid: \n* spec.backoffLimitPerIndex: Invalid value: 1: requires indexed ' \
           "completion mode\n* spec.successPolicy: Invalid value: batch.SuccessPolicy{" in bad.stderr
    bad = kubectl(kube, "-n", ns, "create", "-f", "-", check=False, input=manifest(
        "many", completions=2, completionMode="Indexed", backoffLimitPerIndex=1, maxFailedIndexes=3))
    assert 'The Job "many" is invalid: spec.maxFailedIndexes: Invalid value: 3: must be less than or equal to ' \
           "completions" in bad.stderr
    kubectl(kube, "-n", ns, "create", "-f", "-", input=manifest(
        "fixed", completions=2, completionMode="Indexed", backoffLimitPerIndex=1, maxFailedIndexes=1, suspend=True))
    kubectl(kube, "-n", ns, "patch", "job", "fixed", "-p", '{"spec":{"maxFailedIndexes":2}}')
    assert jsonpath(kube, ns, "fixed", ".spec.maxFailedIndexes") == "2"
    bad = kubectl(kube, "-n", ns, "patch", "job", "fixed", "-p", '{"spec":{"backoffLimitPerIndex":3}}', check=False)
    assert "spec.backoffLimitPerIndex: Invalid value: 3: field is immutable" in bad.stderr


@pytest.mark.slow
def test_failed_index_on_a_node(node_cluster, node_ns):
    kube, ns = node_cluster, node_ns
    if kube.nodes.nodes.runtime != "process":
        import pytest

        pytest.skip("exit codes of commands need the process runtime")
    policy = {"rules": [{"action": "FailIndex", "onExitCodes": {"operator": "In", "values": [42]}}]}
    kubectl(kube, "-n", ns, "apply", "-f", "-", input=command_job(
        "split", 'test "$JOB_COMPLETION_INDEX" != 1 || exit 42', completions=3, parallelism=3,
        completionMode="Indexed", backoffLimitPerIndex=2, podFailurePolicy=policy))
    kubectl(kube, "-n", ns, "wait", "--for=condition=failed", "job/split", "--timeout=30s")
    status = job(kube, ns, "split")["status"]
    assert (status["failedIndexes"], status["completedIndexes"], status["failed"]) == ("1", "0,2", 1)
    assert conditions(job(kube, ns, "split"))["Failed"]["reason"] == "FailedIndexes"


def _failed_pod(counted: int, ignored: int, finished: dt.datetime, **extra) -> dict:
    annotations = {FAILURES: str(counted), IGNORED: str(ignored), INDEX: "0"}
    stamp = finished.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return {"metadata": {"annotations": annotations, **extra}, "status": {"phase": "Failed", "containerStatuses": [
        {"name": "c", "state": {"terminated": {"exitCode": 1, "finishedAt": stamp}}}]}}


def test_an_index_waits_a_back_off_grown_from_its_own_failures():
    now = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    assert index_backoff(None, now, 10, 360) == 0
    assert index_backoff(_failed_pod(0, 0, now - dt.timedelta(seconds=4)), now, 10, 360) == 6
    assert index_backoff(_failed_pod(2, 1, now), now, 10, 360) == 80  # ignored failures grow it too
    assert index_backoff(_failed_pod(9, 0, now), now, 10, 360) == 360
    assert index_backoff(_failed_pod(0, 0, now - dt.timedelta(seconds=11)), now, 10, 360) == 0
    job_body = {"spec": {"podFailurePolicy": {"rules": [
        {"action": "Ignore", "onExitCodes": {"operator": "In", "values": [1]}}]}}}
    assert replacement_counts(job_body, _failed_pod(1, 2, now)) == (1, 3)
    assert replacement_counts({"spec": {}}, _failed_pod(1, 2, now)) == (2, 2)
    assert replacement_counts({"spec": {}}, None) == (0, 0)


def test_success_policy_rules_match_like_upstream():
    def match(rules: list[dict], succeeded: set[int]) -> str | None:
        return match_success_policy({"spec": {"completions": 10, "successPolicy": {"rules": rules}}}, succeeded)

    assert match([{"succeededIndexes": "0-2"}], {0, 1, 2, 5}) == "Matched rules at index 0"
    assert match([{"succeededIndexes": "3"}], {0, 1, 2}) is None
    assert match([{"succeededCount": 2}], {0, 7}) == "Matched rules at index 0"
    assert match([{"succeededIndexes": "invalid"}, {"succeededIndexes": "1,3-4", "succeededCount": 2}],
                 {3, 4}) == "Matched rules at index 1"
    assert match([{"succeededCount": 1}], set()) is None
    assert match([], {1}) is None
