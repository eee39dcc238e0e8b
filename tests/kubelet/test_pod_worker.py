"""A Pod's worker as the kubelet drives it: built with the node's environment it starts nothing, `start` begins
the Pod's life, and `stop` ends every task of the worker's, a graceful termination under way included (the
kubelet keeps no task it cannot end). The Pod names a node no kubelet runs, so only this worker runs it."""

from __future__ import annotations

import asyncio
import gc
import weakref

from mini_kube.kubelet.pod_worker import PodWorker
from mini_kube.machinery.refs import PODS

from .conftest import new_namespace, pod


def test_a_worker_starts_nothing_until_started_and_stop_ends_a_termination_under_way(simulated_cluster):
    kube = simulated_cluster
    kubelet = kube.nodes.kubelets[0]
    ns = new_namespace(kube)
    container = {"name": "main", "image": "busybox", "lifecycle": {"preStop": {"sleep": {"seconds": 20}}}}
    created = kube.client.create(PODS, pod("solo", container, node="no-kubelet-here"), ns)

    def own_tasks() -> set[str]:
        return {t.get_name() for t in asyncio.all_tasks() if not t.done() and t.get_name().endswith(f"{ns}/solo")}

    async def scenario() -> tuple[set[str], set[str], set[str], set[str]]:
        worker = PodWorker(created, kubelet.env)
        built = own_tasks()
        worker.start()
        started = own_tasks()
        while worker.status().get("phase") != "Running":
            await asyncio.sleep(0.01)
        meta = {**created["metadata"], "deletionTimestamp": "2026-01-01T00:00:00Z", "deletionGracePeriodSeconds": 30}
        worker.update({**created, "metadata": meta})
        await asyncio.sleep(0.2)  # the preStop hook sleeps: the termination is under way
        terminating = own_tasks()
        await asyncio.wait_for(worker.stop(), 5)
        return built, started, terminating, own_tasks()

    built, started, terminating, stopped = kube.run(scenario())
    assert built == set()
    assert started == {f"pod {ns}/solo", f"pod status {ns}/solo"}
    assert f"terminate {ns}/solo" in terminating
    assert stopped == set()


def test_a_stopped_worker_is_freed_by_reference_counting(simulated_cluster):
    """Once stopped, a worker holds nothing that refers back to it (its tasks, probe loops, volume sync), so it
    is freed as soon as the kubelet lets go of it, with the cyclic garbage collector off: a large cluster's server
    freezes what survives its full collections (mini_kube/gc_policy.py), and a worker left in reference cycles
    there would never be freed."""
    kube = simulated_cluster
    kubelet = kube.nodes.kubelets[0]
    ns = new_namespace(kube)
    labels = {"name": "labels", "downwardAPI": {"items": [{"path": "labels",
                                                            "fieldRef": {"fieldPath": "metadata.labels"}}]}}
    created = kube.client.create(PODS, pod("cycles", {"name": "main", "image": "busybox"},
                                           node="no-kubelet-here", volumes=[labels]), ns)

    async def scenario() -> tuple[bool, bool]:
        worker = PodWorker(created, kubelet.env)
        worker.start()
        while worker.status().get("phase") != "Running":
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.1)  # its containers run, the volume sync waits for its next period
        synced = any(t.get_name() == f"volumes {ns}/cycles" and not t.done() for t in asyncio.all_tasks())
        await asyncio.wait_for(worker.stop(), 5)
        ref = weakref.ref(worker)
        del worker
        await asyncio.sleep(0)
        return synced, ref() is None

    gc.collect()
    gc.disable()
    try:
        synced, freed = kube.run(scenario())
    finally:
        gc.enable()
    assert synced
    assert freed
