"""Agent operator figures, in one run: an in-process API server (no other controllers) and `mini-kube operator`
as its own process, as it runs beside a cluster.

- 1,000 Agents, created before the operator starts, reconciled from scratch: seconds from the operator's start
  until their 3,000 children (ConfigMap, Deployment, Service each) exist and every Agent has a status
  (target < 10 s);
- the ServingRuntime they share changes its image: seconds until all 1,000 Deployments carry it (target < 5 s).

    .venv/bin/python bench/agent_bench.py [--agents 1000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mini_kube.agent_operator.api import AGENTS, API_VERSION, MANAGED_SELECTOR, SERVING_RUNTIMES
from mini_kube.client import ApiClient, Connection, ResourceRef  # noqa: E402
from mini_kube.machinery.refs import CONFIGMAPS, CUSTOMRESOURCEDEFINITIONS, DEPLOYMENTS, SERVICES

from mini_kube.testing import MiniKube  # noqa: E402

CRDS = Path(__file__).resolve().parents[1] / "deploy" / "agent-operator" / "00-crds.yaml"
NS = "bench"


async def watch_until(client: ApiClient, ref: ResourceRef, rv: str, done, label_selector: str = "") -> float:
    """Follow a watch from `rv` until `done(event)` says so; returns the time it did."""
    params = {"labelSelector": label_selector} if label_selector else {}
    while True:
        async for event in client.watch(ref, NS, resource_version=rv, **params):
            rv = event["object"]["metadata"].get("resourceVersion") or rv
            if done(event):
                return time.perf_counter()


async def setup(client: ApiClient, count: int) -> None:
    for doc in yaml.safe_load_all(CRDS.read_text()):
        await client.create(CUSTOMRESOURCEDEFINITIONS, doc)
    await asyncio.sleep(0.5)
    await client.create(ResourceRef("", "v1", "namespaces", namespaced=False), {"metadata": {"name": NS}})
    await client.create(SERVING_RUNTIMES, {"apiVersion": API_VERSION, "kind": "ServingRuntime",
                                           "metadata": {"name": "rt"}, "spec": {"image": "agent:1"}}, NS)
    sem = asyncio.Semaphore(32)

    async def one(i: int) -> None:
        async with sem:
            await client.create(AGENTS, {"apiVersion": API_VERSION, "kind": "Agent", "metadata": {"name": f"a{i}"},
                                         "spec": {"runtime": "rt", "config": {"index": str(i)}}}, NS)
    await asyncio.gather(*(one(i) for i in range(count)))


async def from_scratch(client: ApiClient, kubeconfig: str, count: int) -> tuple[float, subprocess.Popen]:
    rv = (await client.list(AGENTS, NS, limit="1"))["metadata"]["resourceVersion"]
    children: set[tuple[str, str]] = set()
    statuses: set[str] = set()

    def child(kind: str):
        def done(event: dict) -> bool:
            if event["type"] == "ADDED":
                children.add((kind, event["object"]["metadata"]["name"]))
            return len(children) >= 3 * count and len(statuses) >= count
        return done

    def status(event: dict) -> bool:
        if event["type"] == "MODIFIED" and event["object"].get("status"):
            statuses.add(event["object"]["metadata"]["name"])
        return len(children) >= 3 * count and len(statuses) >= count

    watchers = [asyncio.create_task(watch_until(client, ref, rv, child(ref.plural), MANAGED_SELECTOR))
                for ref in (CONFIGMAPS, DEPLOYMENTS, SERVICES)]
    watchers.append(asyncio.create_task(watch_until(client, AGENTS, rv, status)))
    await asyncio.sleep(0.2)
    started = time.perf_counter()
    operator = subprocess.Popen([sys.executable, "-m", "mini_kube.cli", "operator", "--kubeconfig",
                                 kubeconfig, "--health-address", "127.0.0.1:0"], stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, text=True)
    finished, pending = await asyncio.wait(watchers, return_when=asyncio.FIRST_COMPLETED)
    while pending and not (len(children) >= 3 * count and len(statuses) >= count):
        finished, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
    for task in pending:
        task.cancel()
    ended = max(t.result() for t in finished if not t.cancelled())
    return ended - started, operator


async def runtime_change(client: ApiClient, count: int) -> float:
    rv = (await client.list(DEPLOYMENTS, NS, limit="1"))["metadata"]["resourceVersion"]
    rolled: set[str] = set()

    def done(event: dict) -> bool:
        d = event["object"]
        if d["spec"]["template"]["spec"]["containers"][0]["image"] == "agent:2":
            rolled.add(d["metadata"]["name"])
        return len(rolled) >= count

    watcher = asyncio.create_task(watch_until(client, DEPLOYMENTS, rv, done, MANAGED_SELECTOR))
    await asyncio.sleep(0.2)
    started = time.perf_counter()
    await client.patch(SERVING_RUNTIMES, "rt", {"spec": {"image": "agent:2"}}, NS)
    return await watcher - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--agents", type=int, default=1000)
    count = parser.parse_args().agents
    with MiniKube(controllers=False, service_cidr="10.96.0.0/16") as kube:  # room for the Services
        async def run() -> tuple[float, float, dict]:
            client = ApiClient(Connection.from_kubeconfig(kube.kubeconfig))
            operator = None
            try:
                await setup(client, count)
                scratch, operator = await from_scratch(client, kube.kubeconfig, count)
                line = await asyncio.get_running_loop().run_in_executor(None, operator.stdout.readline)
                status_url = line.split()[-1]
                change = await runtime_change(client, count)
                await asyncio.sleep(0.5)
                status = json.loads(urllib.request.urlopen(status_url, timeout=5).read())
                return scratch, change, status
            finally:
                if operator is not None:
                    operator.terminate()
                    operator.wait(10)
                await client.close()
        scratch, change, status = kube.run(run(), timeout=600)
    print(f"{count} Agents reconciled from scratch ({3 * count} children created, every status written) in "
          f"{scratch:.2f} s from the operator's start (target < 10 s)")
    print(f"a ServingRuntime image change reached all {count} Deployments in {change:.2f} s (target < 5 s)")
    print(f"operator: {status['reconciles']} reconciles, {status['writes']} writes in all")


if __name__ == "__main__":
    main()
