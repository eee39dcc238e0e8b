"""The garbage collector's policy for a long-running server process.

CPython's cyclic collector walks every tracked container of a generation; a full collection walks them all. A
server that holds the cluster's objects decoded (the API server's watch cache, the controllers' working sets)
spends a large share of its CPU in full collections that find nothing to free: the start-up's objects (modules,
schemas, the OpenAPI document) live as long as the process, and most of the rest are cached state. So, once a
component has started: what start-up left is frozen (never walked again; its little garbage is kept), and the young
generation is collected every `YOUNG_THRESHOLD` allocations rather than every 700, so fewer short-lived request
objects are promoted into the old generations, whose growth is what triggers full collections."""

from __future__ import annotations

import gc

YOUNG_THRESHOLD = 20_000  # allocations (net of frees) between young collections (CPython's default: 700)


def settle_after_start() -> None:
    """Freeze what start-up made and space the collections out (instant: nothing is walked now)."""
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, old)
