"""The garbage collector's policy for a long-running server process.

CPython's cyclic collector walks every tracked container of a generation; a full collection walks them all. A
server that holds the cluster's objects decoded (the API server's watch cache, the controllers' working sets)
spends a large share of its CPU in full collections that find nothing to free: the start-up's objects (modules,
schemas, the OpenAPI document) live as long as the process, and most of the rest are cached state. So, once a
component has started: what start-up left is frozen (never walked again; its little garbage is kept), and the young
generation is collected every `YOUNG_THRESHOLD` allocations rather than every 700, so fewer short-lived request
objects are promoted into the old generations.

A full collection also holds the event loop for as long as it walks: with 10,000 Pods (some 3 million tracked
objects, in one process with its nodes) one took seconds, during which no request was answered (issue #28:
`kubectl get nodes` up to 11.6 s). So what survives a full collection is frozen too: the next one walks only what
became old since, and its pause is bounded by what the cluster gained meanwhile, not by its size. Every pause is
then bounded by allocations, not by the heap: a young collection walks what the last `YOUNG_THRESHOLD` (x 10 for
the middle generation) allocations left, a full one what those promoted since the last. (At 20,000, a young
collection of the middle generation walked some 200,000 objects, 0.3-0.5 s of CPU; 2,000 bounded that to 0.11 s
but cost 1,000 replicas on 20 nodes 61% more CPU going down, 21.4 s against 13.1 s on a quiet machine, so 20,000
stays.) The price: an
object frozen this way that later ends up in a reference cycle is never freed (reference counting still frees
everything else), so long-lived per-object state must not be left in cycles when it is let go (the kubelet's pod
workers let go of their tasks when stopped: tests/kubelet/test_pod_worker.py)."""

from __future__ import annotations

import gc

YOUNG_THRESHOLD = 20_000  # allocations (net of frees) between young collections (CPython's default: 700)


def pause_during_start() -> None:
    """No collections while starting: importing a server's modules and building its tables makes hundreds of
    thousands of objects and next to no garbage, and the collections they set off walked them all again
    (a tenth of `serve`'s CPU to its first /readyz). `settle_after_start` turns them back on."""
    gc.disable()


def settle_after_start() -> None:
    """Freeze what start-up made, space the collections out and run them again if start-up paused them (instant:
    nothing is walked now)."""
    gc.freeze()
    gc.enable()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, old)
    if freeze_survivors not in gc.callbacks:
        gc.callbacks.append(freeze_survivors)


def freeze_survivors(phase: str, info: dict[str, int]) -> None:
    """After a full collection (a `gc.callbacks` entry): freeze what survived it."""
    if phase == "stop" and info["generation"] == 2:
        gc.freeze()
