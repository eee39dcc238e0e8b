"""The garbage collector's policy for a long-running server process.

CPython's cyclic collector walks every tracked container of a generation; a full collection walks them all. A
server that holds the cluster's objects decoded (the API server's watch cache, the controllers' working sets)
spent a large share of its CPU in full collections that found nothing to free: start-up's objects (modules,
schemas, the OpenAPI document) live as long as the process, and most of the rest are cached state. And a
collection holds the event loop for as long as it walks: no request is answered meanwhile (issue #28: `kubectl
get nodes` took up to 11.6 s at 10,000 Pods, a full collection of some 3 million objects).

So, once a component has started, the old generation is permanent: what start-up left is frozen (never walked
again), and so is whatever survives a collection of the middle generation, at once. No collection walks the heap
then: a young collection walks the young generation, one of the middle generation that and what the last
`MIDDLE_THRESHOLD` young collections let through, and the old generation is always empty, so every pause is
bounded by what was allocated lately, whatever the cluster's size. The young generation is collected every
`YOUNG_THRESHOLD` allocations, counted net of frees (where a cluster's objects are replaced by new versions, each
write frees the one it replaces, so the young generation holds several times that many objects when it is
collected): fewer short-lived objects are caught alive and walked than with CPython's 700. Measured with 1,000
replicas on 20 nodes (docs/benchmarks.md), the collector's CPU is what it was with freezing only after a full
collection (3.4 s of 63 s) and the middle generation's longest pause halves (0.16 s against 0.30 s of CPU);
lower young thresholds bound the young pauses further but cost two to three times the collector's CPU
(11.3 s against 3.3 s with 2,000 and 5), as they catch more objects alive.

The price: an object frozen this way that later ends up in a reference cycle is never freed (reference
counting still frees everything else), so long-lived per-object state must not be left in cycles when it is
let go (the kubelet's pod workers let go of their tasks when stopped: tests/kubelet/test_pod_worker.py). One
such cycle per connection is Python 3.11's own: an asyncio socket transport keeps its read callback, a method of
its own, after its connection is lost, so every connection that lived through a collection or two (a kubectl
call, at a busy server) was kept, some 1 KiB each; CPython 3.12 lets it go on close (python/cpython#100348), and
`release_transport_cycles` does the same on 3.11."""

from __future__ import annotations

import gc
import sys
from asyncio import selector_events
from typing import Any

YOUNG_THRESHOLD = 20_000  # allocations (net of frees) between young collections (CPython's default: 700)
MIDDLE_THRESHOLD = 2  # young collections between collections of the middle generation (CPython's default: 10)


_paused = {"by start-up": False}


def pause_during_start() -> None:
    """No collections while starting: importing a server's modules and building its tables makes hundreds of
    thousands of objects and next to no garbage, and the collections they set off walked them all again
    (a tenth of `serve`'s CPU to its first /readyz). `settle_after_start` turns them back on."""
    _paused["by start-up"] = gc.isenabled()
    gc.disable()


def settle_after_start() -> None:
    """Freeze what start-up made, space the collections out and resume them if `pause_during_start` paused them
    (instant: nothing is walked now)."""
    gc.freeze()
    if _paused["by start-up"]:
        _paused["by start-up"] = False
        gc.enable()
    old = gc.get_threshold()[2]
    gc.set_threshold(YOUNG_THRESHOLD, MIDDLE_THRESHOLD, old)
    if freeze_survivors not in gc.callbacks:
        gc.callbacks.append(freeze_survivors)
    release_transport_cycles()


def freeze_survivors(phase: str, info: dict[str, int]) -> None:
    """After a collection of the middle or old generation (a `gc.callbacks` entry): freeze what survived it."""
    if phase == "stop" and info["generation"] >= 1:
        gc.freeze()


def release_transport_cycles() -> None:
    """On Python 3.11: a socket transport drops its read callback (a method of its own) once its connection is
    lost, so reference counting frees it (CPython 3.12's fix for python/cpython#100348, which 3.11 lacks)."""
    transport: Any = getattr(selector_events, "_SelectorSocketTransport")  # noqa: B009 (typeshed lacks it)
    if sys.version_info >= (3, 12) or getattr(transport, "releases_read_callback", False):
        return
    lose = transport._call_connection_lost

    def call_connection_lost(self: Any, exc: BaseException | None) -> None:
        try:
            lose(self, exc)
        finally:
            self._read_ready_cb = None

    transport._call_connection_lost = call_connection_lost
    transport.releases_read_callback = True
