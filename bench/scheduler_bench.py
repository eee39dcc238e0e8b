"""Scheduler figures, in one run against an in-process cluster (API server, scheduler and clients share one
event loop and process, as `mini-kube serve` runs them):

- 1,000 Pods (100m cpu, 128Mi each) already pending on 100 nodes when the scheduler starts: Pods bound per
  second (placing alone, the API server answering the bindings and the events);
- the same 1,000 Pods created in a burst while the scheduler runs: seconds from the first create to the last
  binding;
- the spread: most and fewest Pods on one node.

    .venv/bin/python bench/scheduler_bench.py [pods] [nodes]
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mini_kube.client import ApiClient, Connection  # noqa: E402
from mini_kube.machinery.refs import NAMESPACES, NODES, PODS
from mini_kube.scheduler import SchedulerRunner  # noqa: E402

from mini_kube.testing import MiniKube  # noqa: E402


def node(name: str) -> dict:
    return {"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux"}}}


NODE_STATUS = {"capacity": {"cpu": "32", "memory": "128Gi", "pods": "110"},
               "allocatable": {"cpu": "32", "memory": "128Gi", "pods": "110"},
               "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady", "message": ""}]}


def pod(i: int) -> dict:
    return {"metadata": {"name": f"p{i}"}, "spec": {"containers": [{
        "name": "c", "image": "i", "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}]}}


async def make_nodes(client: ApiClient, count: int) -> None:
    async def one(i: int) -> None:
        await client.create(NODES, node(f"n{i}"))
        await client.patch(NODES, f"n{i}", {"status": NODE_STATUS}, subresource="status")
    await asyncio.gather(*(one(i) for i in range(count)))


async def create_pods(client: ApiClient, namespace: str, count: int) -> None:
    sem = asyncio.Semaphore(32)

    async def one(i: int) -> None:
        async with sem:
            await client.create(PODS, pod(i), namespace)
    await asyncio.gather(*(one(i) for i in range(count)))


async def bound(client: ApiClient, namespace: str) -> Counter:
    items = (await client.list(PODS, namespace))["items"]
    return Counter(p["spec"].get("nodeName") for p in items)


async def wait_scheduled(runner: SchedulerRunner, count: int) -> None:
    while runner.scheduler is None or runner.scheduler.scheduled < count:
        await asyncio.sleep(0.005)


async def run(kube: MiniKube, pods: int, nodes: int) -> None:
    client = ApiClient(Connection.from_kubeconfig(kube.kubeconfig))
    await make_nodes(client, nodes)
    for ns in ("pending", "burst"):
        await client.create(NAMESPACES, {"metadata": {"name": ns}})
    await create_pods(client, "pending", pods)

    runner = SchedulerRunner(ApiClient(Connection.from_kubeconfig(kube.kubeconfig)))
    started = time.perf_counter()
    await runner.start()
    synced = time.perf_counter()
    await wait_scheduled(runner, pods)
    placed = time.perf_counter()
    spread = await bound(client, "pending")
    assert None not in spread and sum(spread.values()) == pods, spread
    print(f"{pods} pending Pods on {nodes} nodes: bound in {placed - synced:.2f} s after the caches synced "
          f"({(placed - synced) and pods / (placed - synced):.0f} Pods/s; start-up {synced - started:.2f} s); "
          f"per node {min(spread.values())}..{max(spread.values())}")

    burst_start = time.perf_counter()
    await create_pods(client, "burst", pods)
    created = time.perf_counter()
    await wait_scheduled(runner, 2 * pods)
    done = time.perf_counter()
    spread = await bound(client, "burst")
    assert None not in spread and sum(spread.values()) == pods, spread
    print(f"{pods} Pods created in a burst ({created - burst_start:.2f} s to create): last bound "
          f"{done - burst_start:.2f} s after the first create ({pods / (done - burst_start):.0f} Pods/s end to end)")
    assert runner.scheduler is not None
    print(f"scheduling attempts that found no node: {runner.scheduler.failures}")
    await runner.stop()
    await client.close()


def main() -> None:
    pods = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    nodes = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    with MiniKube(controllers="namespace", scheduler=False) as kube:
        kube.run(run(kube, pods, nodes), timeout=600)


if __name__ == "__main__":
    main()
