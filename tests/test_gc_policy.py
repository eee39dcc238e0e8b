"""The garbage collector's policy of a server process (mini_kube/gc_policy.py): once started, what start-up made
is frozen, out of every later collection, and young collections are spaced out, so a large cluster's cached
objects are walked far less often (issue #28: full collections took a third of a busy server's CPU)."""

from __future__ import annotations

import subprocess
import sys

PROBE = """
import gc, json
from mini_kube.apiserver.server import ApiServer  # start-up's modules: thousands of objects
gc.collect()  # start-up's garbage: not counted, so no collection in between makes fewer objects to freeze
before = len(gc.get_objects())
from mini_kube.gc_policy import MIDDLE_THRESHOLD, YOUNG_THRESHOLD, settle_after_start
settle_after_start()
print(json.dumps({"before": before, "frozen": gc.get_freeze_count(), "tracked": len(gc.get_objects()),
                  "threshold": gc.get_threshold(), "young": YOUNG_THRESHOLD, "middle": MIDDLE_THRESHOLD}))
"""


def test_start_up_objects_are_frozen_and_young_collections_spaced_out():
    import json

    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, timeout=60)
    found = json.loads(out.stdout)
    assert found["frozen"] >= found["before"] > 10_000  # start-up's objects: out of every collection from now
    assert found["tracked"] < 1_000  # what collections still walk
    assert found["threshold"][0] == found["young"] > 700  # CPython's default is 700
    assert found["threshold"][1] == found["middle"] < 10  # the middle generation's: 10


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


MIDDLE = """
import gc, json
from mini_kube.gc_policy import settle_after_start
settle_after_start()
frozen = gc.get_freeze_count()
kept = [[i] for i in range(50_000)]  # state that outlives a few young collections
cycle = [[]]
cycle[0].append(cycle)  # garbage that only the cyclic collector finds
del cycle
found = gc.collect(1)  # the middle generation, as CPython collects it every few young collections
print(json.dumps({"found": found, "newly_frozen": gc.get_freeze_count() - frozen,
                  "old": len(gc.get_objects(2)), "walked_next": len(gc.get_objects())}))
"""


def test_what_survives_the_middle_generation_is_frozen_so_the_old_generation_stays_empty():
    """No collection walks the heap: a full one finds the old generation empty, whatever the cluster's size."""
    import json

    out = subprocess.run([sys.executable, "-c", MIDDLE], capture_output=True, text=True, check=True, timeout=60)
    found = json.loads(out.stdout)
    assert found["found"] >= 2  # the cycle was collected, not frozen
    assert found["newly_frozen"] >= 50_000
    assert found["old"] < 1_000
    assert found["walked_next"] < 1_000


CONNECTION = """
import asyncio, gc, json, weakref
from mini_kube.gc_policy import settle_after_start
settle_after_start()

async def main():
    server = await asyncio.start_server(lambda reader, writer: writer.close(), "127.0.0.1", 0)
    reader, writer = await asyncio.open_connection(*server.sockets[0].getsockname()[:2])
    transport = weakref.ref(writer.transport)
    await reader.read()  # the server closed it
    writer.close()
    await writer.wait_closed()
    del reader, writer
    server.close()
    await server.wait_closed()
    await asyncio.sleep(0.05)
    return transport() is None

gc.disable()  # reference counting alone, as for a transport the policy froze while its connection lived
print(json.dumps({"freed": asyncio.run(main())}))
"""


def test_a_closed_connection_is_freed_without_the_cyclic_collector():
    """A connection's transport that lived through a collection is frozen: it must not be left in a cycle
    (Python 3.11's transports keep their read callback, a method of their own, python/cpython#100348)."""
    import json

    out = subprocess.run([sys.executable, "-c", CONNECTION], capture_output=True, text=True, check=True, timeout=60)
    assert json.loads(out.stdout)["freed"]


def test_collections_paused_for_start_up_resume_once_settled():
    code = ("import gc; from mini_kube.gc_policy import pause_during_start, settle_after_start; "
            "pause_during_start(); paused = gc.isenabled(); settle_after_start(); print(paused, gc.isenabled())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.split() == ["False", "True"]
