"""Where the test suite's time goes: a pytest plugin that records, in each pytest-xdist worker, every test's wall
time and CPU time (the worker's own, which holds the in-process clusters, and its finished children's: kubectl,
`mini-kube` commands, Pods, etcd), and a report of those records. CPU seconds hold on a loaded machine; wall
seconds only on a quiet one (`uptime` under 1.5).

    PYTHONPATH=. .venv/bin/pytest -q -p no:randomly -n 3 --dist loadscope -p bench.suite_profile
    .venv/bin/python bench/suite_profile.py [DIR] [--top 30]

The records go to $SUITE_PROFILE_DIR (default /tmp/mini-kube-suite-profile), one JSON-lines file per worker. The
report: the CPU of start-up, collection and tests; the modules by CPU (a child's CPU counts when it is waited
for, so a fixture's server counts where it stops); each worker's first and last modules, with when it finished
(a long module last on one worker is wall time the others spend idle); the tests that waited longest beyond their
CPU (sleeps, timers, timeouts waited out)."""

from __future__ import annotations

import argparse
import json
import os
import resource
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

DEFAULT_DIR = "/tmp/mini-kube-suite-profile"


def cpu_seconds() -> tuple[float, float]:
    """This process's CPU seconds, and those of its children that have been waited for."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


class Recorder:
    """Appends one JSON line per event to this worker's file."""

    def __init__(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        self.file = (directory / f"{worker}.jsonl").open("a", buffering=1)

    def write(self, **event: Any) -> None:
        self.file.write(json.dumps(event) + "\n")


RECORDER = Recorder(Path(os.environ.get("SUITE_PROFILE_DIR", DEFAULT_DIR)))


def pytest_sessionstart(session: pytest.Session) -> None:
    own, children = cpu_seconds()
    RECORDER.write(event="start", time=time.time(), own=own, children=children)


@pytest.hookimpl(wrapper=True)
def pytest_collection(session: pytest.Session) -> Iterator[None]:
    began, (own, children) = time.time(), cpu_seconds()
    try:
        return (yield)
    finally:
        own_after, children_after = cpu_seconds()
        RECORDER.write(event="collection", start=began, end=time.time(), own=own_after - own,
                       children=children_after - children)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    began, (own, children) = time.time(), cpu_seconds()
    try:
        return (yield)
    finally:
        own_after, children_after = cpu_seconds()
        RECORDER.write(event="test", id=item.nodeid, start=began, end=time.time(), own=own_after - own,
                       children=children_after - children)


def pytest_sessionfinish(session: pytest.Session) -> None:
    own, children = cpu_seconds()
    RECORDER.write(event="end", time=time.time(), own=own, children=children)


def read(directory: Path) -> dict[str, list[dict[str, Any]]]:
    """Each worker's events, in order."""
    return {path.stem: [json.loads(line) for line in path.open()] for path in sorted(directory.glob("gw*.jsonl"))}


def report(workers: dict[str, list[dict[str, Any]]], top: int) -> None:
    tests = [e for events in workers.values() for e in events if e["event"] == "test"]
    starts = [e for events in workers.values() for e in events if e["event"] == "start"]
    collections = [e for events in workers.values() for e in events if e["event"] == "collection"]
    own, children = sum(e["own"] for e in tests), sum(e["children"] for e in tests)
    print(f"{len(tests)} tests on {len(workers)} workers: {own + children:.1f} CPU-s in tests ({own:.1f} in the "
          f"workers, {children:.1f} in their children); start-up {sum(e['own'] for e in starts):.1f}, collection "
          f"{sum(e['own'] for e in collections):.1f}")
    modules: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0, 0.0])
    for e in tests:
        row = modules[e["id"].split("::")[0]]
        row[0] += e["own"]
        row[1] += e["children"]
        row[2] += e["end"] - e["start"]
        row[3] += 1
    print(f"\nmodules by CPU (top {top}):\n{'CPU-s':>8}{'worker':>8}{'children':>9}{'wall-s':>8}{'tests':>6}  module")
    for name, (mine, theirs, wall, count) in sorted(modules.items(), key=lambda kv: -kv[1][0] - kv[1][1])[:top]:
        print(f"{mine + theirs:8.1f}{mine:8.1f}{theirs:9.1f}{wall:8.1f}{count:6.0f}  {name}")
    origin = min(e["time"] for e in starts) if starts else min(e["start"] for e in tests)
    print("\neach worker's modules, first and last (seconds from the first worker's start):")
    for worker, events in workers.items():
        runs: list[list[Any]] = []
        for e in (e for e in events if e["event"] == "test"):
            name = e["id"].split("::")[0]
            if runs and runs[-1][0] == name:
                runs[-1][2] = e["end"]
            else:
                runs.append([name, e["start"], e["end"]])
        shown = runs[:3] + [["...", 0, 0]] + runs[-4:] if len(runs) > 7 else runs
        print(f"  {worker}: {len(runs)} modules, done at {runs[-1][2] - origin:.0f} s" if runs else f"  {worker}: -")
        for name, began, ended in shown:
            print("      ..." if name == "..." else f"    {began - origin:6.0f} {ended - origin:6.0f}  {name}")
    print(f"\ntests by wall time beyond their CPU time (top {top}; on a quiet machine, time spent waiting):")
    for e in sorted(tests, key=lambda e: -(e["end"] - e["start"] - e["own"] - e["children"]))[:top]:
        wall, used = e["end"] - e["start"], e["own"] + e["children"]
        print(f"{wall - used:8.1f} s waiting of {wall:6.1f} s ({used:5.1f} CPU-s)  {e['id']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("directory", nargs="?", default=os.environ.get("SUITE_PROFILE_DIR", DEFAULT_DIR))
    parser.add_argument("--top", type=int, default=30)
    args = parser.parse_args()
    report(read(Path(args.directory)), args.top)


if __name__ == "__main__":
    main()
