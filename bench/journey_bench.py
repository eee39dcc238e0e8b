"""The whole outside path against the same traffic sent straight to the Pod, in one run (needs root: the backend
lives in a cluster network namespace made here): load balancer (the fake cloud's, its own process) -> the
node's NodePort (kube-proxy, its own process) -> the backend; and the NodePort alone.

- throughput of 1 MiB transfers (a new connection each, 4 at a time), and its ratio to direct (target >= 0.5);
  the CPU every process on the path spends per MiB; and, where a C compiler is at hand, the same two hops through
  relays of the same design written in C (bench/floor_relay.c), the floor of any userspace relay;
- small requests over 100 concurrent connections, paced (each connection every ~20 ms) and saturated (back to
  back): p50/p99, and the p99 added to direct (target < 1 ms).

Backend, proxy, load balancer and clients are separate processes; the clients and backend are those of
bench/proxy_bench.py, the load balancer that of bench/ccm_bench.py; medians of 5 interleaved runs.

    .venv/bin/python bench/journey_bench.py
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import proxy_bench as pb  # noqa: E402

ROUNDS = 5
FLOOR_PORT = 30999


def start_floor(netns_path: str, node_ip: str, lb_ip: str, workdir: str) -> list[subprocess.Popen[str]]:
    """The same outside path through two relays written in C (bench/floor_relay.c, built here; none without a C
    compiler): a load balancer on `lb_ip`:8080 -> a "NodePort" on `node_ip` -> the backend in the namespace."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        return []
    binary = str(Path(workdir) / "floor_relay")
    subprocess.run([compiler, "-O2", "-o", binary, str(HERE / "floor_relay.c")], check=True)
    relays = [subprocess.Popen([binary, node_ip, str(FLOOR_PORT), pb.BACKEND_IP, str(pb.BACKEND_PORT), netns_path],
                               stdout=subprocess.PIPE, text=True),
              subprocess.Popen([binary, lb_ip, "8080", node_ip, str(FLOOR_PORT)], stdout=subprocess.PIPE, text=True)]
    for relay in relays:
        assert relay.stdout is not None and relay.stdout.readline().strip() == "ready"
    return relays


def main() -> None:
    if os.geteuid() != 0:
        print("journey bench: needs root (it makes a network namespace)")
        return
    from mini_kube.client import ResourceRef

    from mini_kube.testing import MiniKube

    block = f"127.{random.randint(100, 250)}.{random.randint(0, 255)}"
    node_ip, lb_ip = f"{block}.10", f"{block}.100"
    netns = pb.Netns()
    procs: list[subprocess.Popen[str]] = []
    workdir = tempfile.mkdtemp(prefix="journey-bench-")
    try:
        with MiniKube(controllers=False, service_cidr=pb.SERVICE_CIDR) as kube:
            back = netns.run("--backend", pb.BACKEND_IP, str(pb.BACKEND_PORT))
            procs.append(back)
            assert back.stdout is not None and back.stdout.readline().strip() == "ready"
            svc = kube.client.create(ResourceRef("", "v1", "services"), {"metadata": {"name": "web"}, "spec": {
                "type": "NodePort", "ports": [{"port": 80, "targetPort": pb.BACKEND_PORT}]}}, "default")
            kube.client.create(ResourceRef("discovery.k8s.io", "v1", "endpointslices"), {
                "metadata": {"name": "web-a", "labels": {"kubernetes.io/service-name": "web"}},
                "addressType": "IPv4", "ports": [{"name": "", "port": pb.BACKEND_PORT, "protocol": "TCP"}],
                "endpoints": [{"addresses": [pb.BACKEND_IP]}]}, "default")
            node_port = svc["spec"]["ports"][0]["nodePort"]
            proxy = subprocess.Popen([sys.executable, "-m", "mini_kube.cli", "proxy", "--node", "n1",
                                      "--kubeconfig", kube.kubeconfig, "--node-ip", node_ip, "--netns", netns.path,
                                      "--healthz-port", "0"], stdout=subprocess.PIPE, text=True)
            procs.append(proxy)
            assert proxy.stdout is not None and "ready" in proxy.stdout.readline()
            lb = subprocess.Popen([sys.executable, str(HERE / "ccm_bench.py"), "lb", lb_ip, "8080", node_ip,
                                   str(node_port)], stdout=subprocess.PIPE, text=True)
            procs.append(lb)
            assert lb.stdout is not None and lb.stdout.readline().strip() == "ready"
            floor = start_floor(netns.path, f"{block}.12", f"{block}.102", workdir)
            procs += floor
            watch = f"backend={back.pid},proxy={proxy.pid},lb={lb.pid}"
            if floor:
                watch += f",c-node={floor[0].pid},c-lb={floor[1].pid}"
            os.environ["BENCH_WATCH"] = watch  # for the clients
            targets = [f"nodeport,{node_ip},{node_port}", f"loadbalancer,{lb_ip},8080"]
            if floor:
                targets.append(f"c-relays,{block}.102,8080")
            runs: list[dict] = []
            for _ in range(ROUNDS):  # interleaved, so a busy moment on the machine hits every path alike
                inside = pb._run_client(netns.run("--client", f"direct,{pb.BACKEND_IP},{pb.BACKEND_PORT}"))
                host = subprocess.Popen([sys.executable, pb.__file__, "--client", *targets], stdout=subprocess.PIPE,
                                        text=True)
                runs.append({**inside, **pb._run_client(host)})
            results = pb._median(runs)
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        netns.close()
        shutil.rmtree(workdir, ignore_errors=True)
    direct = results["direct"]
    paths = [name for name in ("nodeport", "loadbalancer", "c-relays") if name in results]
    print(f"outside path bench (1 MiB transfers, 4 at a time; 64-byte requests over 100 connections; "
          f"medians of {ROUNDS} interleaved runs)")
    for name in ("direct", *paths):
        print(f"  {name:12} {pb._fmt(results, name)}")
    for name in paths:
        r = results[name]
        ratios = ", ".join(f"{run[name]['throughput'] / run['direct']['throughput']:.2f}" for run in runs)
        print(f"  {name}: throughput {r['throughput'] / direct['throughput']:.2f}x direct (target >= 0.5; by round "
              f"{ratios}); added p99 paced {r['paced']['p99'] - direct['paced']['p99']:+.2f} ms (target < 1 ms), "
              f"saturated {r['saturated']['p99'] - direct['saturated']['p99']:+.2f} ms")
    print("  CPU per MiB moved during the throughput runs (ms, every process on the path; cores: how many of the "
          "machine's were busy, anything else running included):")
    for name in ("direct", *paths):
        cpu = {k: v for k, v in results[name]["cpu"].items() if v >= 0.005}
        total = sum(cpu.values())
        print(f"    {name:12} " + " + ".join(f"{k} {v:.2f}" for k, v in cpu.items()) + f" = {total:.2f} ms"
              f" ({total / sum(direct['cpu'].values()):.2f}x direct); {results[name]['busy']['cores']:.1f} cores busy")
    if "c-relays" in results:
        print("  c-relays: the same load balancer + NodePort hops through two relays of the same design written in C "
              "(bench/floor_relay.c): what any userspace relay pays, without Python")


if __name__ == "__main__":
    main()
