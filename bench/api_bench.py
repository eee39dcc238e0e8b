"""API server benchmark: mini-kube against a bare aiohttp + aiosqlite baseline, measured in one run.

Both servers run as subprocesses on temp files and are driven by the same aiohttp client (16 concurrent
requests): ConfigMap creates/s, gets/s, time to list 2,000, watch-event latency to 50 watchers, and cold
start to ready. Prints the figures and the ratios the API server issue asks for.

    .venv/bin/python bench/api_bench.py [--objects 2000]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp
import orjson

ROOT = Path(__file__).resolve().parents[1]
CONCURRENCY = 16


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def wait_ready(url: str, started: float, timeout: float = 20) -> float:
    async with aiohttp.ClientSession() as session:
        while time.perf_counter() - started < timeout:
            try:
                async with session.get(url + "/readyz") as response:
                    if response.status == 200:
                        return time.perf_counter() - started
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.005)
    raise RuntimeError(f"{url} did not become ready")


# Servers run as installed programs do: with Python's bytecode cache (this machine's environment turns it off).
SERVER_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def start_minikube(tmp: str, port: int) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "mini_kube.cli", "serve", "--insecure-http", "--no-controllers",
                             "--data-dir", tmp, "--port", str(port), "--kubeconfig", f"{tmp}/kubeconfig"],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=SERVER_ENV)


def start_baseline(tmp: str, port: int) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, str(ROOT / "bench" / "baseline_server.py"), f"{tmp}/base.db", str(port)],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=SERVER_ENV)


async def warm_up(starter, tmp: str) -> None:
    """Start and stop once so the bytecode cache exists, as it does after an install."""
    port = free_port()
    proc = starter(tmp, port)
    try:
        await wait_ready(f"http://127.0.0.1:{port}", time.perf_counter())
    finally:
        proc.terminate()
        proc.wait(10)


async def run_concurrently(jobs: list, concurrency: int = CONCURRENCY) -> None:
    queue = list(reversed(jobs))

    async def worker() -> None:
        while queue:
            await queue.pop()()

    await asyncio.gather(*(worker() for _ in range(concurrency)))


async def crud(url: str, n: int) -> dict[str, float]:
    path = f"{url}/api/v1/namespaces/default/configmaps"
    async with aiohttp.ClientSession() as session:
        async def create(i: int) -> None:
            body = orjson.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"cm-{i:05d}"},
                                 "data": {"key": f"value-{i}"}})
            async with session.post(path, data=body, headers={"Content-Type": "application/json"}) as r:
                assert r.status == 201, await r.text()
                await r.read()

        async def get(i: int) -> None:
            async with session.get(f"{path}/cm-{i:05d}") as r:
                assert r.status == 200
                await r.read()

        started = time.perf_counter()
        await run_concurrently([lambda i=i: create(i) for i in range(n)])
        create_rate = n / (time.perf_counter() - started)
        started = time.perf_counter()
        await run_concurrently([lambda i=i: get(i) for i in range(n)])
        get_rate = n / (time.perf_counter() - started)
        times, body = [], b""
        for _ in range(15):  # the server's time to answer: the last byte, not the client's JSON parsing
            started = time.perf_counter()
            async with session.get(path) as r:
                body = await r.read()
            times.append(time.perf_counter() - started)
        assert len(orjson.loads(body)["items"]) == n
        return {"create_per_s": create_rate, "get_per_s": get_rate, "list_ms": statistics.median(times) * 1000,
                "list_kib": len(body) / 1024}


async def in_process_start() -> float:
    """Seconds from ApiServer.start() to serving, on a new data dir, with the modules already imported."""
    import mini_kube.apiserver.auth.secure  # noqa: F401 - imported by start(); timed apart from it
    from mini_kube.apiserver.server import ApiServer, ServerConfig

    with tempfile.TemporaryDirectory() as tmp:
        server = ApiServer(ServerConfig(port=0, data_dir=tmp, insecure_http=True))
        started = time.perf_counter()
        await server.start()
        elapsed = time.perf_counter() - started
        await server.stop()
    return elapsed


async def watch_latency(url: str, watchers: int = 50, events: int = 100) -> float:
    """p99 milliseconds from a write's acknowledgement to its event reaching each of `watchers` watchers."""
    path = f"{url}/api/v1/namespaces/default/configmaps"
    received: list[float] = []
    sent: dict[str, float] = {}
    async with aiohttp.ClientSession() as session:
        async with session.get(path) as r:
            rv = orjson.loads(await r.read())["metadata"]["resourceVersion"]
        ready = asyncio.Event()
        opened = 0

        async def watcher() -> None:
            nonlocal opened
            timeout = aiohttp.ClientTimeout(total=None, sock_read=60)
            async with session.get(path, params={"watch": "1", "resourceVersion": rv}, timeout=timeout) as r:
                opened += 1
                if opened == watchers:
                    ready.set()
                count = 0
                async for line in r.content:
                    event = orjson.loads(line)
                    name = event["object"]["metadata"]["name"]
                    if name in sent:
                        received.append(time.perf_counter() - sent[name])
                        count += 1
                        if count == events:
                            return

        tasks = [asyncio.create_task(watcher()) for _ in range(watchers)]
        await asyncio.wait_for(ready.wait(), 10)
        await asyncio.sleep(0.2)
        for i in range(events):
            name = f"watched-{i:04d}"
            body = orjson.dumps({"metadata": {"name": name}})
            started = time.perf_counter()
            sent[name] = started  # before the answer: a store may deliver the event before the client reads it
            async with session.post(path, data=body, headers={"Content-Type": "application/json"}) as r:
                await r.read()
            await asyncio.sleep(0.005)
        await asyncio.wait_for(asyncio.gather(*tasks), 60)
    received.sort()
    return received[int(len(received) * 0.99) - 1] * 1000


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--objects", type=int, default=2000)
    args = parser.parse_args()
    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, starter in (("baseline", start_baseline), ("mini-kube", start_minikube)):
            warm_dir = Path(tmp) / f"{name}-warm"
            warm_dir.mkdir()
            await warm_up(starter, str(warm_dir))
            port = free_port()
            started = time.perf_counter()
            proc = starter(tmp, port)
            try:
                ready = await wait_ready(f"http://127.0.0.1:{port}", started)
                figures = await crud(f"http://127.0.0.1:{port}", args.objects)
                figures["ready_s"] = ready
                if name == "mini-kube":
                    figures["watch_p99_ms"] = await watch_latency(f"http://127.0.0.1:{port}")
                results[name] = figures
                print(f"{name}: " + ", ".join(f"{k} {v:.3f}" for k, v in figures.items()), flush=True)
            finally:
                proc.terminate()
                try:
                    proc.wait(5)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
    sys.path.insert(0, str(ROOT))
    start_s = await in_process_start()
    base, mk = results["baseline"], results["mini-kube"]
    print(f"{'':22}{'baseline':>12}{'mini-kube':>12}{'ratio':>10}  target")
    print(f"{'creates/s':22}{base['create_per_s']:12.0f}{mk['create_per_s']:12.0f}"
          f"{mk['create_per_s'] / base['create_per_s']:10.2f}  >= 0.5 (real apiserver: 1,229/s)")
    print(f"{'gets/s':22}{base['get_per_s']:12.0f}{mk['get_per_s']:12.0f}"
          f"{mk['get_per_s'] / base['get_per_s']:10.2f}  >= 0.6 (real apiserver: 2,226/s)")
    print(f"{f'list {args.objects} (ms)':22}{base['list_ms']:12.1f}{mk['list_ms']:12.1f}"
          f"{mk['list_ms'] / base['list_ms']:10.2f}  <= 2.0 (real apiserver: 19 ms)")
    print(f"{'list body (KiB)':22}{base['list_kib']:12.0f}{mk['list_kib']:12.0f}")
    print(f"{'spawn to ready (s)':22}{base['ready_s']:12.3f}{mk['ready_s']:12.3f}"
          f"{mk['ready_s'] / base['ready_s']:10.2f}  (includes the interpreter and imports)")
    print(f"{'server start, warm (s)':22}{'':12}{start_s:12.3f}{'':10}  < 0.3 (real apiserver: 2.5-3.3 s)")
    print(f"{'watch p99, 50 (ms)':22}{'':12}{mk['watch_p99_ms']:12.1f}{'':10}  < 100 (real apiserver: 14 ms)")
    print(f"(cpu count {os.cpu_count()}, {args.objects} ConfigMaps, {CONCURRENCY} concurrent requests)")


if __name__ == "__main__":
    asyncio.run(main())
