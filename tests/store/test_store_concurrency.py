"""Concurrent writers: compare-and-swap has exactly one winner, group commit batches writes."""

from __future__ import annotations

import asyncio

import pytest
from mini_kube.store import ConflictError, Event, KeyExistsError, Store


async def test_cas_rounds_have_exactly_one_winner(any_store: Store):
    s = any_store
    await s.create("/counter", b"0")
    writers = 16
    for round_ in range(40):
        seen = await asyncio.gather(*(s.get("/counter") for _ in range(writers)))
        assert len({kv.mod_revision for kv in seen}) == 1
        go = asyncio.Event()

        async def attempt(i: int, kv=seen[0], go=go) -> bool:
            await go.wait()
            try:
                await s.update("/counter", b"%d" % (int(kv.value) + 1), expected_mod_revision=kv.mod_revision)
            except ConflictError as e:
                assert e.current.mod_revision > kv.mod_revision
                return False
            return True

        tasks = [asyncio.create_task(attempt(i)) for i in range(writers)]
        await asyncio.sleep(0)
        go.set()
        wins = await asyncio.gather(*tasks)
        assert sum(wins) == 1, round_
    assert (await s.get("/counter")).value == b"40"


async def test_concurrent_increments_lose_nothing(any_store: Store):
    s = any_store
    first = await s.create("/n", b"0")
    revisions: list[int] = []

    async def incr(times: int) -> None:
        for _ in range(times):
            while True:
                cur = await s.get("/n")
                try:
                    kv = await s.update(
                        "/n", b"%d" % (int(cur.value) + 1), expected_mod_revision=cur.mod_revision
                    )
                except ConflictError:
                    continue
                revisions.append(kv.mod_revision)
                break

    await asyncio.gather(*(incr(25) for _ in range(8)))
    assert (await s.get("/n")).value == b"200"
    assert sorted(revisions) == list(range(first.mod_revision + 1, first.mod_revision + 201))


async def test_concurrent_creates_of_one_key(any_store: Store):
    s = any_store
    results = await asyncio.gather(*(s.create("/once", b"%d" % i) for i in range(20)), return_exceptions=True)
    winners = [r for r in results if not isinstance(r, BaseException)]
    assert len(winners) == 1 and all(isinstance(r, KeyExistsError) for r in results if r not in winners)
    assert (await s.get("/once")) == winners[0]


@pytest.mark.parametrize("path", ["memory", "file"])
async def test_group_commit_batches_concurrent_writes(path, tmp_path):
    s = await Store.open(":memory:" if path == "memory" else str(tmp_path / "g.db"), compact_interval=0)
    try:
        batches: list[list[Event]] = []
        s.subscribe(batches.append)
        kvs = await asyncio.gather(*(s.create(f"/g/{i}", b"v") for i in range(500)))
        assert sorted(kv.mod_revision for kv in kvs) == list(range(1, 501))
        assert [e.kv.mod_revision for b in batches for e in b] == list(range(1, 501))
        assert len(batches) <= 10, f"500 concurrent creates took {len(batches)} commits"
    finally:
        await s.close()
