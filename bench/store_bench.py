"""Store benchmark: write throughput against a bare aiosqlite loop, group commit, watch fan-out.

Run: .venv/bin/python bench/store_bench.py [--writes N] [--value-size B] [--profile]

All figures come from one run, on temporary files with the store's pragmas (WAL, synchronous=NORMAL):

* bare      -- ``await db.execute(INSERT ...); await db.commit()`` per row, same table and index as the store
* sequential -- ``await store.create()`` one after another          (target: >= 0.5 x bare)
* concurrent -- 64 tasks creating at once (group commit)            (target: > 1 x bare)
* txn        -- transactions of 64 creates
* fan-out    -- one write to 1,000 watchers: time until all have it  (target: < 20 ms)
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import os
import pstats
import statistics
import sys
import tempfile
import time
from pathlib import Path

import aiosqlite

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mini_kube.store import Op, Store  # noqa: E402
from mini_kube.store.sqlite_log import INSERT_SQL, SCHEMA  # noqa: E402


async def bare_loop(path: str, n: int, value: bytes) -> float:
    """Writes per second of a plain aiosqlite insert-and-commit loop."""
    async with aiosqlite.connect(path) as db:
        await db.execute("PRAGMA journal_mode = WAL")
        await db.execute("PRAGMA synchronous = NORMAL")
        for stmt in SCHEMA:
            await db.execute(stmt)
        await db.commit()
        t0 = time.perf_counter()
        for i in range(1, n + 1):
            await db.execute(INSERT_SQL, (i, f"/registry/pods/default/p{i}", i, 0, 1, 0, value))
            await db.commit()
        return n / (time.perf_counter() - t0)


async def store_sequential(path: str, n: int, value: bytes) -> float:
    s = await Store.open(path, compact_interval=0)
    try:
        t0 = time.perf_counter()
        for i in range(n):
            await s.create(f"/registry/pods/default/p{i}", value)
        return n / (time.perf_counter() - t0)
    finally:
        await s.close()


async def store_concurrent(path: str, n: int, value: bytes, width: int = 64) -> float:
    s = await Store.open(path, compact_interval=0)
    try:

        async def worker(w: int) -> None:
            for i in range(w, n, width):
                await s.create(f"/registry/pods/default/p{i}", value)

        t0 = time.perf_counter()
        await asyncio.gather(*(worker(w) for w in range(width)))
        return n / (time.perf_counter() - t0)
    finally:
        await s.close()


async def store_txn(path: str, n: int, value: bytes, size: int = 64) -> float:
    s = await Store.open(path, compact_interval=0)
    try:
        t0 = time.perf_counter()
        for start in range(0, n, size):
            await s.txn(
                [
                    Op("create", f"/registry/pods/default/p{i}", value)
                    for i in range(start, min(n, start + size))
                ]
            )
        return n / (time.perf_counter() - t0)
    finally:
        await s.close()


async def fan_out(path: str, watchers: int = 1000, rounds: int = 20) -> list[float]:
    """Seconds from just before a create until all ``watchers`` have received its event, per round."""
    s = await Store.open(path, compact_interval=0)
    try:
        await s.create("/registry/pods/default/warmup", b"x")
        received = 0
        all_in = asyncio.Event()
        ws = [s.watch("/registry/pods/", start_revision=s.revision + 1) for _ in range(watchers)]

        async def consume(w) -> None:
            nonlocal received
            async for _batch in w:
                received += 1
                if received == watchers:
                    all_in.set()

        tasks = [asyncio.create_task(consume(w)) for w in ws]
        await asyncio.sleep(0.05)  # every watcher is parked waiting
        times = []
        for r in range(rounds):
            received = 0
            all_in.clear()
            t0 = time.perf_counter()
            await s.create(f"/registry/pods/default/fan{r}", b"v" * 1024)
            await all_in.wait()
            times.append(time.perf_counter() - t0)
        for w in ws:
            w.close()
        await asyncio.gather(*tasks)
        return times
    finally:
        await s.close()


def fresh(tmp: str, name: str) -> str:
    return os.path.join(tmp, f"{name}.db")


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--writes", type=int, default=5000)
    ap.add_argument("--value-size", type=int, default=1024)
    ap.add_argument("--profile", action="store_true", help="cProfile the sequential and concurrent runs")
    args = ap.parse_args()
    n, value = args.writes, os.urandom(args.value_size)
    with tempfile.TemporaryDirectory(prefix="store-bench-") as tmp:
        bare = await bare_loop(fresh(tmp, "bare"), n, value)
        prof = cProfile.Profile() if args.profile else None
        if prof:
            prof.enable()
        seq = await store_sequential(fresh(tmp, "seq"), n, value)
        conc = await store_concurrent(fresh(tmp, "conc"), n, value)
        if prof:
            prof.disable()
        txn = await store_txn(fresh(tmp, "txn"), n, value)
        fan = await fan_out(fresh(tmp, "fan"))
    print(f"writes per run: {n}, value size: {args.value_size} B, WAL + synchronous=NORMAL")
    print(f"bare aiosqlite insert+commit : {bare:9.0f} writes/s")
    print(f"store sequential create     : {seq:9.0f} writes/s   ratio {seq / bare:5.2f}  (target >= 0.5)")
    print(f"store 64 concurrent creates : {conc:9.0f} writes/s   ratio {conc / bare:5.2f}  (target > 1)")
    print(f"store txn of 64 creates     : {txn:9.0f} writes/s   ratio {txn / bare:5.2f}")
    ms = [t * 1000 for t in fan]
    print(
        f"fan-out 1 event -> 1000 watchers: median {statistics.median(ms):.2f} ms, "
        f"max {max(ms):.2f} ms over {len(ms)} rounds  (target < 20 ms)"
    )
    if prof:
        pstats.Stats(prof).sort_stats("tottime").print_stats(25)


if __name__ == "__main__":
    asyncio.run(main())
