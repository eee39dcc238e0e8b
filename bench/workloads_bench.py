"""Workload controller figures, in one run against an in-process cluster with every controller:

- a Deployment of 100 replicas: seconds until 100 Pods are stored and its status says so;
- 50 Deployments of 4 replicas rolled to a new image at once (Pods marked Ready by a stand-in kubelet): Pods
  created against Pods needed (any extra Pod is a failure of expectations).

    .venv/bin/python bench/workloads_bench.py
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import contextlib

from mini_kube.client import ApiClient, ApiError, Connection  # noqa: E402
from mini_kube.machinery.refs import DEPLOYMENTS, PODS

from mini_kube.testing import MiniKube  # noqa: E402


def deployment(name: str, replicas: int, image: str) -> dict:
    return {"metadata": {"name": name}, "spec": {"replicas": replicas, "selector": {"matchLabels": {"d": name}},
            "template": {"metadata": {"labels": {"d": name}}, "spec": {"containers": [{"name": "c", "image": image}]}}}}


async def hundred(client: ApiClient) -> float:
    started = time.perf_counter()
    await client.create(DEPLOYMENTS, deployment("big", 100, "a"), "default")
    while True:
        d = await client.get(DEPLOYMENTS, "big", "default")
        if (d.get("status") or {}).get("replicas") == 100:
            pods = await client.list(PODS, "default", labelSelector="d=big")
            if len(pods["items"]) == 100:
                return time.perf_counter() - started
        await asyncio.sleep(0.01)


async def kubelet(client: ApiClient, namespace: str, stop: asyncio.Event) -> None:
    while not stop.is_set():
        for pod in (await client.list(PODS, namespace))["items"]:
            if not (pod.get("status") or {}).get("podIP") and not pod["metadata"].get("deletionTimestamp"):
                status = {"phase": "Running", "podIP": "10.244.0.9", "conditions": [{"type": "Ready", "status": "True"}]}
                with contextlib.suppress(ApiError):
                    await client.patch(PODS, pod["metadata"]["name"], {"status": status}, namespace,
                                       subresource="status")
        await asyncio.sleep(0.02)


async def rolled(client: ApiClient, count: int) -> bool:
    for i in range(count):
        d = await client.get(DEPLOYMENTS, f"d{i}", "kube-public")
        status = d.get("status") or {}
        if status.get("observedGeneration") != d["metadata"]["generation"] or status.get("updatedReplicas") != 4 \
                or status.get("availableReplicas") != 4 or status.get("replicas") != 4:
            return False
    return True


async def fifty(client: ApiClient, count: int = 50) -> tuple[int, int, float]:
    created: set[str] = set()
    listed = await client.list(PODS, "kube-public")

    async def count_pods() -> None:
        async for event in client.watch(PODS, "kube-public", resource_version=listed["metadata"]["resourceVersion"]):
            if event["type"] == "ADDED":
                created.add(event["object"]["metadata"]["name"])

    watcher = asyncio.create_task(count_pods())
    stop = asyncio.Event()
    marker = asyncio.create_task(kubelet(client, "kube-public", stop))
    await asyncio.gather(*(client.create(DEPLOYMENTS, deployment(f"d{i}", 4, "a"), "kube-public")
                           for i in range(count)))
    while not await rolled(client, count):
        await asyncio.sleep(0.05)
    started = time.perf_counter()
    await asyncio.gather(*(client.patch(DEPLOYMENTS, f"d{i}", {"spec": {"template": {"spec": {"containers": [
        {"name": "c", "image": "b"}]}}}}, "kube-public") for i in range(count)))
    while not await rolled(client, count):
        await asyncio.sleep(0.05)
    elapsed = time.perf_counter() - started
    await asyncio.sleep(0.5)
    stop.set()
    watcher.cancel()
    await asyncio.gather(marker, watcher, return_exceptions=True)
    return len(created), count * 4 * 2, elapsed


def main() -> None:
    with MiniKube() as kube:
        async def run() -> tuple[float, tuple[int, int, float]]:
            client = ApiClient(Connection.from_kubeconfig(kube.kubeconfig))
            try:
                return await hundred(client), await fifty(client)
            finally:
                await client.close()
        big, (made, needed, rollout) = kube.run(run(), timeout=600)
    print(f"a Deployment of 100 replicas: 100 Pods stored and its status up to date in {big:.2f} s (target < 2 s)")
    print(f"50 Deployments x 4 rolled to a new image at once: {rollout:.2f} s; Pods created {made}, needed "
          f"{needed}, extra {made - needed} (target 0)")


if __name__ == "__main__":
    main()
