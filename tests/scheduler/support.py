"""Shared by the scheduler tests: a cluster with the scheduler and the workload controllers (no node lifecycle
controller: these nodes have no kubelet renewing leases), Node objects as a kubelet registers them, and
polling helpers."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from typing import Any

from mini_kube.machinery.refs import EVENTS, NODES, PODS

CONTROLLERS = "namespace,garbagecollector,replicaset,deployment"
QUICK_RETRIES = {"initial_backoff": 0.1, "max_backoff": 1.0}
"""The scheduler's back-off for these clusters: an unschedulable Pod is retried after 0.1 s, doubling up to 1 s
(upstream's 1 s and 10 s only make the tests wait)."""


def add_node(kube, name: str, *, cpu: str = "4", memory: str = "8Gi", pods: str = "110",
             labels: dict[str, str] | None = None, taints: list[dict[str, Any]] | None = None,
             ready: bool = True) -> None:
    """A Node as a kubelet registers it: capacity/allocatable, hostname/os labels, a Ready condition."""
    resources = {"cpu": cpu, "memory": memory, "pods": pods, "ephemeral-storage": "100Gi"}
    kube.client.create(NODES, {"metadata": {"name": name, "labels": {
        "kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
        **(labels or {})}}, "spec": {"taints": taints} if taints else {}})
    kube.client.patch(NODES, name, {"status": {
        "capacity": resources, "allocatable": resources,
        "conditions": [{"type": "Ready", "status": "True" if ready else "False",
                        "reason": "KubeletReady" if ready else "KubeletNotReady", "message": "",
                        "lastHeartbeatTime": "2025-01-01T00:00:00Z", "lastTransitionTime": "2025-01-01T00:00:00Z"}],
    }}, subresource="status")


@contextlib.contextmanager
def final_deletes(kube) -> Iterator[None]:
    """What these nodes' kubelets would do for a deleted Pod: end its grace period with the final delete."""
    stop = threading.Event()

    def loop() -> None:
        while not stop.wait(0.05):
            with contextlib.suppress(Exception):
                for pod in kube.client.list(PODS)["items"]:
                    meta = pod["metadata"]
                    if meta.get("deletionTimestamp") and pod["spec"].get("nodeName"):
                        kube.client.delete(PODS, meta["name"], meta["namespace"], body={
                            "gracePeriodSeconds": 0, "preconditions": {"uid": meta["uid"]}})

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(5)


def eventually(check, timeout: float = 15.0, interval: float = 0.05):
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result:
            return result
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(interval)


def pods(kube, namespace: str) -> list[dict[str, Any]]:
    return kube.client.list(PODS, namespace)["items"]


def placement(kube, namespace: str) -> dict[str, str | None]:
    """pod name -> node name (None while unscheduled), read in-process: tests poll it, and each `kubectl get`
    is a process start (~0.1 s of CPU); they read what kubectl shows with `get -o wide` and `describe`."""
    return {p["metadata"]["name"]: p["spec"].get("nodeName") for p in pods(kube, namespace)}


def scheduled_condition(kube, namespace: str, name: str) -> dict[str, Any] | None:
    pod = kube.client.get(PODS, name, namespace)
    return next((c for c in (pod.get("status") or {}).get("conditions") or () if c["type"] == "PodScheduled"), None)


def unschedulable_message(kube, namespace: str, name: str) -> str:
    """The PodScheduled=False message once the scheduler has given it."""
    def check():
        condition = scheduled_condition(kube, namespace, name)
        return condition and condition["status"] == "False" and condition.get("message")
    return eventually(check)


def events_for(kube, namespace: str, name: str, reason: str) -> list[dict[str, Any]]:
    return [e for e in kube.client.list(EVENTS, namespace)["items"]
            if e["involvedObject"].get("name") == name and e["reason"] == reason]
