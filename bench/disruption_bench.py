"""PodDisruptionBudget figures, in one run against an in-process cluster with the disruption controller:

- a budget over 200 Ready Pods: seconds until its status is computed;
- 200 evictions under that budget, 16 at once: evictions per second (each one a compare-and-swap on the
  budget's status, retried on conflicts inside the server, then a Pod deletion), and how many were refused;
- a budget allowing 10 disruptions, 50 Pods evicted at once: exactly 10 may succeed (no over-spending).

    .venv/bin/python bench/disruption_bench.py
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mini_kube.client import ApiClient, ApiError, Connection  # noqa: E402
from mini_kube.machinery.refs import NAMESPACES, PODDISRUPTIONBUDGETS, PODS

from mini_kube.testing import MiniKube  # noqa: E402

READY = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}


async def ready_pods(client: ApiClient, ns: str, count: int) -> list[str]:
    await client.create(NAMESPACES, {"metadata": {"name": ns}})
    names = [f"p{i}" for i in range(count)]
    sem = asyncio.Semaphore(16)

    async def one(name: str) -> None:
        async with sem:
            await client.create(PODS, {"metadata": {"name": name, "labels": {"app": "x"}}, "spec": {
                "containers": [{"name": "c", "image": "i"}]}}, ns)
            await client.patch(PODS, name, {"status": READY}, ns, subresource="status")
    await asyncio.gather(*(one(n) for n in names))
    return names


async def synced(client: ApiClient, ns: str, **wanted: int) -> None:
    while True:
        status = (await client.get(PODDISRUPTIONBUDGETS, "budget", ns)).get("status") or {}
        if all(status.get(k) == v for k, v in wanted.items()):
            return
        await asyncio.sleep(0.01)


async def evict_all(client: ApiClient, ns: str, names: list[str], concurrency: int) -> tuple[int, int]:
    sem = asyncio.Semaphore(concurrency)
    outcome = {"ok": 0, "refused": 0}

    async def one(name: str) -> None:
        async with sem:
            try:  # 429 is not retried here: the ApiClient's own retries would hide refusals
                await client._once("POST", PODS.path(ns, name, "eviction"), b'{"apiVersion":"policy/v1","kind":'
                                   b'"Eviction","metadata":{"name":"' + name.encode() + b'"}}',
                                   None, {"Content-Type": "application/json", "Accept": "application/json"})
                outcome["ok"] += 1
            except ApiError as exc:
                if exc.status != 429:
                    raise
                outcome["refused"] += 1
    await asyncio.gather(*(one(n) for n in names))
    return outcome["ok"], outcome["refused"]


async def main(kube: MiniKube) -> None:
    client = ApiClient(Connection.from_kubeconfig(kube.kubeconfig))
    try:
        names = await ready_pods(client, "many", 200)
        started = time.perf_counter()
        await client.create(PODDISRUPTIONBUDGETS, {"metadata": {"name": "budget"}, "spec": {
            "minAvailable": 0, "selector": {"matchLabels": {"app": "x"}}}}, "many")
        await synced(client, "many", currentHealthy=200, disruptionsAllowed=200)
        print(f"budget over 200 Ready Pods computed in {time.perf_counter() - started:.3f} s")
        started = time.perf_counter()
        ok, refused = await evict_all(client, "many", names, 16)
        elapsed = time.perf_counter() - started
        print(f"200 evictions, 16 at once: {ok} evicted, {refused} refused, {ok / elapsed:.0f} evictions/s")

        names = await ready_pods(client, "few", 50)
        await client.create(PODDISRUPTIONBUDGETS, {"metadata": {"name": "budget"}, "spec": {
            "minAvailable": 40, "selector": {"matchLabels": {"app": "x"}}}}, "few")
        await synced(client, "few", currentHealthy=50, disruptionsAllowed=10)
        ok, refused = await evict_all(client, "few", names, 50)
        print(f"budget of 10 disruptions, 50 evictions at once: {ok} evicted (must be 10), {refused} refused")
    finally:
        await client.close()


if __name__ == "__main__":
    with MiniKube(controllers="disruption") as cluster:
        cluster.run(main(cluster), timeout=300)
