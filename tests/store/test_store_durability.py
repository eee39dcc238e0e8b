"""Persistence: restarts, kill -9, automatic compaction."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from mini_kube.store import CompactedError, Store
from mini_kube.store.retention import Retention

HERE = Path(__file__).parent
ROOT = HERE.parent.parent


async def test_restart_keeps_state_and_continues_revisions(tmp_path):
    path = str(tmp_path / "s.db")
    s = await Store.open(path, compact_interval=0)
    await s.create("/a", b"1")
    await s.create("/b", b"2")
    await s.update("/a", b"3")
    await s.create("/gone", b"x")
    await s.delete("/gone")  # revision 5: the highest row is a tombstone
    await s.close()

    s = await Store.open(path, compact_interval=0)
    assert s.revision == 5
    assert [(kv.key, kv.value, kv.mod_revision) for kv in s.snapshot().kvs] == [
        ("/a", b"3", 3),
        ("/b", b"2", 2),
    ]
    assert (await s.get("/a", revision=1)).value == b"1"
    await s.compact(5)  # deletes the tombstone row that carried revision 5
    await s.close()

    s = await Store.open(path, compact_interval=0)
    try:
        assert (s.revision, s.compact_revision) == (5, 5)
        assert (await s.create("/c", b"4")).mod_revision == 6
        assert [kv.key for kv in (await s.range("/")).kvs] == ["/a", "/b", "/c"]
        # the latest row of each live key survived compaction, with its metadata
        assert await s.get("/a") == (await s.range("/a", revision=5)).kvs[0]
        assert (await s.get("/b", revision=5)).create_revision == 2
    finally:
        await s.close()


def _start_writer(path: str, tag: str) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.Popen(
        [sys.executable, str(HERE / "crash_writer.py"), path, tag],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        cwd=ROOT,
    )


@pytest.mark.slow
async def test_kill_9_loses_no_acknowledged_write(tmp_path):
    """A writer process is SIGKILLed mid-stream twice; every write it acknowledged must be there."""
    path = str(tmp_path / "crash.db")
    acked: list[tuple[int, str, bytes]] = []
    for round_ in range(2):
        opened_at, acks = await _run_and_kill(path, f"r{round_}", min_acks=300)
        # a restarted writer continues above every acknowledged revision
        assert opened_at >= max((rev for rev, _, _ in acked), default=0)
        assert all(rev > opened_at for rev, _, _ in acks)
        acked += acks
    revs = [rev for rev, _, _ in acked]
    assert len(revs) == len(set(revs)) >= 600

    s = await Store.open(path, compact_interval=0)
    try:
        assert s.revision >= max(revs)
        for rev, key, value in acked:
            kv = await s.get(key, revision=rev)
            if value == b"":  # an acknowledged delete
                assert kv is None, (rev, key)
            else:
                assert kv is not None and (kv.value, kv.mod_revision) == (value, rev), (rev, key)
        latest: dict[str, int] = {}
        for rev, key, _ in sorted(acked):
            latest[key] = rev
        for key, rev in latest.items():
            cur = await s.get(key)
            assert cur is None or cur.mod_revision >= rev
        assert (await s.create("/after-crash", b"x")).mod_revision == s.revision > max(revs)
    finally:
        await s.close()


async def _run_and_kill(path: str, tag: str, min_acks: int) -> tuple[int, list[tuple[int, str, bytes]]]:
    proc = _start_writer(path, tag)
    assert proc.stdout is not None
    lines: list[str] = []
    opened = proc.stdout.readline().split()
    assert opened[0] == "open", opened
    while len(lines) < min_acks:
        line = proc.stdout.readline()
        assert line, "writer exited early"
        lines.append(line)
    proc.send_signal(signal.SIGKILL)
    # acks written before the kill count too; read through the same buffered reader as the lines above
    # (communicate() reads the pipe itself and would skip what readline() has already buffered: a cut line)
    rest = proc.stdout.read()
    assert proc.wait(timeout=30) == -signal.SIGKILL
    lines += [line + "\n" for line in rest.split("\n")[:-1]]  # a cut-off last line was never acknowledged
    acks = []
    for line in lines:
        assert line.startswith("ack ") and line.endswith("\n"), line
        parts = line.split(" ")
        acks.append((int(parts[1]), parts[2], bytes.fromhex(parts[3].strip())))
    return int(opened[1]), acks


async def test_automatic_compaction_keeps_current_state(tmp_path):
    path = str(tmp_path / "auto.db")
    s = await Store.open(path, history_seconds=0, history_revisions=20, compact_interval=0.02)
    try:
        states: dict[int, dict[str, bytes]] = {0: {}}  # revision -> state, kept by a listener

        def listener(events):
            for e in events:
                state = dict(states[e.kv.mod_revision - 1])
                if e.type == "PUT":
                    state[e.kv.key] = e.kv.value
                else:
                    del state[e.kv.key]
                states[e.kv.mod_revision] = state

        s.subscribe(listener)
        await s.create("/keep/old", b"untouched since revision 1")
        for i in range(200):
            key = f"/churn/{i % 7}"
            cur = await s.get(key)
            if cur is None:
                await s.create(key, b"%d" % i)
            elif i % 5 == 0:
                await s.delete(key)
            else:
                await s.update(key, b"%d" % i)
        before = s.snapshot()
        for _ in range(300):
            if s.compact_revision == s.revision - 20:
                break
            await asyncio.sleep(0.01)
        assert s.compact_revision == s.revision - 20  # exactly the last 20 revisions are kept
        with pytest.raises(CompactedError):
            await s.get("/keep/old", revision=s.compact_revision - 1)
        assert s.snapshot() == before
        assert (await s.range("/")).kvs == before.kvs
        for rev in range(s.compact_revision, s.revision + 1):  # every retained revision reads right
            got = {kv.key: kv.value for kv in (await s.range("/", revision=rev)).kvs}
            assert got == states[rev], rev
        with sqlite3.connect(path) as db:  # history really was deleted: few rows besides the live ones
            (rows,) = db.execute("SELECT COUNT(*) FROM kv_log").fetchone()
        assert rows <= len(before.kvs) + 20
    finally:
        await s.close()
    s = await Store.open(path, compact_interval=0)
    try:
        assert s.snapshot() == before
    finally:
        await s.close()


def test_retention_window_takes_the_larger_history():
    now = [1000.0]
    r = Retention(seconds=300, revisions=100, revision=0, clock=lambda: now[0])
    for rev in range(1, 1001):  # 1000 revisions over 100 s
        now[0] += 0.1
        r.note(rev)
    assert r.target(1000) == 0  # everything is younger than 300 s
    now[0] += 250  # revisions up to ~500 are now older than 300 s
    t = r.target(1000)
    assert 480 <= t <= 500
    now[0] += 1000  # all old by time: the revision window (last 100) decides
    assert r.target(1000) == 900
    r2 = Retention(seconds=300, revisions=100, revision=5000, clock=lambda: now[0])
    assert r2.target(5000) == 0  # revisions found at start-up count as written at start-up
    now[0] += 301
    assert r2.target(5000) == 4900


@pytest.mark.parametrize("backend", ["sqlite", "etcd"])
async def test_history_is_kept_for_a_time_not_a_number_of_revisions(request, backend):
    """Automatic compaction is by age, as kube-apiserver's every 5 minutes: on a quiet store, revisions older than
    the window go even though there are only a few (a list's continue token then expires)."""
    if backend == "etcd":
        from mini_kube.store.etcd_store import EtcdStore

        etcd = request.getfixturevalue("etcd_server")
        s = await EtcdStore.open([etcd.url], prefix=f"/quiet-history-{uuid.uuid4().hex}",
                                 compact_interval=0.2)
    else:
        s = await Store.open(":memory:", history_seconds=0.2, compact_interval=0.05)
    try:
        first = (await s.create("/quiet/a", b"1")).mod_revision
        await s.update("/quiet/a", b"2")
        for _ in range(200):
            if s.compact_revision > first:
                break
            await asyncio.sleep(0.01)
        assert s.compact_revision > first
        with pytest.raises(CompactedError):
            await s.range("/quiet/", revision=first)
        assert (await s.get("/quiet/a")).value == b"2"
    finally:
        await s.close()
