"""ResourceQuota figures, in one run against an in-process cluster with the quota controller:

- 300 ConfigMaps created 16 at once in a namespace without a quota, then in one whose quota leaves room for all
  of them: creates per second (each one, with a quota, a check and a compare-and-swap on the quota's status);
- a quota with room for 50 more, 200 creates at once: exactly 50 may succeed (no overshoot);
- a quota over 500 Pods: seconds until its status counts them (the controller reading them from its informer).

    .venv/bin/python bench/quota_bench.py
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mini_kube.client import ApiClient, ApiError, Connection  # noqa: E402
from mini_kube.machinery.refs import CONFIGMAPS, NAMESPACES, PODS, RESOURCEQUOTAS  # noqa: E402

from mini_kube.testing import MiniKube  # noqa: E402


async def create_many(client: ApiClient, ns: str, count: int, concurrency: int) -> tuple[int, int, float]:
    """(created, refused, seconds) for `count` ConfigMaps, `concurrency` at once."""
    sem = asyncio.Semaphore(concurrency)
    outcome = {"ok": 0, "refused": 0}

    async def one(i: int) -> None:
        async with sem:
            try:
                await client.create(CONFIGMAPS, {"metadata": {"name": f"c{i}"}}, ns)
                outcome["ok"] += 1
            except ApiError as exc:
                if exc.status != 403:
                    raise
                outcome["refused"] += 1
    started = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(count)))
    return outcome["ok"], outcome["refused"], time.perf_counter() - started


async def quota(client: ApiClient, ns: str, hard: dict[str, str]) -> None:
    await client.create(NAMESPACES, {"metadata": {"name": ns}})
    await client.create(RESOURCEQUOTAS, {"metadata": {"name": "q"}, "spec": {"hard": hard}}, ns)
    while not ((await client.get(RESOURCEQUOTAS, "q", ns)).get("status") or {}).get("used"):
        await asyncio.sleep(0.01)


async def main(kube: MiniKube) -> None:
    client = ApiClient(Connection.from_kubeconfig(kube.kubeconfig))
    try:
        await client.create(NAMESPACES, {"metadata": {"name": "free"}})
        ok, _, elapsed = await create_many(client, "free", 300, 16)
        print(f"300 ConfigMaps, no quota: {ok / elapsed:.0f} creates/s")
        await quota(client, "roomy", {"count/configmaps": "1000"})
        ok, _, elapsed = await create_many(client, "roomy", 300, 16)
        print(f"300 ConfigMaps under a quota: {ok / elapsed:.0f} creates/s")

        await quota(client, "tight", {"count/configmaps": "50"})
        ok, refused, _ = await create_many(client, "tight", 200, 200)
        print(f"room for 50, 200 creates at once: {ok} created (must be 50), {refused} refused")

        await client.create(NAMESPACES, {"metadata": {"name": "pods"}})
        sem = asyncio.Semaphore(16)

        async def pod(i: int) -> None:
            async with sem:
                await client.create(PODS, {"metadata": {"name": f"p{i}"}, "spec": {"containers": [
                    {"name": "c", "image": "i", "resources": {"requests": {"cpu": "10m"}}}]}}, "pods")
        await asyncio.gather(*(pod(i) for i in range(500)))
        started = time.perf_counter()
        await client.create(RESOURCEQUOTAS, {"metadata": {"name": "q"}, "spec": {"hard": {
            "pods": "1000", "requests.cpu": "100"}}}, "pods")
        while ((await client.get(RESOURCEQUOTAS, "q", "pods")).get("status") or {}).get("used", {}).get("pods") \
                != "500":
            await asyncio.sleep(0.01)
        print(f"quota over 500 Pods computed in {time.perf_counter() - started:.3f} s")
    finally:
        await client.close()


if __name__ == "__main__":
    with MiniKube(controllers="resourcequota,serviceaccount,root-ca-cert-publisher", scheduler=False) as cluster:
        cluster.run(main(cluster), timeout=300)
