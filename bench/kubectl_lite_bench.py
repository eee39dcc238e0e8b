"""kubectl-lite start-up: `kubectl-lite get pods` against real kubectl's `kubectl get pods` on the same local
server (`mini-kube serve` over HTTPS, 20 pods), each run as a fresh process with a warm discovery cache.

    .venv/bin/python bench/kubectl_lite_bench.py [--runs 20]
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _timed(command: list[str], env: dict[str, str], runs: int) -> list[float]:
    subprocess.run(command, env=env, capture_output=True, check=True)  # warm caches (discovery, bytecode)
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(command, env=env, capture_output=True, check=True)
        times.append(time.perf_counter() - started)
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "state"
        server = subprocess.Popen([sys.executable, "-m", "mini_kube.cli", "serve", "--data-dir", str(data),
                                   "--port", str(_port()), "--no-controllers"], stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True)
        try:
            assert "ready" in server.stdout.readline()
            kubeconfig = str(data / "kubeconfig")
            env = {**os.environ, "HOME": tmp, "KUBECTL_LITE_CACHE_DIR": str(Path(tmp) / "cache")}
            pods = "\n---\n".join(
                f'{{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"p{i}"}},'
                f'"spec":{{"containers":[{{"name":"c","image":"i"}}]}}}}' for i in range(20))
            subprocess.run([sys.executable, "-m", "mini_kube.kubectl_lite.cli", "--kubeconfig", kubeconfig, "create", "-f",
                            "-"], input=pods, text=True, env=env, capture_output=True, check=True)
            lite_cmd = [shutil.which("kubectl-lite", path=str(Path(sys.executable).parent)) or "kubectl-lite",
                        "--kubeconfig", kubeconfig, "get", "pods"]
            lite = _timed(lite_cmd, env, args.runs)
            kubectl = shutil.which("kubectl")
            real = _timed([kubectl, "--kubeconfig", kubeconfig, "get", "pods"], env, args.runs) if kubectl else []
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(15)
    print(f"kubectl-lite get pods: median {statistics.median(lite) * 1000:.0f} ms, "
          f"max {max(lite) * 1000:.0f} ms ({args.runs} runs; target < 300 ms)")
    if real:
        print(f"kubectl get pods:      median {statistics.median(real) * 1000:.0f} ms, "
              f"max {max(real) * 1000:.0f} ms")
        print(f"ratio kubectl-lite / kubectl: {statistics.median(lite) / statistics.median(real):.2f}")


if __name__ == "__main__":
    main()
