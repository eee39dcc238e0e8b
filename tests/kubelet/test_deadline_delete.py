"""A delete that arrives while the kubelet is stopping a Pod for its activeDeadlineSeconds is honoured once that
termination ends (upstream's pod worker keeps the latest desired state), not dropped, which left the Pod
Terminating forever. A real validating webhook holds the kubelet's DeadlineExceeded status write, so the delete
lands in the middle of the termination every time."""

from __future__ import annotations

import asyncio
import threading

import pytest
from mini_kube.machinery.refs import PODS

from .conftest import NODE, eventually, gone, pod, status_of, validating_webhook


@pytest.mark.slow
def test_delete_during_the_deadline_termination_is_honoured(process_cluster, process_namespace, webhook_server):
    kube, ns = process_cluster, process_namespace
    held, release = threading.Event(), threading.Event()

    async def hold_deadline_status(request: dict) -> dict:
        if (request["object"].get("status") or {}).get("reason") == "DeadlineExceeded":
            held.set()
            await asyncio.get_running_loop().run_in_executor(None, release.wait, 25)
        return {"allowed": True}

    with validating_webhook(kube, webhook_server, ns, hold_deadline_status, resources=("pods/status",),
                            operations=("UPDATE",), timeoutSeconds=30, failurePolicy="Ignore"):
        try:
            kube.client.create(PODS, pod("late", {"name": "main", "image": "busybox", "command": ["sleep", "300"]},
                                         activeDeadlineSeconds=1), ns)
            eventually(held.is_set)  # the deadline passed: the kubelet is stopping the Pod, its status held
            assert status_of(kube, ns, "late").get("phase") != "Failed"
            kube.client.delete(PODS, "late", ns)  # graceful: the API server leaves the final delete to the kubelet
            kubelet = next(k for k in kube.nodes.kubelets if k.name == NODE)
            eventually(lambda: any(w.name == "late" and w.namespace == ns and w.pod["metadata"].get("deletionTimestamp")
                                   for w in list(kubelet.workers.values())))  # the kubelet has seen the delete
        finally:
            release.set()
        eventually(lambda: gone(kube, ns, "late"))


def test_delete_after_the_deadline_termination_ended_is_honoured(process_cluster, process_namespace, webhook_server):
    """The termination ended but its Failed status could not be written (the API refuses it), so the API server
    still deletes gracefully and waits for the kubelet: the worker, whose termination is over, deletes."""
    kube, ns = process_cluster, process_namespace

    def refuse_deadline_status(request: dict) -> dict:
        if (request["object"].get("status") or {}).get("reason") == "DeadlineExceeded":
            return {"allowed": False, "status": {"code": 500, "reason": "InternalError", "message": "not now"}}
        return {"allowed": True}

    with validating_webhook(kube, webhook_server, ns, refuse_deadline_status, resources=("pods/status",),
                            operations=("UPDATE",)) as reviews:
        created = kube.client.create(PODS, pod("later", {"name": "main", "image": "busybox",
                                                         "command": ["sleep", "300"]}, activeDeadlineSeconds=1), ns)
        kubelet = next(k for k in kube.nodes.kubelets if k.name == NODE)
        directory = kubelet.root / "pods" / created["metadata"]["uid"]
        eventually(lambda: reviews and not directory.exists())  # refused, then the sandbox released: all over
        assert status_of(kube, ns, "later").get("phase") != "Failed"
        kube.client.delete(PODS, "later", ns)
        eventually(lambda: gone(kube, ns, "later"))
