"""kube-proxy figures, in one run (needs root: the backends live in a cluster network namespace made here):

- throughput of 1 MiB transfers (a new connection each, 4 at a time) straight to a backend pod address, through
  the ClusterIP (client in the cluster netns) and through the NodePort (client on the host), and the ratios;
- latency of small requests over 100 concurrent connections: paced (each connection sends every ~20 ms) and
  saturated (back to back), p50/p99 direct and through the proxy, and the added p99;
- 1,000 Services x 10 endpoints: time from a proxy's start to all 3,000 listeners (ClusterIP, NodePort, and
  the NodePort on the node's address in the cluster network) programmed, and how long an endpoint change takes
  to reach the proxy's balancer.

The proxy runs as its own process (`mini-kube proxy`), as on a node; the backend and the clients are separate
processes too, so no two of them share an event loop.

    .venv/bin/python bench/proxy_bench.py
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

MIB = 1 << 20
SERVICE_CIDR = "10.96.0.0/16"
BACKEND_IP = "10.244.1.21"
BACKEND_PORT = 8080
ROUNDS = 3


# -- backend (run inside the netns) -----------------------------------------------------------------------------
class _Backend(asyncio.Protocol):
    """`B <n>\\n`: n bytes then close; any other line is echoed."""

    BLOB = bytes(MIB)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport
        self.buffer = b""

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while b"\n" in self.buffer:
            line, self.buffer = self.buffer.split(b"\n", 1)
            if line.startswith(b"B "):
                size = int(line[2:])
                while size > 0:
                    chunk = self.BLOB[:min(size, MIB)]
                    self.transport.write(chunk)
                    size -= len(chunk)
                self.transport.close()
            else:
                self.transport.write(line + b"\n")


async def backend(ip: str, port: int) -> None:
    server = await asyncio.get_running_loop().create_server(_Backend, ip, port, backlog=1024)
    print("ready", flush=True)
    async with server:
        await server.serve_forever()


# -- clients ----------------------------------------------------------------------------------------------------
async def _transfer(address: tuple[str, int], size: int) -> int:
    loop = asyncio.get_running_loop()
    sock = socket.socket()
    sock.setblocking(False)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 * MIB)
    await loop.sock_connect(sock, address)
    await loop.sock_sendall(sock, f"B {size}\n".encode())
    buffer = bytearray(MIB)
    got = 0
    while True:
        n = await loop.sock_recv_into(sock, buffer)
        if not n:
            break
        got += n
    sock.close()
    return got


async def throughput(address: tuple[str, int], count: int = 400, concurrency: int = 4) -> float:
    """MiB/s of `count` 1 MiB transfers, each on a new connection, `concurrency` at a time."""
    await _transfer(address, MIB)  # warm up
    queue = list(range(count))
    total = 0

    async def worker() -> None:
        nonlocal total
        while queue:
            queue.pop()
            got = await _transfer(address, MIB)
            total += got

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    elapsed = time.perf_counter() - started
    assert total == count * MIB, total
    return total / MIB / elapsed


async def latency(address: tuple[str, int], connections: int = 100, rounds: int = 50,
                  pace: float = 0.0) -> dict[str, float]:
    """Round trips of a 64-byte line over `connections` concurrent connections (each sending every ~`pace`
    seconds, or back to back when 0): p50 and p99 in ms."""
    loop = asyncio.get_running_loop()
    socks = []
    for _ in range(connections):
        sock = socket.socket()
        sock.setblocking(False)
        await loop.sock_connect(sock, address)
        socks.append(sock)
    samples: list[float] = []
    line = b"x" * 63 + b"\n"

    async def run(sock: socket.socket) -> None:
        await loop.sock_sendall(sock, line)  # warm up: the proxy has dialled the backend before timing starts
        got = 0
        while got < len(line):
            got += len(await loop.sock_recv(sock, 4096))
        await asyncio.sleep(random.random() * pace)
        for _ in range(rounds):
            started = time.perf_counter()
            await loop.sock_sendall(sock, line)
            got = 0
            while got < len(line):
                got += len(await loop.sock_recv(sock, 4096))
            samples.append(time.perf_counter() - started)
            if pace:
                await asyncio.sleep(pace * (0.5 + random.random()))

    await asyncio.gather(*(run(s) for s in socks))
    for sock in socks:
        sock.close()
    samples.sort()
    return {"p50": samples[len(samples) // 2] * 1000, "p99": samples[int(len(samples) * 0.99)] * 1000,
            "requests": len(samples)}


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _busy() -> tuple[float, float]:
    """(busy, all) CPU time of the whole machine so far, in clock ticks (idle and iowait are not busy)."""
    ticks = [int(t) for t in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return sum(ticks) - ticks[3] - ticks[4], sum(ticks)


async def costed_throughput(address: tuple[str, int]) -> dict[str, Any]:
    """`throughput`, with the CPU every process on the path spent per MiB meanwhile (the client's own and those of
    the processes named in BENCH_WATCH, `name=pid,...`) and how many of the machine's cores were busy."""
    watched = {name: int(pid) for name, pid in (w.split("=") for w in os.environ.get("BENCH_WATCH", "").split(",")
                                                 if w)}
    before = {name: _cpu_seconds(pid) for name, pid in watched.items()}
    own, machine = os.times(), _busy()
    count = 400
    rate = await throughput(address, count)
    mib = count + 1  # and the warm-up transfer
    after, own_after, machine_after = {name: _cpu_seconds(pid) for name, pid in watched.items()}, os.times(), _busy()
    cpu = {name: (after[name] - before[name]) * 1000 / mib for name in watched}
    cpu["client"] = (own_after.user + own_after.system - own.user - own.system) * 1000 / mib
    busy = (machine_after[0] - machine[0]) / max(1, machine_after[1] - machine[1]) * (os.cpu_count() or 1)
    return {"throughput": rate, "cpu": cpu, "busy": {"cores": busy}}


async def client(targets: dict[str, tuple[str, int]]) -> dict[str, dict[str, Any]]:
    results: dict[str, dict[str, Any]] = {}
    for name, address in targets.items():
        results[name] = await costed_throughput(address)
        results[name]["paced"] = await latency(address, pace=0.02)  # type: ignore[assignment]
        results[name]["saturated"] = await latency(address, rounds=30)  # type: ignore[assignment]
    return results


# -- orchestration ----------------------------------------------------------------------------------------------
class Netns:
    def __init__(self) -> None:
        script = (f"ip link set lo up && ip route add local {SERVICE_CIDR} dev lo && "
                  "ip route add local 10.244.0.0/16 dev lo && echo ready && exec sleep 3600")
        self.proc = subprocess.Popen(["unshare", "--net", "--", "sh", "-c", script], stdout=subprocess.PIPE)
        assert self.proc.stdout is not None and self.proc.stdout.readline().strip() == b"ready"
        self.path = f"/proc/{self.proc.pid}/ns/net"

    def run(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(["nsenter", f"--net={self.path}", "--", sys.executable, __file__, *args],
                                stdout=subprocess.PIPE, text=True)

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()


def _median(runs: list[dict]) -> dict:
    """The median of every figure over the runs."""
    def med(values: list[float]) -> float:
        return sorted(values)[len(values) // 2]

    first = runs[0]
    return {name: {key: (med([r[name][key] for r in runs]) if not isinstance(value, dict) else
                         {k: med([r[name][key][k] for r in runs]) for k in value})
                   for key, value in figures.items()} for name, figures in first.items()}


def _run_client(proc: subprocess.Popen[str]) -> dict:
    out, _ = proc.communicate(timeout=600)
    return json.loads(out)


def _fmt(results: dict, name: str) -> str:
    r = results[name]
    return (f"{r['throughput']:7.0f} MiB/s | paced p50 {r['paced']['p50']:.2f} p99 {r['paced']['p99']:.2f} ms | "
            f"saturated p50 {r['saturated']['p50']:.2f} p99 {r['saturated']['p99']:.2f} ms")


async def programming(kube, netns_path: str, node_ip: str) -> tuple[float, float, int]:
    """(seconds to program 1,000 Services x 10 endpoints from start, ms for an endpoint change, listeners)."""
    from mini_kube.client import ApiClient, Connection, ResourceRef
    from mini_kube.proxy.server import ProxyServer

    services = ResourceRef("", "v1", "services")
    slices = ResourceRef("discovery.k8s.io", "v1", "endpointslices")
    setup = ApiClient(Connection.from_kubeconfig(kube.kubeconfig))

    async def one(i: int) -> None:
        await setup.create(services, {"metadata": {"name": f"s{i}"}, "spec": {
            "type": "NodePort", "ports": [{"port": 80, "targetPort": 8080}]}}, "bench")
        await setup.create(slices, {"metadata": {"name": f"s{i}-a", "labels": {"kubernetes.io/service-name": f"s{i}"}},
                                    "addressType": "IPv4", "ports": [{"name": "", "port": 8080, "protocol": "TCP"}],
                                    "endpoints": [{"addresses": [f"10.244.{2 + j}.{i % 250 + 1}"]}
                                                  for j in range(10)]}, "bench")

    await setup.create(ResourceRef("", "v1", "namespaces", namespaced=False), {"metadata": {"name": "bench"}})
    for start in range(0, 1000, 50):
        await asyncio.gather(*(one(i) for i in range(start, min(start + 50, 1000))))
    client = ApiClient(Connection.from_kubeconfig(kube.kubeconfig))
    proxy = ProxyServer(client, "bench-node", node_ip, netns_path, healthz_port=0)
    started = time.perf_counter()
    await proxy.start()
    cold = time.perf_counter() - started
    listeners = len(proxy.listeners())
    # an endpoint change: from the API write's answer to the balancer holding the new endpoint
    body = await setup.get(slices, "s500-a", "bench")
    body["endpoints"] = body["endpoints"][:9] + [{"addresses": ["10.244.250.250"]}]
    state = proxy._states["bench/s500"][("", "TCP")]
    await setup.replace(slices, body, "bench")
    written = time.perf_counter()
    while not any(e.ip == "10.244.250.250" for e in state.balancer.internal):
        await asyncio.sleep(0.0005)
    change = (time.perf_counter() - written) * 1000
    await proxy.stop()
    await client.close()
    await setup.close()
    return cold, change, listeners


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--backend":
        asyncio.run(backend(sys.argv[2], int(sys.argv[3])))
        return
    if len(sys.argv) > 1 and sys.argv[1] == "--client":
        targets = {name: (ip, int(port)) for name, ip, port in (t.split(",") for t in sys.argv[2:])}
        print(json.dumps(asyncio.run(client(targets))))
        return
    if os.geteuid() != 0:
        print("proxy bench: needs root (it makes a network namespace)")
        return
    from mini_kube.client import ResourceRef

    from mini_kube.testing import MiniKube

    block = f"127.{random.randint(100, 250)}.{random.randint(0, 255)}"
    node_ip = f"{block}.10"
    netns = Netns()
    procs: list[subprocess.Popen] = []
    try:
        with MiniKube(controllers=False, service_cidr=SERVICE_CIDR) as kube:
            back = netns.run("--backend", BACKEND_IP, str(BACKEND_PORT))
            procs.append(back)
            assert back.stdout is not None and back.stdout.readline().strip() == "ready"
            svc = kube.client.create(ResourceRef("", "v1", "services"), {"metadata": {"name": "web"}, "spec": {
                "type": "NodePort", "ports": [{"port": 80, "targetPort": BACKEND_PORT}]}}, "default")
            kube.client.create(ResourceRef("discovery.k8s.io", "v1", "endpointslices"), {
                "metadata": {"name": "web-a", "labels": {"kubernetes.io/service-name": "web"}},
                "addressType": "IPv4", "ports": [{"name": "", "port": BACKEND_PORT, "protocol": "TCP"}],
                "endpoints": [{"addresses": [BACKEND_IP]}]}, "default")
            proxy = subprocess.Popen([sys.executable, "-m", "mini_kube.cli", "proxy", "--node", "n1",
                                      "--kubeconfig", kube.kubeconfig, "--node-ip", node_ip, "--netns", netns.path,
                                      "--healthz-port", "0"], stdout=subprocess.PIPE, text=True)
            procs.append(proxy)
            assert proxy.stdout is not None and "ready" in proxy.stdout.readline()
            cluster_ip, node_port = svc["spec"]["clusterIP"], svc["spec"]["ports"][0]["nodePort"]
            runs: list[dict] = []
            for _ in range(ROUNDS):  # interleaved, so a busy moment on the machine hits every path alike
                inside = _run_client(netns.run("--client", f"direct,{BACKEND_IP},{BACKEND_PORT}",
                                               f"clusterip,{cluster_ip},80"))
                host = subprocess.Popen([sys.executable, __file__, "--client", f"nodeport,{node_ip},{node_port}"],
                                        stdout=subprocess.PIPE, text=True)
                runs.append({**inside, **_run_client(host)})
            results = _median(runs)
            proxy.terminate()
            proxy.wait(10)
            cold, change, listeners = kube.run(programming(kube, netns.path, f"{block}.11"), timeout=300)
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        netns.close()
    direct = results["direct"]
    print(f"kube-proxy bench (1 MiB transfers, 4 at a time; 64-byte requests over 100 connections; "
          f"medians of {ROUNDS} interleaved runs)")
    for name in ("direct", "clusterip", "nodeport"):
        print(f"  {name:9} {_fmt(results, name)}")
    for name in ("clusterip", "nodeport"):
        r = results[name]
        print(f"  {name}: throughput {r['throughput'] / direct['throughput']:.2f}x direct (target >= 0.5); "
              f"added p99 paced {r['paced']['p99'] - direct['paced']['p99']:+.2f} ms (target < 1 ms), "
              f"saturated {r['saturated']['p99'] - direct['saturated']['p99']:+.2f} ms")
    print(f"  1,000 Services x 10 endpoints: {listeners} listeners programmed {cold:.2f} s after start "
          f"(target < 1 s); an endpoint change reached the proxy {change:.1f} ms after its write")


if __name__ == "__main__":
    main()
