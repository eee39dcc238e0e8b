"""Controller runtime figures, in one run against an in-process cluster (issue #11's targets):

- an informer lists 10,000 ConfigMaps, then delivers changes to its handlers (p99 from write to handler);
- the work queue's add/get/done rate;
- the garbage collector deleting a 1,000-object ownership tree after its root goes;
- an informer's memory for 10,000 ConfigMaps against their JSON size (its own structures, counted with
  sys.getsizeof: the server runs in the same process, so process-wide measures would count it too).

    .venv/bin/python bench/controllers_bench.py [--objects 10000]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mini_kube.client import ApiClient, Connection  # noqa: E402
from mini_kube.client.informer import Informer  # noqa: E402
from mini_kube.client.workqueue import WorkQueue  # noqa: E402
from mini_kube.machinery.refs import CONFIGMAPS, SECRETS

from mini_kube.testing import MiniKube  # noqa: E402


async def create_many(client: ApiClient, count: int, namespace: str) -> None:
    sem = asyncio.Semaphore(32)

    async def one(i: int) -> None:
        async with sem:
            await client.create(CONFIGMAPS, {"metadata": {"name": f"cm-{i:05d}"}, "data": {"k": f"value-{i}"}},
                                namespace)

    await asyncio.gather(*(one(i) for i in range(count)))


async def informer_figures(kube: MiniKube, count: int) -> dict[str, float]:
    client = ApiClient(Connection.from_kubeconfig(kube.kubeconfig))
    await create_many(client, count, "default")
    informer = Informer(client, CONFIGMAPS, "default")
    started = time.perf_counter()
    informer.start()
    await informer.synced.wait()
    synced = time.perf_counter() - started
    held = footprint(informer)
    json_size = sum(len(orjson.dumps(o)) for o in informer.objects.values())
    seen: dict[str, float] = {}
    informer.add_handler(lambda e, old, new: seen.setdefault((new or old)["metadata"]["name"], time.perf_counter()))
    latencies = []
    for i in range(200):
        name = f"probe-{i}"
        sent = time.perf_counter()
        await client.create(CONFIGMAPS, {"metadata": {"name": name}}, "default")
        while name not in seen:
            await asyncio.sleep(0)
        latencies.append(seen[name] - sent)
    await informer.stop()
    await client.close()
    latencies.sort()
    return {"sync_s": synced, "p99_ms": latencies[int(len(latencies) * 0.99) - 1] * 1000,
            "memory_ratio": held / json_size}


def footprint(informer: Informer) -> int:
    """Bytes the informer's cache holds: the stored objects, their keys, the tables and the indices."""
    raw = informer.objects._raw
    size = sys.getsizeof(raw) + sum(sys.getsizeof(k) + sys.getsizeof(v) for k, v in raw.items())
    for index in informer._indices.values():
        size += sys.getsizeof(index) + sum(sys.getsizeof(k) + sys.getsizeof(keys) for k, keys in index.items())
    return size


async def queue_rate(keys: int = 100_000) -> float:
    queue = WorkQueue()
    started = time.perf_counter()
    for i in range(keys):
        queue.add(i)
    for _ in range(keys):
        key = await queue.get()
        queue.done(key)
    return keys / (time.perf_counter() - started)


async def gc_tree(kube: MiniKube, size: int = 1000) -> float:
    client = ApiClient(Connection.from_kubeconfig(kube.kubeconfig))
    root = await client.create(CONFIGMAPS, {"metadata": {"name": "root"}}, "kube-public")
    ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "root", "uid": root["metadata"]["uid"]}
    sem = asyncio.Semaphore(32)

    async def child(i: int) -> None:
        async with sem:
            await client.create(SECRETS, {"metadata": {"name": f"child-{i:04d}", "ownerReferences": [ref]}},
                                "kube-public")

    await asyncio.gather(*(child(i) for i in range(size)))
    await asyncio.sleep(0.5)  # the collector has seen them
    started = time.perf_counter()
    await client.delete(CONFIGMAPS, "root", "kube-public")
    while (await client.list(SECRETS, "kube-public", limit="1"))["items"]:
        await asyncio.sleep(0.02)
    elapsed = time.perf_counter() - started
    await client.close()
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--objects", type=int, default=10_000)
    args = parser.parse_args()
    with MiniKube(controllers="garbagecollector") as kube:
        figures = kube.run(informer_figures(kube, args.objects), timeout=600)
        gc = kube.run(gc_tree(kube), timeout=600)
    rate = asyncio.run(queue_rate())
    print(f"informer: listed {args.objects} ConfigMaps in {figures['sync_s'] * 1000:.0f} ms; change to handler "
          f"p99 {figures['p99_ms']:.2f} ms (target < 10 ms)")
    print(f"informer memory: {figures['memory_ratio']:.2f}x the objects' JSON size (target <= 2x)")
    print(f"work queue: {rate:,.0f} keys/s add+get+done (target 100,000/s)")
    print(f"garbage collector: a 1,000-object tree gone {gc:.2f} s after its root (target < 2 s)")


if __name__ == "__main__":
    main()
