"""Cluster DNS figures, in one run:

- programming: 1,000 Services with an EndpointSlice of 10 endpoints each fed through the informer handlers;
- first-time questions answered per second (each name once: nothing cached);
- queries per second over UDP from a client process keeping 64 queries in flight (a mix of ClusterIP A,
  headless A with 10 addresses, SRV and NXDOMAIN), and the latency of one query at a time (p50/p99).

    .venv/bin/python bench/dns_bench.py
"""

from __future__ import annotations

import asyncio
import random
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import dns.message  # noqa: E402

SERVICES = 1000
HOST = f"127.{random.randint(100, 250)}.{random.randint(0, 255)}.2"


def objects() -> tuple[list[dict], list[dict]]:
    services, slices = [], []
    for i in range(SERVICES):
        headless = i % 2 == 1
        services.append({"metadata": {"name": f"s{i}", "namespace": "bench"}, "spec": {
            "clusterIP": "None" if headless else f"10.0.{i // 250}.{i % 250 + 1}",
            "ports": [{"name": "http", "port": 80, "protocol": "TCP"}]}})
        slices.append({"metadata": {"name": f"s{i}-abcde", "namespace": "bench",
                                    "labels": {"kubernetes.io/service-name": f"s{i}"}},
                       "addressType": "IPv4", "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}],
                       "endpoints": [{"addresses": [f"10.244.{i % 250}.{j + 1}"], "conditions": {"ready": True}}
                                     for j in range(10)]})
    return services, slices


def client(host: str, port: int, seconds: float) -> None:
    names = [("s0.bench.svc.cluster.local", "A"), ("s1.bench.svc.cluster.local", "A"),
             ("_http._tcp.s2.bench.svc.cluster.local", "SRV"), ("nothere.bench.svc.cluster.local", "A")]
    wires = [dns.message.make_query(n, t).to_wire() for n, t in names]
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.connect((host, port))
    # one at a time: latency
    times = []
    for i in range(2000):
        started = time.perf_counter()
        sock.send(wires[i % len(wires)])
        sock.recv(4096)
        times.append(time.perf_counter() - started)
    q = statistics.quantiles(times, n=100)
    # 64 in flight: throughput
    sock.settimeout(1.0)
    answered = sent = 0
    deadline = time.perf_counter() + seconds
    started = time.perf_counter()
    while time.perf_counter() < deadline:
        while sent - answered < 64:
            sock.send(wires[sent % len(wires)])
            sent += 1
        try:
            sock.recv(4096)
            answered += 1
        except TimeoutError:
            sent = answered  # a lost datagram: refill the window
    rate = answered / (time.perf_counter() - started)
    print(f"{rate:.0f} {q[49] * 1e3:.3f} {q[98] * 1e3:.3f}", flush=True)


async def main() -> None:
    from mini_kube.clusterdns.records import ClusterRecords
    from mini_kube.clusterdns.server import DnsServer

    services, slices = objects()
    records = ClusterRecords()
    started = time.perf_counter()
    for svc in services:
        records.on_service("add", None, svc)
    for item in slices:
        records.on_slice("add", None, item)
    programmed = time.perf_counter() - started
    print(f"programming {SERVICES} Services with 10 endpoints each: {programmed * 1000:.0f} ms")
    server = DnsServer(records)
    cold = [dns.message.make_query(f"s{i}.bench.svc.cluster.local", "A").to_wire() for i in range(SERVICES)]
    started = time.perf_counter()
    for wire in cold:
        server.handler.answer(wire, 512)
    print(f"first-time questions (no cached answer), in-process: {SERVICES / (time.perf_counter() - started):.0f} "
          "per second")
    port = await server.listen(HOST, 0)
    proc = await asyncio.create_subprocess_exec(sys.executable, __file__, "client", HOST, str(port), "3",
                                                stdout=subprocess.PIPE)
    out, _ = await proc.communicate()
    rate, p50, p99 = out.decode().split()
    print(f"UDP queries, 64 in flight: {float(rate):.0f} per second; one at a time: p50 {p50} ms, p99 {p99} ms")
    print(f"answers by rcode: {dict(server.handler.counts)}")
    await server.close()


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "client":
        client(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]))
    else:
        asyncio.run(main())
