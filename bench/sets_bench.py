"""StatefulSet and DaemonSet controller figures, in one run against an in-process cluster with every controller
(Pods marked Running and Ready by a stand-in kubelet through the status subresource):

- a Parallel StatefulSet of 50 replicas: seconds until its 50 Pods are stored and its status says so, then
  until all 50 are Ready in its status;
- an OrderedReady StatefulSet of 20: seconds until the last is Ready (each Pod waits for its predecessor);
- a DaemonSet over 50 Nodes: seconds until 50 Pods are stored and its status says so; then a rolling update
  (maxUnavailable 10%): seconds until rolled out, and Pods created against Pods needed.

    .venv/bin/python bench/sets_bench.py
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mini_kube.client import ApiClient, ApiError, Connection  # noqa: E402
from mini_kube.machinery.refs import DAEMONSETS, NODES, PODS, STATEFULSETS

from mini_kube.testing import MiniKube  # noqa: E402


def template(name: str, image: str = "a") -> dict:
    return {"metadata": {"labels": {"app": name}}, "spec": {"containers": [{"name": "c", "image": image}]}}


async def kubelet(client: ApiClient, namespace: str, stop: asyncio.Event) -> None:
    while not stop.is_set():
        for pod in (await client.list(PODS, namespace))["items"]:
            if (pod.get("status") or {}).get("phase") != "Running" and not pod["metadata"].get("deletionTimestamp"):
                status = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
                with contextlib.suppress(ApiError):
                    await client.patch(PODS, pod["metadata"]["name"], {"status": status}, namespace,
                                       subresource="status")
        await asyncio.sleep(0.01)


async def until(check, poll: float = 0.01) -> float:
    started = time.perf_counter()
    while not await check():
        await asyncio.sleep(poll)
    return time.perf_counter() - started


async def statefulsets(client: ApiClient) -> tuple[float, float, float]:
    ns = "default"
    started = time.perf_counter()
    await client.create(STATEFULSETS, {"metadata": {"name": "par"}, "spec": {
        "replicas": 50, "podManagementPolicy": "Parallel", "serviceName": "par",
        "selector": {"matchLabels": {"app": "par"}}, "template": template("par")}}, ns)

    async def stored() -> bool:
        s = (await client.get(STATEFULSETS, "par", ns)).get("status") or {}
        return s.get("replicas") == 50 and len((await client.list(PODS, ns, labelSelector="app=par"))["items"]) == 50
    await until(stored)
    created = time.perf_counter() - started
    stop = asyncio.Event()
    marker = asyncio.create_task(kubelet(client, ns, stop))

    async def ready() -> bool:
        return ((await client.get(STATEFULSETS, "par", ns)).get("status") or {}).get("readyReplicas") == 50
    await until(ready)
    all_ready = time.perf_counter() - started

    started = time.perf_counter()
    await client.create(STATEFULSETS, {"metadata": {"name": "ord"}, "spec": {
        "replicas": 20, "serviceName": "ord", "selector": {"matchLabels": {"app": "ord"}},
        "template": template("ord")}}, ns)

    async def ordered() -> bool:
        return ((await client.get(STATEFULSETS, "ord", ns)).get("status") or {}).get("readyReplicas") == 20
    await until(ordered)
    chain = time.perf_counter() - started
    stop.set()
    await marker
    return created, all_ready, chain


async def daemonsets(client: ApiClient) -> tuple[float, float, int, int]:
    ns = "kube-public"
    await asyncio.gather(*(client.create(NODES, {"metadata": {"name": f"node-{i}"}}) for i in range(50)))
    listed = await client.list(PODS, ns)
    made: set[str] = set()

    async def count() -> None:
        async for event in client.watch(PODS, ns, resource_version=listed["metadata"]["resourceVersion"]):
            if event["type"] == "ADDED":
                made.add(event["object"]["metadata"]["uid"])
    watcher = asyncio.create_task(count())
    started = time.perf_counter()
    await client.create(DAEMONSETS, {"metadata": {"name": "agent"}, "spec": {
        "selector": {"matchLabels": {"app": "agent"}}, "template": template("agent"),
        "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "10%"}}}}, ns)

    async def placed() -> bool:
        s = (await client.get(DAEMONSETS, "agent", ns)).get("status") or {}
        return s.get("desiredNumberScheduled") == s.get("currentNumberScheduled") == 50 and len(
            (await client.list(PODS, ns, labelSelector="app=agent"))["items"]) == 50
    await until(placed)
    created = time.perf_counter() - started
    stop = asyncio.Event()
    marker = asyncio.create_task(kubelet(client, ns, stop))

    async def rolled() -> bool:
        ds = await client.get(DAEMONSETS, "agent", ns)
        s = ds.get("status") or {}
        return s.get("observedGeneration") == ds["metadata"]["generation"] and \
            s.get("updatedNumberScheduled") == s.get("numberAvailable") == 50
    await until(rolled)
    started = time.perf_counter()
    await client.patch(DAEMONSETS, "agent", {"spec": {"template": template("agent", "b")}}, ns)
    await until(rolled)
    rollout = time.perf_counter() - started
    await asyncio.sleep(0.5)
    stop.set()
    watcher.cancel()
    await asyncio.gather(marker, watcher, return_exceptions=True)
    return created, rollout, len(made), 100


def main() -> None:
    with MiniKube() as kube:
        async def run() -> tuple[tuple[float, float, float], tuple[float, float, int, int]]:
            client = ApiClient(Connection.from_kubeconfig(kube.kubeconfig))
            try:
                return await statefulsets(client), await daemonsets(client)
            finally:
                await client.close()
        (sts_created, sts_ready, chain), (ds_created, rollout, made, needed) = kube.run(run(), timeout=600)
    print(f"a Parallel StatefulSet of 50: 50 Pods stored and its status up to date in {sts_created:.2f} s; "
          f"all 50 Ready in its status after {sts_ready:.2f} s")
    print(f"an OrderedReady StatefulSet of 20: the last Ready after {chain:.2f} s ({chain / 20 * 1000:.0f} ms per Pod)")
    print(f"a DaemonSet over 50 Nodes: 50 Pods stored and its status up to date in {ds_created:.2f} s")
    print(f"its rolling update (maxUnavailable 10%): {rollout:.2f} s; Pods created {made}, needed {needed}, "
          f"extra {made - needed} (target 0)")


if __name__ == "__main__":
    main()
