"""The fake cloud's load balancer data plane, against the same traffic sent straight to the backend, in one run:

- 1 MiB downloads, one after another: MB/s through the load balancer and direct (ratio);
- 100 concurrent connections each sending 64-byte requests and awaiting the echo: round-trip p50/p99, and
  what the load balancer adds;
- connection set-up: connect, one small request, close, 50 at a time: connections per second and p99.

The backend, the load balancer and the client are three processes (a load balancer is its own machine), all
on 127.0.0.0/8; direct and load-balanced runs alternate five times and the medians are printed (the
development machine is shared, so single runs swing widely).

    .venv/bin/python bench/ccm_bench.py
"""

from __future__ import annotations

import asyncio
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

MIB = 1 << 20
BLOCK = f"127.{random.randint(100, 250)}.{random.randint(0, 255)}"


async def backend(ip: str, port: int) -> None:
    """b"D": send 1 MiB and close; b"E": echo 64-byte messages until EOF."""
    payload = b"x" * MIB

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        kind = await reader.read(1)  # empty: the load balancer's health check
        if kind == b"D":
            writer.write(payload)
        else:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        await writer.drain()
        writer.close()
    server = await asyncio.start_server(serve, ip, port, backlog=1024)
    print("ready", flush=True)
    await server.serve_forever()


async def balancer(ip: str, port: int, backend_ip: str, backend_port: int) -> None:
    from mini_kube.ccm.cloud import FakeCloud, LBPort, LBSpec

    cloud = FakeCloud([ip], health_interval=5.0)
    await cloud.ensure_load_balancer("bench", LBSpec((LBPort("TCP", port, backend_port),), (backend_ip,)))
    print("ready", flush=True)
    await asyncio.Event().wait()


async def download(ip: str, port: int) -> int:
    reader, writer = await asyncio.open_connection(ip, port)
    writer.write(b"D")
    got = 0
    while data := await reader.read(1 << 18):
        got += len(data)
    writer.close()
    return got


async def throughput(ip: str, port: int, count: int = 40) -> float:
    await download(ip, port)
    started = time.perf_counter()
    for _ in range(count):
        assert await download(ip, port) == MIB
    return count * MIB / (time.perf_counter() - started) / 1e6


async def round_trips(ip: str, port: int, conns: int = 100, each: int = 40) -> list[float]:
    times: list[float] = []
    message = b"m" * 64

    async def one() -> None:
        reader, writer = await asyncio.open_connection(ip, port)
        writer.write(b"E")
        for _ in range(each):
            started = time.perf_counter()
            writer.write(message)
            await reader.readexactly(64)
            times.append(time.perf_counter() - started)
        writer.close()
    await asyncio.gather(*(one() for _ in range(conns)))
    return times


async def setups(ip: str, port: int, total: int = 1000, parallel: int = 50) -> tuple[float, list[float]]:
    times: list[float] = []
    gate = asyncio.Semaphore(parallel)

    async def one() -> None:
        async with gate:
            started = time.perf_counter()
            reader, writer = await asyncio.open_connection(ip, port)
            writer.write(b"E" + b"p" * 8)
            await reader.readexactly(8)
            writer.close()
            times.append(time.perf_counter() - started)
    started = time.perf_counter()
    await asyncio.gather(*(one() for _ in range(total)))
    return total / (time.perf_counter() - started), times


def pct(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[int(q) - 1] * 1000


async def client(rounds: int = 5) -> None:
    """Direct and through the load balancer, alternately, `rounds` times; medians (the machine is shared)."""
    direct, through = (f"{BLOCK}.10", 31000), (f"{BLOCK}.100", 8080)
    for target in (direct, through):
        await download(*target)  # warm
    figures: dict[str, list[float]] = {}

    def note(name: str, value: float) -> None:
        figures.setdefault(name, []).append(value)
    for _ in range(rounds):
        for label, target in (("direct", direct), ("lb", through)):
            note(f"{label} MB/s", await throughput(*target, count=10))
            times = await round_trips(*target, each=20)
            note(f"{label} rt50", pct(times, 50))
            note(f"{label} rt99", pct(times, 99))
            rate, times = await setups(*target, total=300)
            note(f"{label} conn/s", rate)
            note(f"{label} setup99", pct(times, 99))
    m = {name: statistics.median(values) for name, values in figures.items()}
    print(f"medians of {rounds} alternating rounds:")
    print(f"1 MiB downloads: direct {m['direct MB/s']:.0f} MB/s, through the load balancer {m['lb MB/s']:.0f} MB/s "
          f"(ratio {m['lb MB/s'] / m['direct MB/s']:.2f}, target >= 0.5)")
    print(f"64-byte round trips at 100 connections: direct p50 {m['direct rt50']:.2f} ms p99 {m['direct rt99']:.2f} ms;"
          f" load balancer p50 {m['lb rt50']:.2f} ms p99 {m['lb rt99']:.2f} ms "
          f"(added p50 {m['lb rt50'] - m['direct rt50']:.2f} ms, p99 {m['lb rt99'] - m['direct rt99']:.2f} ms)")
    print(f"connection set-up (connect, 8-byte echo, close; 50 at a time): direct {m['direct conn/s']:.0f}/s p99 "
          f"{m['direct setup99']:.2f} ms; load balancer {m['lb conn/s']:.0f}/s p99 {m['lb setup99']:.2f} ms")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "backend":
        asyncio.run(backend(sys.argv[2], int(sys.argv[3])))
        return
    if len(sys.argv) > 1 and sys.argv[1] == "lb":
        asyncio.run(balancer(sys.argv[2], int(sys.argv[3]), sys.argv[4], int(sys.argv[5])))
        return
    me = [sys.executable, __file__]
    procs: list[subprocess.Popen[str]] = []
    try:
        for args in (["backend", f"{BLOCK}.10", "31000"], ["lb", f"{BLOCK}.100", "8080", f"{BLOCK}.10", "31000"]):
            procs.append(subprocess.Popen([*me, *args], stdout=subprocess.PIPE, text=True))
            assert procs[-1].stdout is not None and procs[-1].stdout.readline().strip() == "ready"
        asyncio.run(client())
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(10)


if __name__ == "__main__":
    main()
