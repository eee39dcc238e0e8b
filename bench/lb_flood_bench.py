"""A LoadBalancer flooded with connections, and kubectl meanwhile (issue #24: "with 20,000 connections held
against one LoadBalancer, `kubectl get pods` still answers within 1 s").

`mini-kube serve` (one process node) runs a Pod that accepts and holds TCP connections behind a LoadBalancer
Service. `kubectl get pods -A` is timed 15 times before the flood (the baseline); then 8 client processes, each
from an address of its own on 127.0.0.0/8, open 2,500 connections each to the load balancer's address and hold
them; kubectl is timed 15 times again while they are held. Prints how many connections the load balancer held
and how many it refused (reset at once: its budgets, docs/serving.md), and kubectl's p50/max in both phases with
the ratio flooded/baseline.

    .venv/bin/python bench/lb_flood_bench.py
"""

from __future__ import annotations

import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mini_kube.network.relay import raise_open_files_limit  # noqa: E402

CLIENTS, PER_CLIENT, SAMPLES = 8, 2500, 15
# the Pod's server: accepts and holds every connection (it reads until the peer closes)
HOLDER = ("import asyncio\n"
          "async def hold(r, w):\n"
          "    while await r.read(4096): pass\n"
          "    w.close()\n"
          "async def main():\n"
          "    s = await asyncio.start_server(hold, '0.0.0.0', 8080, backlog=4096)\n"
          "    await s.serve_forever()\n"
          "asyncio.run(main())\n")
MANIFEST = {"apiVersion": "v1", "kind": "List", "items": [
    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "holder", "labels": {"app": "holder"}},
     "spec": {"containers": [{"name": "holder", "image": "busybox:1.36", "command": ["python3", "-c", HOLDER],
                              "readinessProbe": {"tcpSocket": {"port": 8080}, "periodSeconds": 1}}]}},
    {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "flooded"},
     "spec": {"type": "LoadBalancer", "selector": {"app": "holder"},
              "ports": [{"port": 80, "targetPort": 8080}]}}]}


def flood(ip: str, port: int, source: str, count: int) -> None:
    """A client process: `count` connections from `source`, held until stdin closes; prints held/refused."""
    raise_open_files_limit()
    socks = []
    failed = 0
    for _ in range(count):
        sock = socket.socket()
        sock.bind((source, 0))
        sock.settimeout(5)
        try:
            sock.connect((ip, port))
            sock.setblocking(False)
            socks.append(sock)
        except OSError:
            failed += 1
            sock.close()
    time.sleep(2)  # connections past a budget are reset at once after their accept
    held = 0
    for sock in socks:
        try:
            held += sock.recv(1) != b""  # b"": closed by the balancer
        except BlockingIOError:
            held += 1
        except OSError:
            pass
    print(json.dumps({"held": held, "refused": count - held, "failed_to_connect": failed}), flush=True)
    sys.stdin.read()  # hold until the bench is done


def kubectl_times(kubeconfig: str) -> list[float]:
    times = []
    for _ in range(SAMPLES):
        started = time.perf_counter()
        subprocess.run(["kubectl", "--kubeconfig", kubeconfig, "get", "pods", "-A"], check=True,
                       capture_output=True, timeout=120)
        times.append(time.perf_counter() - started)
    return times


def summary(times: list[float]) -> str:
    return f"p50 {statistics.median(times):.3f} s, max {max(times):.3f} s"


def main() -> None:
    raise_open_files_limit()
    data = tempfile.mkdtemp(prefix="mk-flood-")
    server = subprocess.Popen([sys.executable, "-m", "mini_kube.cli", "serve", "--data-dir", data, "--port", "0",
                               "--nodes", "1", "--node-runtime", "process", "--no-dns"],
                              cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    clients: list[subprocess.Popen[str]] = []
    try:
        assert server.stdout is not None and "ready" in server.stdout.readline()
        kubeconfig = f"{data}/kubeconfig"

        def kubectl(*args: str, stdin: str | None = None) -> str:
            return subprocess.run(["kubectl", "--kubeconfig", kubeconfig, *args], input=stdin, check=True,
                                  capture_output=True, text=True, timeout=120).stdout

        kubectl("apply", "-f", "-", stdin=json.dumps(MANIFEST))
        kubectl("wait", "--for=condition=Ready", "pod/holder", "--timeout=120s")
        ip = ""
        deadline = time.monotonic() + 60
        while not ip and time.monotonic() < deadline:
            ip = kubectl("get", "service", "flooded", "-o", "jsonpath={.status.loadBalancer.ingress[0].ip}")
            time.sleep(0.2)
        assert ip, "the load balancer got no address"
        print(f"load balancer {ip}:80 in front of one Pod; server pid {server.pid}")
        baseline = kubectl_times(kubeconfig)
        print(f"kubectl get pods -A, quiet: {summary(baseline)}")
        started = time.perf_counter()
        for i in range(CLIENTS):
            clients.append(subprocess.Popen([sys.executable, __file__, "--flood", ip, "80", f"127.0.9.{i + 1}",
                                             str(PER_CLIENT)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                            text=True))
        counts = [json.loads(c.stdout.readline()) for c in clients if c.stdout is not None]
        held = sum(c["held"] for c in counts)
        refused = sum(c["refused"] + c["failed_to_connect"] for c in counts)
        print(f"{CLIENTS * PER_CLIENT} connections opened in {time.perf_counter() - started:.1f} s: "
              f"{held} held by the load balancer, {refused} refused")
        flooded = kubectl_times(kubeconfig)
        print(f"kubectl get pods -A, while they are held: {summary(flooded)} "
              f"(ratio to quiet: p50 {statistics.median(flooded) / statistics.median(baseline):.2f}x, "
              f"max {max(flooded) / max(baseline):.2f}x)")
        fds = len(os.listdir(f"/proc/{server.pid}/fd"))
        print(f"server's open descriptors while flooded: {fds} of {resource.getrlimit(resource.RLIMIT_NOFILE)[1]}")
    finally:
        for client in clients:
            client.kill()
            client.wait()
        server.terminate()
        server.wait(30)
        subprocess.run(["rm", "-rf", data], check=False)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--flood"]:
        flood(sys.argv[2], int(sys.argv[3]), sys.argv[4], int(sys.argv[5]))
    else:
        main()
