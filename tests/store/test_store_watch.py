"""Watch: history replay from old revisions, live fan-out, compaction, progress, slow consumers."""

from __future__ import annotations

import asyncio
import random

import pytest
from mini_kube.store import CompactedError, Event, Op, Store, StoreClosedError, Watch, WatchOverflowError
from mini_kube.store import watch as watch_module
from mini_kube.store.etcd_store import EtcdStore


def summary(events: list[Event]) -> list[tuple]:
    """Everything an event says, in comparable form."""
    return [
        (
            e.type,
            e.kv.key,
            e.kv.value,
            e.kv.create_revision,
            e.kv.mod_revision,
            e.kv.version,
            None
            if e.prev_kv is None
            else (e.prev_kv.value, e.prev_kv.create_revision, e.prev_kv.mod_revision, e.prev_kv.version),
        )
        for e in events
    ]


async def collect(w: Watch, upto: int, timeout: float = 5.0) -> list[Event]:
    """Events from ``w`` until it has seen revision ``upto``."""
    out: list[Event] = []

    async def run() -> None:
        async for batch in w:
            out.extend(batch)
            if w.revision >= upto:
                return

    await asyncio.wait_for(run(), timeout)
    return out


async def drain(w, idle: float = 0.3) -> list[Event]:
    """Events from a watch until it has been idle for ``idle`` seconds (for watches with no progress notes)."""
    out: list[Event] = []
    quiet_since = asyncio.get_running_loop().time()
    while asyncio.get_running_loop().time() - quiet_since < idle:
        try:
            batch = await asyncio.wait_for(w.__anext__(), idle)
        except TimeoutError:
            break
        if batch:
            out.extend(batch)
            quiet_since = asyncio.get_running_loop().time()
    return out


async def random_writes(s: Store, rng: random.Random, n: int, keys: list[str]) -> None:
    for _ in range(n):
        key = rng.choice(keys)
        cur = await s.get(key)
        if cur is None:
            await s.create(key, rng.randbytes(rng.randint(0, 20)))
        elif rng.random() < 0.3:
            await s.delete(key, expected_mod_revision=cur.mod_revision)
        elif rng.random() < 0.2 and not isinstance(s, EtcdStore):  # etcd: one key once per transaction
            await s.txn([Op("delete", key), Op("create", key, b"re")])
        else:
            await s.update(key, rng.randbytes(5), expected_mod_revision=cur.mod_revision)


KEYS = ["/a", "/a/1", "/a/2", "/ab", "/b", "/b/1", "/c"]


@pytest.mark.parametrize("path", ["memory", "file", "etcd"])
async def test_watchers_from_old_revisions_see_exactly_the_history(path, tmp_path, request):
    if path == "etcd":
        s = await EtcdStore.open([request.getfixturevalue("etcd_server").url], prefix=f"/w-{random.random()}",
                                 compact_interval=0)
    else:
        s = await Store.open(":memory:" if path == "memory" else str(tmp_path / "w.db"), compact_interval=0)
    try:
        rng = random.Random(7)
        log: list[Event] = []
        s.subscribe(log.extend)
        r0 = s.revision
        await random_writes(s, rng, 150, KEYS)
        # Start watchers at many old revisions and prefixes while more writes run concurrently.
        specs = [
            (p, ex, rng.randint(r0 + 1, s.revision + 3))
            for p in ["", "/a", "/a/", "/b", "/c"]
            for ex in (False, True)
        ]
        specs += [
            ("/a", False, r0 + 1),
            ("", False, s.revision),
            ("", False, s.revision + 1),
            ("", False, s.revision + 5),
        ]
        watchers = [
            (p, ex, start, s.watch(p, start_revision=start, exact=ex, progress_interval=0.01))
            for p, ex, start in specs
        ]
        writer = asyncio.create_task(random_writes(s, rng, 150, KEYS))
        await writer
        final = s.revision
        # all at once: etcd's watches are drained until idle, which takes the idle time once, not per watcher
        gots = await asyncio.gather(*(drain(w) if path == "etcd" else collect(w, final) for *_, w in watchers))
        for (p, ex, start, w), got in zip(watchers, gots, strict=True):
            want = [
                e
                for e in log
                if e.kv.mod_revision >= start and (e.kv.key == p if ex else e.kv.key.startswith(p))
            ]
            assert summary(got) == summary(want), (p, ex, start)
            assert w.revision == final or path == "etcd"
            w.close()
    finally:
        await s.close()


async def test_history_replay_spans_many_pages(store: Store, monkeypatch):
    monkeypatch.setattr(watch_module, "HISTORY_PAGE", 7)
    s = store
    log: list[Event] = []
    s.subscribe(log.extend)
    for i in range(60):
        await s.create(f"/p/{i:03}", b"v") if i % 3 else await s.create(f"/q/{i:03}", b"v")
    w = s.watch("/p/", start_revision=1)
    batches = []
    live = asyncio.create_task(s.create("/p/zzz", b"live"))
    async for batch in w:
        batches.append(batch)
        if w.revision >= 61:
            break
    await live
    got = [e for b in batches for e in b]
    assert summary(got) == summary([e for e in log if e.kv.key.startswith("/p/")])
    assert len(batches) > 3


async def test_live_fan_out_shares_one_list(store: Store):
    s = store
    ws = [s.watch("/x/", start_revision=1) for _ in range(50)]
    await s.create("/x/1", b"v")
    batches = [await w.__anext__() for w in ws]
    assert all(b is batches[0] for b in batches), "each watcher should get the same list object"
    assert summary(batches[0]) == [("PUT", "/x/1", b"v", 1, 1, 1, None)]


async def test_watch_from_compacted_revision_fails(store: Store):
    s = store
    for i in range(10):
        await s.create(f"/k{i}", b"v")
    assert s.watch("/", start_revision=1)  # nothing compacted yet: fine
    await s.compact(5)
    for start in (1, 4, 5):
        with pytest.raises(CompactedError) as ei:
            s.watch("/", start_revision=start)
        assert ei.value.compact_revision == 5
    got = await collect(s.watch("/", start_revision=6), 10)
    assert [e.kv.mod_revision for e in got] == [6, 7, 8, 9, 10]


async def test_compaction_overtaking_a_catching_up_watcher(store: Store, monkeypatch):
    monkeypatch.setattr(watch_module, "HISTORY_PAGE", 5)
    s = store
    for i in range(30):
        await s.create(f"/k{i}", b"v")
    w = s.watch("/", start_revision=2)
    first = await w.__anext__()
    assert [e.kv.mod_revision for e in first] == [2, 3, 4, 5, 6]
    await s.compact(20)
    with pytest.raises(CompactedError):
        await w.__anext__()
    with pytest.raises(StopAsyncIteration):
        await w.__anext__()


async def test_events_carry_prev_kv_after_compaction(store: Store):
    s = store
    await s.create("/a", b"1")  # 1
    await s.update("/a", b"2")  # 2
    await s.create("/b", b"1")  # 3
    await s.update("/a", b"3")  # 4
    await s.delete("/b")  # 5
    await s.compact(3)
    got = await collect(s.watch("/", start_revision=4), 5)
    assert summary(got) == [
        ("PUT", "/a", b"3", 1, 4, 3, (b"2", 1, 2, 2)),
        ("DELETE", "/b", b"1", 3, 5, 0, (b"1", 3, 3, 1)),
    ]


async def test_progress_notifications(store: Store):
    s = store
    await s.create("/other", b"v")
    w = s.watch("/mine/", start_revision=1, progress_interval=0.02)
    assert await asyncio.wait_for(w.__anext__(), 1) == []
    assert w.revision == 1
    await s.create("/other2", b"v")  # not ours: only a progress notification reveals revision 2
    assert await asyncio.wait_for(w.__anext__(), 1) == []
    assert w.revision == 2
    await s.create("/mine/x", b"v")
    batch = await asyncio.wait_for(w.__anext__(), 1)
    assert [e.kv.key for e in batch] == ["/mine/x"] and w.revision == 3
    quiet = s.watch("/", start_revision=4)  # without progress_interval nothing arrives when idle
    with pytest.raises(asyncio.TimeoutError):
        await asyncio.wait_for(quiet.__anext__(), 0.1)


async def test_slow_watcher_is_ended_without_blocking_others(tmp_path):
    s = await Store.open(compact_interval=0, watch_buffer=20)
    try:
        slow = s.watch("/", start_revision=1)
        fast = s.watch("/", start_revision=1)
        got: list[Event] = []

        async def consume() -> None:
            async for batch in fast:
                got.extend(batch)
                if fast.revision >= 100:
                    return

        consumer = asyncio.create_task(consume())
        for i in range(100):
            await s.create(f"/k{i}", b"v")  # never waits for the slow watcher
        await asyncio.wait_for(consumer, 5)
        assert [e.kv.mod_revision for e in got] == list(range(1, 101))
        with pytest.raises(WatchOverflowError) as ei:
            await slow.__anext__()
        assert ei.value.revision == slow.revision == 0
        again = s.watch("/", start_revision=slow.revision + 1)  # re-watch from where it stopped
        assert len(await collect(again, 100)) == 100
    finally:
        await s.close()


async def test_close_ends_iteration(store: Store):
    s = store
    w = s.watch("/", start_revision=1)
    pending = asyncio.create_task(w.__anext__())
    await asyncio.sleep(0)
    w.close()
    with pytest.raises(StopAsyncIteration):
        await pending
    await s.create("/a", b"v")  # a closed watcher is gone from the hub
    assert len(s._hub) == 0
    async with s.watch("/", start_revision=1) as w2:
        assert [e.kv.key for e in await w2.__anext__()] == ["/a"]
    assert len(s._hub) == 0


async def test_store_close_ends_watchers(tmp_path):
    s = await Store.open(compact_interval=0)
    w = s.watch("/", start_revision=1)
    pending = asyncio.create_task(w.__anext__())
    await asyncio.sleep(0)
    await s.close()
    with pytest.raises(StopAsyncIteration):
        await pending
    with pytest.raises(StoreClosedError):
        s.watch("/", start_revision=1)
