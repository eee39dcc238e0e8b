"""`mini-kube serve` start-up as a newcomer meets it: from spawning the process (the README's command, over TLS
with its node, controllers, scheduler, cloud controller and DNS) to `/readyz` answering 200, and to the
"ready at" line (every component started), on a fresh data dir, on the data dir of an earlier run (keys and
bootstrapped objects there) and with `--data-dir :memory:`. Against a floor measured in the same run: the same
interpreter importing aiohttp and answering `/readyz` over plain HTTP. The issue's goal is 0.3 s to ready on a quiet
machine; the ratio to the floor is the figure that holds on a loaded one.

    .venv/bin/python bench/serve_ready_bench.py [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FLOOR = """
import sys
from aiohttp import web
app = web.Application()
app.router.add_get("/readyz", lambda request: web.Response(text="ok"))
web.run_app(app, host="127.0.0.1", port=int(sys.argv[1]), print=None)
"""
# Servers run as installed programs do: with Python's bytecode cache (this machine's environment turns it off).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
UNVERIFIED = ssl.create_default_context()
UNVERIFIED.check_hostname = False
UNVERIFIED.verify_mode = ssl.CERT_NONE


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def ready(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/readyz", timeout=2, context=UNVERIFIED) as response:
            return response.status == 200
    except (OSError, urllib.error.URLError):
        return False


def cpu_seconds(pid: int) -> float:
    """The CPU time (user + system) process `pid` has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def time_to_ready(argv: list[str], url: str, ready_line: bool) -> tuple[float, float, float]:
    """Seconds from spawn to /readyz 200, the process's CPU seconds by then, and seconds to the "ready at" line
    (0 when not asked for). On a loaded machine the wall times stretch with the load, the CPU time much less."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=ROOT, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        while not ready(url):
            if proc.poll() is not None or time.perf_counter() - started > 60:
                raise RuntimeError(f"{argv[:4]} did not become ready")
            time.sleep(0.002)
        readyz = time.perf_counter() - started
        cpu = cpu_seconds(proc.pid)
        line = 0.0
        if ready_line:
            assert proc.stdout is not None
            while "ready at" not in proc.stdout.readline():
                pass
            line = time.perf_counter() - started
        return readyz, cpu, line
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def serve_argv(data_dir: str, port: int, kubeconfig: str) -> list[str]:
    return [sys.executable, "-m", "mini_kube.cli", "serve", "--data-dir", data_dir, "--port", str(port),
            "--dns-port", "0", "--kubeconfig", kubeconfig]


KINDS = ("fresh data dir", "existing data dir", ":memory:")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    floors: list[float] = []
    floor_cpus: list[float] = []
    readyz: dict[str, list[float]] = {kind: [] for kind in KINDS}
    cpus: dict[str, list[float]] = {kind: [] for kind in KINDS}
    lines: dict[str, list[float]] = {kind: [] for kind in KINDS}
    with tempfile.TemporaryDirectory() as tmp:
        for run in range(args.runs + 1):  # the first run of each fills the bytecode cache and is not counted
            port = free_port()
            floor, floor_cpu, _ = time_to_ready([sys.executable, "-c", FLOOR, str(port)], f"http://127.0.0.1:{port}", False)
            dirs = {KINDS[0]: f"{tmp}/run{run}", KINDS[1]: f"{tmp}/run{run}", KINDS[2]: ":memory:"}
            for kind in KINDS:  # the existing data dir is the one the fresh run has just made
                port = free_port()
                first, cpu, line = time_to_ready(serve_argv(dirs[kind], port, f"{tmp}/kubeconfig{run}"),
                                            f"https://127.0.0.1:{port}", True)
                if run:
                    readyz[kind].append(first)
                    cpus[kind].append(cpu)
                    lines[kind].append(line)
            if run:
                floors.append(floor)
                floor_cpus.append(floor_cpu)
    floor, floor_cpu = statistics.median(floors), statistics.median(floor_cpus)
    print(f"{'':46}{'median (s)':>12}{'ratio':>8}{'CPU (s)':>10}{'ratio':>8}")
    print(f"{'floor: python + aiohttp, /readyz':46}{floor:12.3f}{1:8.2f}{floor_cpu:10.3f}{1:8.2f}")
    for kind in KINDS:
        first, cpu, line = (statistics.median(x[kind]) for x in (readyz, cpus, lines))
        print(f"{'serve, ' + kind + ': /readyz 200 over TLS':46}{first:12.3f}{first / floor:8.2f}{cpu:10.3f}"
              f"{cpu / floor_cpu:8.2f}" + ("  goal 0.3 s quiet" if kind == KINDS[0] else ""))
        print(f"{'serve, ' + kind + ': ready at (all)':46}{line:12.3f}{line / floor:8.2f}")
    print(f"(runs {args.runs}, cpu count {os.cpu_count()}, load {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
