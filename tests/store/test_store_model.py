"""Model-based test: random operation sequences against a plain dict-per-revision model."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule
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
    StoreError,
)

pytestmark = pytest.mark.slow  # each test here takes more than a few seconds


KEYS = st.sampled_from(["/a", "/a/b", "/a/c", "/ab", "/b", "/b/a", "/é", "/a\U0001f600"])
PREFIXES = st.sampled_from(["", "/", "/a", "/a/", "/b", "/c", "/é"])
VALUES = st.binary(max_size=8)
EXPECT = st.sampled_from([None, "right", "wrong"])


class Model:
    """The whole history as one dict per revision, and the events that produced it."""

    def __init__(self) -> None:
        self.states: list[dict[str, KeyValue]] = [{}]
        self.events: list[Event] = []
        self.compact = 0

    @property
    def revision(self) -> int:
        return len(self.states) - 1

    def apply(self, ops: list[tuple[str, str, bytes | None, str | None, bool]]) -> list[KeyValue] | Exception:
        """Apply ops all-or-nothing; returns results or the error the store must raise."""
        state = dict(self.states[-1])
        rev = self.revision
        new_states, new_events, results = [], [], []
        for kind, key, value, expect, by_callable in ops:
            rev += 1
            cur = state.get(key)
            if kind == "create":
                if cur is not None:
                    return KeyExistsError(key, cur)
            elif cur is None:
                return KeyNotFoundError(key)
            elif expect == "wrong":
                return ConflictError(key, cur.mod_revision + 1000, cur)
            if by_callable and value is not None:
                value = b"rv%d:" % rev + value
            if kind == "create":
                kv = KeyValue(key, value, rev, rev, 1)
                ev = Event("PUT", kv, None)
                state[key] = kv
            elif kind == "update":
                kv = KeyValue(key, value, cur.create_revision, rev, cur.version + 1)
                ev = Event("PUT", kv, cur)
                state[key] = kv
            else:
                kv = KeyValue(key, cur.value, cur.create_revision, rev, 0)
                ev = Event("DELETE", kv, cur)
                del state[key]
            new_states.append(dict(state))
            new_events.append(ev)
            results.append(kv)
        self.states += new_states
        self.events += new_events
        return results


class StoreMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.dir = Path(tempfile.mkdtemp(prefix="store-model-"))
        self.path = str(self.dir / "model.db")
        self.store = self.run(Store.open(self.path, compact_interval=0))
        self.model = Model()

    def run(self, coro):
        return self.loop.run_until_complete(coro)

    def teardown(self) -> None:
        self.run(self.store.close())
        self.loop.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def _expected_mod(self, key: str, expect: str | None) -> int | None:
        cur = self.model.states[-1].get(key)
        if expect is None:
            return None
        if expect == "wrong" or cur is None:
            return (cur.mod_revision if cur else 0) + 1000
        return cur.mod_revision

    def _value(self, value: bytes, by_callable: bool):
        if not by_callable:
            return value
        calls = []

        def make(rev: int) -> bytes:
            calls.append(rev)
            assert len(calls) == 1, "value callable called more than once"
            return b"rv%d:" % rev + value

        return make

    def _check(self, expected, call) -> None:
        try:
            got = self.run(call)
        except StoreError as e:
            assert isinstance(expected, Exception), f"store raised {e!r}, model expected {expected}"
            assert type(e) is type(expected), (e, expected)
            if isinstance(e, ConflictError | KeyExistsError):
                assert e.current == expected.current
            return
        assert not isinstance(expected, Exception), f"store returned {got}, model expected {expected!r}"
        assert got == expected

    @initialize(writes=st.lists(st.tuples(KEYS, VALUES), max_size=12))
    def populate(self, writes):
        for key, value in writes:
            self.put(key, value)

    @rule(key=KEYS, value=VALUES)
    def put(self, key, value):
        """Create or update, whichever succeeds: keeps the history growing."""
        if key in self.model.states[-1]:
            self.update(key, value, "right", False)
        else:
            self.create(key, value, False)

    @rule(key=KEYS, value=VALUES, by_callable=st.booleans())
    def create(self, key, value, by_callable):
        expected = self.model.apply([("create", key, value, None, by_callable)])
        self._check(
            expected[0] if isinstance(expected, list) else expected,
            self.store.create(key, self._value(value, by_callable)),
        )

    @rule(key=KEYS, value=VALUES, expect=EXPECT, by_callable=st.booleans())
    def update(self, key, value, expect, by_callable):
        exp_mod = self._expected_mod(key, expect)
        expected = self.model.apply([("update", key, value, expect, by_callable)])
        call = self.store.update(key, self._value(value, by_callable), expected_mod_revision=exp_mod)
        self._check(expected[0] if isinstance(expected, list) else expected, call)

    @rule(key=KEYS, expect=EXPECT)
    def delete(self, key, expect):
        exp_mod = self._expected_mod(key, expect)
        expected = self.model.apply([("delete", key, None, expect, False)])
        self._check(
            expected[0] if isinstance(expected, list) else expected,
            self.store.delete(key, expected_mod_revision=exp_mod),
        )

    @rule(
        ops=st.lists(
            st.tuples(
                st.sampled_from(["create", "update", "delete"]),
                KEYS,
                VALUES,
                st.sampled_from([None, "wrong"]),
            ),
            min_size=1,
            max_size=4,
        )
    )
    def txn(self, ops):
        # "wrong" is decided against the state before the txn; model and store agree on it because the
        # expected revision (current + 1000) can never match.
        store_ops = [
            Op(
                kind,
                key,
                None if kind == "delete" else value,
                None if expect is None else self._expected_mod(key, "wrong"),
            )
            for kind, key, value, expect in ops
        ]
        expected = self.model.apply(
            [
                (kind, key, None if kind == "delete" else value, expect, False)
                for kind, key, value, expect in ops
            ]
        )
        self._check(expected, self.store.txn(store_ops))

    def _revision(self, data) -> int:
        """A revision to read at, often one next to the compaction boundary (0 means current)."""
        m = self.model
        edges = [
            0,
            m.compact,
            max(0, m.compact - 1),
            min(m.compact + 1, m.revision),
            m.revision,
            m.revision + 1,
        ]
        return data.draw(st.sampled_from(edges) | st.integers(min_value=0, max_value=m.revision + 1))

    def _read_error(self, rev: int) -> Exception | None:
        if rev > self.model.revision:
            return FutureRevisionError(rev, self.model.revision)
        if rev and rev < self.model.compact:
            return CompactedError(rev, self.model.compact)
        return None

    @rule(key=KEYS, data=st.data())
    def get(self, key, data):
        rev = self._revision(data)
        err = self._read_error(rev)
        expected = err or self.model.states[rev or self.model.revision].get(key)
        self._check(expected, self.store.get(key, revision=rev))

    @rule(prefix=PREFIXES, limit=st.integers(0, 4), start_after=st.none() | KEYS, data=st.data())
    def range(self, prefix, limit, start_after, data):
        rev = self._revision(data)
        err = self._read_error(rev)
        if err is None:
            rev = rev or self.model.revision
            kvs = sorted(
                (
                    kv
                    for k, kv in self.model.states[rev].items()
                    if k.startswith(prefix) and (start_after is None or k > start_after)
                ),
                key=lambda kv: kv.key.encode(),
            )
            page = kvs[:limit] if limit else kvs
            got = self.run(self.store.range(prefix, revision=rev, limit=limit, start_after=start_after))
            assert (got.kvs, got.revision, got.count, got.more) == (page, rev, len(kvs), len(kvs) > len(page))
        else:
            self._check(err, self.store.range(prefix, revision=rev, limit=limit, start_after=start_after))

    @precondition(lambda self: self.model.revision > self.model.compact)
    @rule(data=st.data())
    def compact(self, data):
        top = self.model.revision
        near_top = st.sampled_from([max(0, top - 1), max(0, top - 2), max(0, top - 4)])
        rev = data.draw(near_top | st.integers(min_value=0, max_value=top))
        self.run(self.store.compact(rev))
        self.model.compact = max(self.model.compact, rev)
        assert self.store.compact_revision == self.model.compact

    @rule(prefix=PREFIXES, exact=st.booleans(), data=st.data())
    def watch(self, prefix, exact, data):
        m = self.model
        edges = st.sampled_from([m.compact + 1, m.compact + 2, m.compact or 1, m.revision + 1])
        start = data.draw(edges | st.integers(min_value=1, max_value=m.revision + 1))
        if self.model.compact and start <= self.model.compact:
            try:
                self.store.watch(prefix, start_revision=start, exact=exact)
            except CompactedError:
                return
            raise AssertionError("watch from a compacted revision must fail")
        want = [
            e
            for e in self.model.events
            if e.kv.mod_revision >= start and (e.kv.key == prefix if exact else e.kv.key.startswith(prefix))
        ]
        w = self.store.watch(prefix, start_revision=start, exact=exact, progress_interval=0.001)

        async def collect():
            got = []
            async for batch in w:
                got += batch
                if w.revision >= self.model.revision:
                    w.close()
            return got

        assert self.run(asyncio.wait_for(collect(), 5)) == want

    @precondition(lambda self: self.model.compact > 0)
    @rule()
    def whole_history(self):
        """Every retained revision reads exactly as the model says."""
        for rev in range(max(1, self.model.compact), self.model.revision + 1):
            got = self.run(self.store.range("", revision=rev))
            assert got.kvs == sorted(self.model.states[rev].values(), key=lambda kv: kv.key.encode()), rev

    @rule()
    def reopen(self):
        self.run(self.store.close())
        self.store = self.run(Store.open(self.path, compact_interval=0))

    @invariant()
    def matches_model(self):
        assert self.store.revision == self.model.revision
        assert self.store.compact_revision == self.model.compact
        snap = self.store.snapshot()
        assert snap.kvs == sorted(self.model.states[-1].values(), key=lambda kv: kv.key.encode())


StoreMachine.TestCase.settings = settings(
    max_examples=max(10, settings.default.max_examples * 3 // 10),  # 30 runs of 50 steps; 300 when thorough
    stateful_step_count=50,
    suppress_health_check=[HealthCheck.too_slow],
)
TestStoreModel = StoreMachine.TestCase
