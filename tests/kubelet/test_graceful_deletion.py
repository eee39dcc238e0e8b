"""A deleted Pod's grace period through real kubectl and real processes: the API server keeps the Pod
(terminating) while its kubelet sends SIGTERM and waits; a process that stops on SIGTERM lets the final delete
come at once; one that ignores it runs until the period ends, and a later delete with a shorter period
(`--grace-period=1`) cuts the wait short, as upstream's kubelet does."""

from __future__ import annotations

import time

from mini_kube.machinery.refs import PODS

from tests.helpers import kubectl

from .conftest import eventually, new_namespace, pod, status_of


def running(kube, ns: str, name: str) -> bool:
    status = status_of(kube, ns, name)
    return status.get("phase") == "Running" and all(c.get("ready") for c in status.get("containerStatuses") or [{}])


def test_sigterm_then_the_final_delete(process_cluster):
    kube = process_cluster
    ns = new_namespace(kube)
    script = "trap 'echo got TERM; exit 0' TERM; while true; do sleep 0.1; done"
    kube.client.create(PODS, pod("polite", {"name": "main", "image": "busybox", "command": ["sh", "-c", script]},
                                 terminationGracePeriodSeconds=30), ns)
    eventually(lambda: running(kube, ns, "polite"))
    started = time.monotonic()
    kubectl(kube, "-n", ns, "delete", "pod", "polite", "--timeout=20s")
    assert time.monotonic() - started < 10  # not the 30 s of the grace period: the process stopped on SIGTERM


def test_a_shorter_grace_period_cuts_the_wait(process_cluster):
    kube = process_cluster
    ns = new_namespace(kube)
    stubborn = {"name": "main", "image": "busybox", "command": ["sh", "-c", "trap '' TERM; while true; do sleep 0.1; done"]}
    kube.client.create(PODS, pod("stubborn", stubborn, terminationGracePeriodSeconds=60), ns)
    eventually(lambda: running(kube, ns, "stubborn"))
    kubectl(kube, "-n", ns, "delete", "pod", "stubborn", "--wait=false")
    listed = kubectl(kube, "-n", ns, "get", "pod", "stubborn").stdout
    assert "Terminating" in listed
    time.sleep(1)
    assert "running" in (status_of(kube, ns, "stubborn").get("containerStatuses") or [{}])[0].get("state", {})
    assert kube.client.get(PODS, "stubborn", ns)["metadata"]["deletionGracePeriodSeconds"] == 60
    started = time.monotonic()
    kubectl(kube, "-n", ns, "delete", "pod", "stubborn", "--grace-period=1", "--timeout=20s")
    assert time.monotonic() - started < 10
    assert not [p for p in kube.client.list(PODS, ns)["items"] if p["metadata"]["name"] == "stubborn"]
