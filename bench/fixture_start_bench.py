"""A test cluster's start as the pytest fixtures make them: `MiniKube()` (plain HTTP, :memory:, controllers and
scheduler) and `MiniKube(insecure_http=False)` (TLS, its own CA and keys, the default RBAC policy), each started
and stopped in one process; the first of each kind (imports) is left out. The issue's goal is under 0.1 s after
the first. Wall and CPU seconds (the CPU time holds on a loaded machine, the wall time stretches with the load).

    .venv/bin/python bench/fixture_start_bench.py [--runs 10]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from mini_kube.testing import MiniKube


def cpu() -> float:
    times = os.times()
    return times.user + times.system


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    print(f"{'':34}{'start wall (s)':>16}{'start CPU (s)':>16}{'stop wall (s)':>16}")
    for label, options in (("MiniKube() (plain HTTP)", {}), ("MiniKube(insecure_http=False)", {"insecure_http": False})):
        walls, cpus, stops = [], [], []
        for run in range(args.runs + 1):
            cluster = MiniKube(**options)
            wall, used = time.perf_counter(), cpu()
            cluster.start()
            wall, used = time.perf_counter() - wall, cpu() - used
            stop = time.perf_counter()
            cluster.stop()
            if run:
                walls.append(wall)
                cpus.append(used)
                stops.append(time.perf_counter() - stop)
        print(f"{label:34}{statistics.median(walls):16.3f}{statistics.median(cpus):16.3f}"
              f"{statistics.median(stops):16.3f}")
    print(f"(runs {args.runs} after the first, cpu count {os.cpu_count()}, load {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
