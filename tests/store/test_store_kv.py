"""Key-value semantics: create/update/delete, CAS, transactions, ranges, reads at old revisions."""

from __future__ import annotations

import asyncio

import pytest
from mini_kube.store import (
    CompactedError,
    ConflictError,
    Event,
    FutureRevisionError,
    KeyExistsError,
    KeyNotFoundError,
    KeyValue,
    Op,
    Store,
    StoreClosedError,
    ValueTooLargeError,
)
from mini_kube.store.etcd_store import REVISION_SENTINEL, EtcdStore


async def test_empty_store(any_store: Store):
    r0 = any_store.revision  # 0 for a new SQLite store; etcd's current revision for a new etcd prefix
    assert r0 == 0 or isinstance(any_store, EtcdStore)
    assert any_store.compact_revision == 0
    assert await any_store.get("/x") is None
    r = await any_store.range("/")
    assert (r.kvs, r.revision, r.more, r.count) == ([], r0, False, 0)


async def test_create_update_delete_revisions(any_store: Store):
    s = any_store
    r = s.revision
    a = await s.create("/a", b"1")
    assert a == KeyValue("/a", b"1", r + 1, r + 1, 1)
    b = await s.create("/b", b"2")
    assert b == KeyValue("/b", b"2", r + 2, r + 2, 1)
    a2 = await s.update("/a", b"3")
    assert a2 == KeyValue("/a", b"3", r + 1, r + 3, 2)
    d = await s.delete("/a")
    assert d == KeyValue("/a", b"3", r + 1, r + 4, 0)
    assert s.revision == r + 4
    assert await s.get("/a") is None
    a3 = await s.create("/a", b"5")  # a new lifetime: create_revision and version start over
    assert a3 == KeyValue("/a", b"5", r + 5, r + 5, 1)


async def test_errors_do_not_consume_revisions(any_store: Store):
    s = any_store
    r = s.revision
    await s.create("/a", b"1")
    with pytest.raises(KeyExistsError) as ei:
        await s.create("/a", b"2")
    assert ei.value.current.value == b"1"
    with pytest.raises(KeyNotFoundError):
        await s.update("/nope", b"x")
    with pytest.raises(KeyNotFoundError):
        await s.delete("/nope")
    assert s.revision == r + 1
    assert (await s.create("/b", b"x")).mod_revision == r + 2


async def test_compare_and_swap(any_store: Store):
    s = any_store
    a = await s.create("/a", b"1")
    a2 = await s.update("/a", b"2", expected_mod_revision=a.mod_revision)
    with pytest.raises(ConflictError) as ei:
        await s.update("/a", b"lost", expected_mod_revision=a.mod_revision)
    assert ei.value.current == a2
    with pytest.raises(ConflictError):
        await s.delete("/a", expected_mod_revision=a.mod_revision)
    assert (await s.get("/a")) == a2
    d = await s.delete("/a", expected_mod_revision=a2.mod_revision)
    assert d.mod_revision == a.mod_revision + 2 and d.value == b"2"


async def test_value_callable_gets_its_own_revision_once(any_store: Store):
    s = any_store
    calls: list[int] = []

    def value(rev: int) -> bytes:
        calls.append(rev)
        return f"rv={rev}".encode()

    await s.create("/x", b"0")
    kvs = await asyncio.gather(*(s.create(f"/k{i}", value) for i in range(5)), s.update("/x", value))
    if isinstance(s, EtcdStore):  # etcd assigns revisions at commit: the sentinel is replaced when read back
        assert calls == [REVISION_SENTINEL] * 6
    else:
        assert sorted(calls) == [kv.mod_revision for kv in sorted(kvs, key=lambda kv: kv.mod_revision)]
    for kv in kvs:
        assert kv.value == f"rv={kv.mod_revision}".encode()
        assert (await s.get(kv.key)).value == kv.value


async def test_value_callable_not_called_when_write_fails(any_store: Store):
    s = any_store
    await s.create("/a", b"1")

    def boom(rev: int) -> bytes:
        raise AssertionError("must not be called")

    with pytest.raises(KeyExistsError):
        await s.create("/a", boom)
    with pytest.raises(ConflictError):
        await s.update("/a", boom, expected_mod_revision=99)


async def test_value_callable_error_fails_only_that_write(any_store: Store):
    s = any_store

    def bad(rev: int) -> bytes:
        raise RuntimeError("encode failed")

    r = s.revision
    results = await asyncio.gather(
        s.create("/a", b"a"), s.create("/b", bad), s.create("/c", b"c"), return_exceptions=True
    )
    assert isinstance(results[1], RuntimeError)
    assert sorted(x.mod_revision for x in (results[0], results[2])) == [r + 1, r + 2]
    assert await s.get("/b") is None


async def test_oversize_values_rejected(tmp_path):
    s = await Store.open(compact_interval=0)
    try:
        limit = 1_572_864
        ok = await s.create("/ok", b"x" * limit)
        assert len(ok.value) == limit
        with pytest.raises(ValueTooLargeError):
            await s.create("/big", b"x" * (limit + 1))
        with pytest.raises(ValueTooLargeError):
            await s.update("/ok", lambda rev: b"x" * (limit + 1))
        with pytest.raises(ValueTooLargeError):
            await s.txn([Op("create", "/t1", b"a"), Op("create", "/t2", b"x" * (limit + 1))])
        assert s.revision == 1
        assert await s.get("/t1") is None
    finally:
        await s.close()
    small = await Store.open(max_value_size=10, compact_interval=0)
    try:
        with pytest.raises(ValueTooLargeError):
            await small.create("/a", b"x" * 11)
    finally:
        await small.close()


async def test_bad_arguments(store: Store):
    with pytest.raises(ValueError):
        await store.create("", b"x")
    with pytest.raises(
        ValueError
    ):  # a lone surrogate cannot be stored; it must not fail a whole commit group
        await store.create("/bad\udc80", b"x")
    with pytest.raises(TypeError):
        await store.create("/a", "not bytes")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        await store.txn([Op("create", "/a")])
    assert store.revision == 0


async def test_txn_all_or_nothing(store: Store):
    s = store
    a = await s.create("/a", b"1")
    res = await s.txn(
        [
            Op("update", "/a", b"2", a.mod_revision),
            Op("create", "/b", b"b"),
            Op("delete", "/a"),
            Op("create", "/a", b"3"),
        ]
    )
    assert [kv.mod_revision for kv in res] == [2, 3, 4, 5]
    assert res[2] == KeyValue("/a", b"2", 1, 4, 0)
    assert res[3] == KeyValue("/a", b"3", 5, 5, 1)
    with pytest.raises(ConflictError) as ei:
        await s.txn([Op("create", "/c", b"c"), Op("update", "/a", b"x", expected_mod_revision=1)])
    assert ei.value.op_index == 1  # type: ignore[attr-defined]
    assert s.revision == 5
    assert await s.get("/c") is None
    assert await s.txn([]) == []


async def test_range_order_limit_and_continuation(any_store: Store):
    s = any_store
    keys = ["/r/b", "/r/a", "/r/a/x", "/r/é", "/r/z", "/r/\U0001f600", "/q", "/r0", "/s"]
    for k in keys:
        await s.create(k, k.encode())
    expected = sorted(k for k in keys if k.startswith("/r/"))
    assert expected == sorted(expected, key=lambda k: k.encode())  # str order is byte order
    r = await s.range("/r/")
    assert [kv.key for kv in r.kvs] == expected and r.count == len(expected) and not r.more
    pages, start_after, rev = [], None, None
    while True:
        page = await s.range("/r/", limit=2, start_after=start_after, revision=rev)
        rev = page.revision
        assert page.count == len(expected) - len(pages) * 2
        pages.append([kv.key for kv in page.kvs])
        if not page.more:
            break
        start_after = page.kvs[-1].key
        await s.create(f"/r/new{len(pages)}", b"later")  # pages stay at the first page's revision
    assert [k for p in pages for k in p] == expected
    assert [kv.key for kv in (await s.range("")).kvs] == sorted(await _all_keys(s))


async def _all_keys(s: Store) -> list[str]:
    return [kv.key for kv in s.snapshot().kvs]


async def test_reads_at_old_revisions(any_store: Store):
    s = any_store
    r = s.revision
    await s.create("/a", b"1")  # r + 1
    await s.create("/b", b"1")  # r + 2
    await s.update("/a", b"2")  # r + 3
    await s.delete("/b")  # r + 4
    assert (await s.get("/a", revision=r + 1)).value == b"1"
    assert (await s.get("/a", revision=r + 3)).value == b"2"
    assert (await s.get("/b", revision=r + 3)).value == b"1"
    assert await s.get("/b", revision=r + 4) is None
    assert [kv.key for kv in (await s.range("/", revision=r + 2)).kvs] == ["/a", "/b"]
    assert [kv.value for kv in (await s.range("/", revision=r + 2)).kvs] == [b"1", b"1"]
    assert [kv.key for kv in (await s.range("/", revision=r + 4)).kvs] == ["/a"]
    with pytest.raises(FutureRevisionError):
        await s.get("/a", revision=r + 5)
    await s.compact(r + 3)
    assert s.compact_revision == r + 3
    assert (await s.get("/a", revision=r + 3)).value == b"2"  # the compact revision itself stays readable
    assert (await s.get("/b", revision=r + 3)).value == b"1"
    with pytest.raises(CompactedError):
        await s.get("/a", revision=r + 2)
    with pytest.raises(CompactedError):
        await s.range("/", revision=r + 1)
    await s.compact(r + 2)  # at or below compact_revision: no-op
    assert s.compact_revision == r + 3
    with pytest.raises(FutureRevisionError):
        await s.compact(r + 10)


async def test_subscribe_runs_before_write_returns(any_store: Store):
    s = any_store
    seen: list[list[Event]] = []
    cache: dict[str, bytes] = {}

    def listener(events: list[Event]) -> None:
        seen.append(events)
        for e in events:
            if e.type == "PUT":
                cache[e.kv.key] = e.kv.value
            else:
                cache.pop(e.kv.key, None)

    def broken(events: list[Event]) -> None:
        raise RuntimeError("listener bug")

    s.subscribe(broken)
    unsubscribe = s.subscribe(listener)
    kv = await s.create("/a", b"1")
    assert cache == {"/a": b"1"}
    await s.update("/a", b"2")
    assert cache == {"/a": b"2"}
    await asyncio.gather(*(s.create(f"/k{i}", b"v") for i in range(20)))
    assert len(cache) == 21
    revs = [e.kv.mod_revision for batch in seen for e in batch]
    assert revs == list(range(kv.mod_revision, s.revision + 1))
    if not isinstance(s, EtcdStore):  # etcd commits each write on its own
        assert len(seen) < 22, "concurrent writes should be committed (and notified) in groups"
    unsubscribe()
    await s.delete("/a")
    assert "/a" in cache


async def test_snapshot_plus_subscribe_is_gap_free(store: Store):
    s = store
    writers = [asyncio.create_task(s.create(f"/k{i}", b"v")) for i in range(50)]
    await asyncio.sleep(0)
    snap = s.snapshot("/")
    cache = {kv.key: kv.mod_revision for kv in snap.kvs}
    last = [snap.revision]

    def listener(events: list[Event]) -> None:
        for e in events:
            assert e.kv.mod_revision == last[0] + 1
            last[0] = e.kv.mod_revision
            cache[e.kv.key] = e.kv.mod_revision

    s.subscribe(listener)
    await asyncio.gather(*writers)
    assert len(cache) == 50 and last[0] == s.revision == 50


async def test_closed_store_rejects_calls(tmp_path):
    s = await Store.open(str(tmp_path / "c.db"), compact_interval=0)
    pending = [asyncio.create_task(s.create(f"/k{i}", b"v")) for i in range(10)]
    await asyncio.sleep(0)
    await s.close()
    assert all(t.done() and not t.exception() for t in pending)  # queued writes are finished first
    with pytest.raises(StoreClosedError):
        await s.create("/late", b"v")
    with pytest.raises(StoreClosedError):
        await s.get("/k1")
    await s.close()


async def test_failed_commit_leaves_no_trace(store: Store, monkeypatch):
    s = store
    await s.create("/a", b"1")
    seen: list[Event] = []
    s.subscribe(seen.extend)
    real_append = s._log.append

    async def failing_append(rows, *args):
        raise OSError("disk full")

    monkeypatch.setattr(s._log, "append", failing_append)
    results = await asyncio.gather(s.update("/a", b"2"), s.create("/b", b"x"), return_exceptions=True)
    assert all(isinstance(r, OSError) for r in results)
    assert s.revision == 1 and seen == []
    assert await s.get("/a") == KeyValue("/a", b"1", 1, 1, 1) and await s.get("/b") is None
    monkeypatch.setattr(s._log, "append", real_append)
    assert (await s.create("/b", b"y")).mod_revision == 2  # the store carries on, no revision was lost
    assert [kv.key for kv in (await s.range("/", revision=2)).kvs] == ["/a", "/b"]


async def test_write_cancelled_before_commit_is_not_applied(store: Store):
    task = asyncio.create_task(store.create("/a", b"1"))
    await asyncio.sleep(0)  # the request is queued
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    assert (await store.create("/b", b"2")).mod_revision == 1
    assert await store.get("/a") is None
