"""A timeline of a cluster's state while a test waits: named probes sampled in a background thread, each change
kept with the second it was seen, so a wait that times out can say which link of a chain stalled, and since when."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

Probe = Callable[[], Any]


class Timeline:
    """`with Timeline({"name": probe, ...}) as t:` samples every probe each `interval` seconds until the block
    ends; `t.report()` lists every change (a probe that raised records the error as its value)."""

    def __init__(self, probes: dict[str, Probe], interval: float = 0.5) -> None:
        self.probes = probes
        self.interval = interval
        self.changes: list[tuple[float, str, Any]] = []
        self._last: dict[str, Any] = {}
        self._started = time.monotonic()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="timeline", daemon=True)

    def __enter__(self) -> Timeline:
        self._started = time.monotonic()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(10)

    def sample(self) -> None:
        for name, probe in self.probes.items():
            try:
                value = probe()
            except Exception as exc:  # noqa: BLE001 - an unreachable link is a fact worth recording
                value = f"error: {type(exc).__name__}: {exc}"
            if name not in self._last or self._last[name] != value:
                self._last[name] = value
                self.changes.append((time.monotonic() - self._started, name, value))

    def _run(self) -> None:
        while not self._stop.is_set():
            self.sample()
            self._stop.wait(self.interval)

    def report(self) -> str:
        """Every change, oldest first: `+12.5s name: value`."""
        self.sample()
        return "\n".join(f"+{at:.1f}s {name}: {value}" for at, name, value in self.changes)
