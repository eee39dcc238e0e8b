"""Kubelet figures, in one run against in-process clusters (issue #13 targets in brackets):

- a Pod already bound to a node: milliseconds from create to the kubelet reporting it Running and Ready, with
  the process runtime (namespaces made, processes spawned, the container's isolated root built) [< 100 ms] and the
  simulated runtime [< 10 ms]; with the process runtime also for a Pod whose securityContext asks for everything
  (another user and groups, fsGroup, no capabilities, no_new_privs, a read-only root, an emptyDir) [< 100 ms];
- 100 Pods on one simulated node: the kubelet's own memory per Pod (Python allocations by the kubelet and its
  Pod informer, tracemalloc) [< 5 MB];
- built-in images (issue #27), from create to Running and Ready: busybox running `sh -c` (its sh is bash),
  nginx serving its welcome page (ready once port 80 answers), the pause image; `--images` runs only these;
- exec round trip through the API server and the kubelet (WebSocket `v5.channel.k8s.io`, `true` run in the
  container) [< 50 ms].

    .venv/bin/python bench/kubelet_bench.py
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mini_kube.machinery.refs import PODS
from mini_kube.network.namespaces import can_make_namespaces  # noqa: E402

from mini_kube.testing import MiniKube  # noqa: E402

RESTRICTED = {"pod": {"runAsUser": 1000, "runAsGroup": 3000, "fsGroup": 2000, "runAsNonRoot": True},
              "container": {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True,
                            "capabilities": {"drop": ["ALL"]}}}


BUILT_IN = [("busybox:1.36", ["sh", "-c", "[[ 1 == 1 ]] && sleep 300"], None),
            ("nginx:1.27", None, {"tcpSocket": {"port": 80}, "periodSeconds": 1}),
            ("registry.k8s.io/pause:3.10", None, None)]


def pod(name: str, command: list[str] | None = None, node: str = "mini-kube", secure: bool = False,
        image: str = "busybox", readiness: dict | None = None) -> dict:
    container = {"name": "c", "image": image, **({"command": command} if command else {}),
                 **({"readinessProbe": readiness} if readiness else {})}
    spec: dict = {"nodeName": node, "containers": [container], "terminationGracePeriodSeconds": 0}
    if secure:
        container["securityContext"] = RESTRICTED["container"]
        container["volumeMounts"] = [{"name": "scratch", "mountPath": "/scratch"}]
        spec.update(securityContext=RESTRICTED["pod"], volumes=[{"name": "scratch", "emptyDir": {}}])
    return {"metadata": {"name": name}, "spec": spec}


async def time_to_running(kube: MiniKube, count: int, command: list[str] | None, secure: bool = False,
                          image: str = "busybox", readiness: dict | None = None) -> list[float]:
    """Create Pods one at a time; a watch sees each become Running and Ready."""
    client = kube.client.async_client
    times = []
    for i in range(count):
        name = f"r{i}-{time.monotonic_ns() % 100000}"
        listed = await client.list(PODS, "default")
        started = time.perf_counter()
        await client.create(PODS, pod(name, command, secure=secure, image=image, readiness=readiness), "default")
        async for event in client.watch(PODS, "default", resource_version=listed["metadata"]["resourceVersion"],
                                        fieldSelector=f"metadata.name={name}"):
            status = event["object"].get("status") or {}
            ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or ())
            if status.get("phase") == "Running" and ready:
                times.append((time.perf_counter() - started) * 1000)
                break
        await client.delete(PODS, name, "default", body={"gracePeriodSeconds": 0})
    return times


async def exec_round_trips(kube: MiniKube, name: str, count: int) -> list[float]:
    import websockets

    url = kube.url.replace("http", "ws") + f"/api/v1/namespaces/default/pods/{name}/exec?command=true&stdout=1&stderr=1"
    times = []
    for _ in range(count):
        started = time.perf_counter()
        async with websockets.connect(url, subprotocols=["v5.channel.k8s.io"]) as ws:
            async for message in ws:
                if isinstance(message, bytes) and message[:1] == b"\x03":
                    assert json.loads(message[1:])["status"] == "Success"
                    break
        times.append((time.perf_counter() - started) * 1000)
    return times


def summary(values: list[float]) -> str:
    values = sorted(values)
    return f"median {statistics.median(values):.1f} ms, p90 {values[int(len(values) * 0.9) - 1]:.1f} ms"


def built_in_images() -> None:
    with MiniKube(nodes=1, node_runtime="process", scheduler=False,
                  node_options={"unknown_images": "fail"}) as kube:
        for image, command, readiness in BUILT_IN:
            times = kube.run(time_to_running(kube, 15, command, image=image, readiness=readiness), timeout=300)
            print(f"process runtime, built-in image {image} to Running+Ready: {summary(times)}")


def main() -> None:
    if "--images" in sys.argv:
        built_in_images()
        return
    with MiniKube(nodes=1, node_runtime="simulated", scheduler=False) as kube:
        sim = kube.run(time_to_running(kube, 30, None), timeout=120)
        print(f"simulated runtime, bound Pod to Running+Ready: {summary(sim)}  [target < 10 ms]")
        kubelet = kube.nodes.kubelets[0]
        tracemalloc.start()
        before = tracemalloc.take_snapshot()

        async def hundred() -> None:
            client = kube.client.async_client
            await asyncio.gather(*(client.create(PODS, pod(f"m{i}"), "default") for i in range(100)))
            while sum(1 for w in kubelet.workers.values() if w._written and w._written.get("phase") == "Running") < 100:  # noqa: SLF001
                await asyncio.sleep(0.05)

        kube.run(hundred(), timeout=120)
        after = tracemalloc.take_snapshot()
        tracemalloc.stop()
        wanted = [tracemalloc.Filter(True, "*/kubelet/*"), tracemalloc.Filter(True, "*/controllers/informer.py")]
        grown = sum(s.size_diff for s in after.filter_traces(wanted).compare_to(before.filter_traces(wanted),
                                                                                "filename"))
        print(f"100 Pods on one simulated node: kubelet memory {grown / 100 / 1024:.1f} KiB per Pod  [target < 5 MB]")
    ok, why = can_make_namespaces()
    if not ok:
        print(f"process runtime: skipped ({why})")
        return
    with MiniKube(nodes=1, node_runtime="process", scheduler=False) as kube:
        proc = kube.run(time_to_running(kube, 20, ["sleep", "300"]), timeout=180)
        print(f"process runtime, bound Pod to Running+Ready: {summary(proc)}  [target < 100 ms]")
        secure = kube.run(time_to_running(kube, 20, ["sleep", "300"], secure=True), timeout=180)
        print(f"process runtime, restricted securityContext, to Running+Ready: {summary(secure)}  [target < 100 ms]")
        kube.client.create(PODS, pod("exec", ["sleep", "300"]), "default")
        kube.run(time_to_running(kube, 0, None))
        while (kube.client.get(PODS, "exec", "default").get("status") or {}).get("phase") != "Running":
            time.sleep(0.02)
        trips = kube.run(exec_round_trips(kube, "exec", 30), timeout=120)
        print(f"exec round trip through the API server: {summary(trips)}  [target < 50 ms]")
    built_in_images()


if __name__ == "__main__":
    main()
