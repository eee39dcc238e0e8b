"""The garbage collector's policy of a server process (mini_kube/gc_policy.py): once started, what start-up made
is frozen, out of every later collection, and young collections are spaced out, so a large cluster's cached
objects are walked far less often (issue #28: full collections took a third of a busy server's CPU)."""

from __future__ import annotations

import subprocess
import sys

PROBE = """
import gc, json
from mini_kube.apiserver.server import ApiServer  # start-up's modules: thousands of objects
before = len(gc.get_objects())
from mini_kube.gc_policy import YOUNG_THRESHOLD, settle_after_start
settle_after_start()
print(json.dumps({"before": before, "frozen": gc.get_freeze_count(), "tracked": len(gc.get_objects()),
                  "threshold": gc.get_threshold(), "young": YOUNG_THRESHOLD}))
"""


def test_start_up_objects_are_frozen_and_young_collections_spaced_out():
    import json

    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, timeout=60)
    found = json.loads(out.stdout)
    assert found["frozen"] >= found["before"] > 10_000  # start-up's objects: out of every collection from now
    assert found["tracked"] < 1_000  # what collections still walk
    assert found["threshold"][0] == found["young"] > 700  # CPython's default is 700


SURVIVORS = """
import gc, json
from mini_kube.gc_policy import settle_after_start
settle_after_start()
frozen = gc.get_freeze_count()
kept = [[i] for i in range(50_000)]  # long-lived state
cycle = [[]]
cycle[0].append(cycle)  # garbage that only the cyclic collector finds
del cycle
found = gc.collect()  # a full collection, as CPython starts one when the old generation has grown
print(json.dumps({"found": found, "newly_frozen": gc.get_freeze_count() - frozen,
                  "walked_next": len(gc.get_objects())}))
"""


def test_what_survives_a_full_collection_is_frozen_so_the_next_walks_only_what_is_new():
    import json

    out = subprocess.run([sys.executable, "-c", SURVIVORS], capture_output=True, text=True, check=True, timeout=60)
    found = json.loads(out.stdout)
    assert found["found"] >= 2  # the cycle was collected, not frozen
    assert found["newly_frozen"] >= 50_000  # the long-lived state: out of every later collection
    assert found["walked_next"] < 1_000


def test_collections_paused_for_start_up_resume_once_settled():
    code = ("import gc; from mini_kube.gc_policy import pause_during_start, settle_after_start; "
            "pause_during_start(); paused = gc.isenabled(); settle_after_start(); print(paused, gc.isenabled())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.split() == ["False", "True"]
