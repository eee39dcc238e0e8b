"""Job controller figures, in one run against an in-process cluster (job and garbage collector controllers),
with a stand-in kubelet that marks each new Pod Succeeded through the status subresource as soon as it
sees it:

- 200 Jobs of one completion created at once: Jobs completed per second (creation to the last Complete
  condition), and Pods created against Pods needed (an extra Pod is a failure of expectations);
- one Job of 500 completions, parallelism 50: completions per second;
- the same as an Indexed Job with backoffLimitPerIndex (each sync also works out failed indexes and the
  failed Pods awaiting replacement): completions per second.

    .venv/bin/python bench/jobs_bench.py
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mini_kube.client import ApiClient, ApiError, Connection  # noqa: E402
from mini_kube.machinery.refs import JOBS, NAMESPACES, PODS

from mini_kube.testing import MiniKube  # noqa: E402


def job(name: str, completions: int = 1, parallelism: int = 1, **spec) -> dict:
    return {"metadata": {"name": name}, "spec": {"completions": completions, "parallelism": parallelism, **spec,
            "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "i"}]}}}}


class Kubelet:
    """Marks every new Pod of a namespace Succeeded; counts the Pods it saw."""

    def __init__(self, client: ApiClient, namespace: str) -> None:
        self.client, self.namespace = client, namespace
        self.seen: set[str] = set()
        self.limit = asyncio.Semaphore(16)
        self.tasks: set[asyncio.Task[None]] = set()

    async def _succeed(self, name: str) -> None:
        async with self.limit:
            with contextlib.suppress(ApiError):
                await self.client.patch(PODS, name, {"status": {"phase": "Succeeded"}}, self.namespace,
                                        subresource="status")

    async def run(self, resource_version: str) -> None:
        async for event in self.client.watch(PODS, self.namespace, resource_version=resource_version):
            pod = event["object"]
            name = pod["metadata"]["name"]
            if event["type"] == "ADDED" and name not in self.seen:
                self.seen.add(name)
                task = asyncio.create_task(self._succeed(name))
                self.tasks.add(task)
                task.add_done_callback(self.tasks.discard)


async def complete(client: ApiClient, namespace: str, names: list[str]) -> None:
    while True:
        items = (await client.list(JOBS, namespace))["items"]
        done = {j["metadata"]["name"] for j in items if any(
            c["type"] == "Complete" and c["status"] == "True" for c in (j.get("status") or {}).get("conditions") or ())}
        if done >= set(names):
            return
        await asyncio.sleep(0.05)


async def scenario(client: ApiClient, namespace: str, jobs: list[dict]) -> tuple[float, int]:
    await client.create(NAMESPACES, {"metadata": {"name": namespace}})
    listed = await client.list(PODS, namespace)
    kubelet = Kubelet(client, namespace)
    watcher = asyncio.create_task(kubelet.run(listed["metadata"]["resourceVersion"]))
    started = time.perf_counter()
    limit = asyncio.Semaphore(32)

    async def create(body: dict) -> None:
        async with limit:
            await client.create(JOBS, body, namespace)

    await asyncio.gather(*(create(j) for j in jobs))
    await complete(client, namespace, [j["metadata"]["name"] for j in jobs])
    elapsed = time.perf_counter() - started
    watcher.cancel()
    await asyncio.gather(watcher, return_exceptions=True)
    return elapsed, len(kubelet.seen)


async def main() -> None:
    with MiniKube(controllers="job,garbagecollector") as kube:
        client = ApiClient(Connection.from_kubeconfig(kube.kubeconfig))

        async def run() -> None:
            many = [job(f"j{i}") for i in range(200)]
            elapsed, pods = await scenario(client, "many", many)
            print(f"200 Jobs of 1 completion: all Complete in {elapsed:.2f} s ({200 / elapsed:.0f} jobs/s), "
                  f"{pods} Pods created for 200 needed")
            elapsed, pods = await scenario(client, "wide", [job("wide", 500, 50)])
            print(f"1 Job of 500 completions, parallelism 50: Complete in {elapsed:.2f} s "
                  f"({500 / elapsed:.0f} completions/s), {pods} Pods created for 500 needed")
            indexed = job("indexed", 500, 50, completionMode="Indexed", backoffLimitPerIndex=1)
            elapsed, pods = await scenario(client, "indexed", [indexed])
            print(f"1 Indexed Job of 500 completions, parallelism 50, backoffLimitPerIndex 1: Complete in "
                  f"{elapsed:.2f} s ({500 / elapsed:.0f} completions/s), {pods} Pods created for 500 needed")
            await client.close()

        kube.run(run(), timeout=600)


if __name__ == "__main__":
    asyncio.run(main())
