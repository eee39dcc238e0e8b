"""The on-disk log: one SQLite table of key versions, append-only except for compaction.

Schema (after studying k3s's kine, written for this store):

``kv_log`` has one row per write, its primary key the global revision of that write:
``key``, ``create_revision`` (revision that created this lifetime of the key), ``prev_revision``
(revision of the row this write replaced, 0 for a create), ``version`` (1 for a create, +1 per
update, 0 for a tombstone), ``deleted`` (1 for a tombstone) and ``value`` (empty for a tombstone).

Unlike kine there is no ``old_value`` column: the previous value of an event is found by joining on
``prev_revision``.  Compaction to revision C only deletes rows that are superseded by another row at or
below C, and tombstones at or below C, so the previous row of any event above C is always still there;
storing values twice would double the bytes written per update for nothing.

``kv_meta`` keeps ``compact_revision`` and ``revision`` (the current revision at the last compaction),
so that a restart continues above the highest revision ever handed out even when compaction deleted the
rows that carried it.

Durability: file databases use WAL with ``synchronous=NORMAL``.  A commit then appends the transaction to
the WAL with ``write()`` before it returns (the fsync is deferred to checkpoints), so the data sits in the
operating system's page cache: a process killed with ``kill -9`` loses nothing that was acknowledged.
Only a power failure or kernel crash can lose the last transactions before a checkpoint.

Every call is one hop to the aiosqlite connection thread: the whole unit of work (for example BEGIN,
many INSERTs, COMMIT) runs there as one function, which is what makes group commit cheap.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import aiosqlite

from .errors import StoreError
from .types import Event, KeyValue

T = TypeVar("T")
HEALTH_BUSY_MS = 1000  # how long the health check waits for the write lock

Row = tuple[int, str, int, int, int, int, bytes]
"""(revision, key, create_revision, prev_revision, version, deleted, value), the column order of INSERT_SQL."""

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS kv_log (
        revision        INTEGER PRIMARY KEY,
        key             TEXT    NOT NULL,
        create_revision INTEGER NOT NULL,
        prev_revision   INTEGER NOT NULL,
        version         INTEGER NOT NULL,
        deleted         INTEGER NOT NULL,
        value           BLOB    NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS kv_log_key_revision ON kv_log (key, revision)",
    "CREATE TABLE IF NOT EXISTS kv_meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID",
)

INSERT_SQL = (
    "INSERT INTO kv_log (revision, key, create_revision, prev_revision, version, deleted, value)"
    " VALUES (?, ?, ?, ?, ?, ?, ?)"
)

_MAX_CHAR = 0x10FFFF


def prefix_end(prefix: str) -> str | None:
    """The smallest string above every string that starts with ``prefix`` (None: no upper bound).

    UTF-8 preserves code point order, so SQLite's byte-wise TEXT order and Python's str order agree.
    """
    chars = list(prefix)
    while chars and ord(chars[-1]) == _MAX_CHAR:
        chars.pop()
    if not chars:
        return None
    nxt = ord(chars[-1]) + 1
    if 0xD800 <= nxt <= 0xDFFF:  # surrogates cannot appear in a valid key; skip over them
        nxt = 0xE000
    chars[-1] = chr(nxt)
    return "".join(chars)


def _key_filter(prefix: str, exact: bool, column: str) -> tuple[str, tuple[str, ...]]:
    """SQL condition and parameters selecting ``prefix`` (or exactly that key)."""
    if exact:
        return f"{column} = ?", (prefix,)
    end = prefix_end(prefix)
    if end is None:
        return f"{column} >= ?", (prefix,)
    return f"{column} >= ? AND {column} < ?", (prefix, end)


class SqliteLog:
    """Async access to the log. One writer connection; file databases get a second one for reads."""

    def __init__(self, writer: aiosqlite.Connection, reader: aiosqlite.Connection) -> None:
        self._writer = writer
        self._reader = reader

    @classmethod
    async def open(cls, path: str) -> SqliteLog:
        memory = path == ":memory:" or path == ""
        writer = await aiosqlite.connect(path, isolation_level=None)
        try:
            await writer._execute(_setup, writer._conn, memory, True)
            if memory:
                return cls(writer, writer)
            reader = await aiosqlite.connect(path, isolation_level=None)
            await reader._execute(_setup, reader._conn, memory, False)
        except BaseException:
            await writer.close()
            raise
        return cls(writer, reader)

    async def close(self) -> None:
        if self._reader is not self._writer:
            await self._reader.close()
        await self._writer.close()

    @staticmethod
    async def _call(conn: aiosqlite.Connection, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn(sqlite3_connection, *args)`` on the connection's thread: one hop for a whole unit of work.

        aiosqlite has no public way to run a function on its thread, so this uses ``Connection._execute``,
        which has been stable across aiosqlite releases; it is the only place that does.
        """
        return await conn._execute(fn, conn._conn, *args)

    async def load(self) -> tuple[int, int, dict[str, KeyValue]]:
        """(revision, compact_revision, current live key versions) as stored."""
        return await self._call(self._writer, _load)

    async def check_writable(self) -> None:
        """Take the database's write lock and let it go (fails when it cannot be had within a second: another
        process holds it, or the file cannot be written)."""
        await self._call(self._writer, _check_writable)

    async def append(self, rows: Sequence[Row]) -> None:
        """Insert ``rows`` in one transaction and commit."""
        await self._call(self._writer, _append, rows)

    async def compact(self, after: int, upto: int, current_revision: int) -> int:
        """Compact revisions ``after < r <= upto`` (``after`` being the previous compact revision); returns rows deleted."""
        return await self._call(self._writer, _compact, after, upto, current_revision)

    async def get(self, key: str, revision: int) -> KeyValue | None:
        return await self._call(self._reader, _get, key, revision)

    async def range(
        self, prefix: str, revision: int, limit: int, start_after: str | None
    ) -> tuple[list[KeyValue], int]:
        """Live keys under ``prefix`` at ``revision`` after ``start_after``: (first ``limit`` of them, count)."""
        return await self._call(self._reader, _range, prefix, revision, limit, start_after)

    async def history(self, prefix: str, exact: bool, first: int, last: int, limit: int) -> list[Event]:
        """Events with ``first <= revision <= last`` under ``prefix`` (or for exactly that key), in order."""
        return await self._call(self._reader, _history, prefix, exact, first, last, limit)


# --- functions that run on the connection thread -------------------------------------------------


def _setup(conn: sqlite3.Connection, memory: bool, create: bool) -> None:
    if not memory:
        conn.execute("PRAGMA busy_timeout = 10000")
        mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if mode.lower() != "wal":
            raise StoreError(f"could not switch the database to WAL (journal_mode is {mode})")
        conn.execute("PRAGMA synchronous = NORMAL")
    if create:
        conn.execute("BEGIN IMMEDIATE")
        try:
            for stmt in SCHEMA:
                conn.execute(stmt)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise


def _check_writable(conn: sqlite3.Connection) -> None:
    (busy_ms,) = conn.execute("PRAGMA busy_timeout").fetchone()
    conn.execute(f"PRAGMA busy_timeout = {HEALTH_BUSY_MS}")
    try:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("ROLLBACK")
    finally:
        conn.execute(f"PRAGMA busy_timeout = {int(busy_ms)}")


def _load(conn: sqlite3.Connection) -> tuple[int, int, dict[str, KeyValue]]:
    conn.execute("BEGIN")
    try:
        meta = dict(conn.execute("SELECT name, value FROM kv_meta").fetchall())
        (max_rev,) = conn.execute("SELECT COALESCE(MAX(revision), 0) FROM kv_log").fetchone()
        rows = conn.execute(
            "SELECT key, value, create_revision, revision, version FROM kv_log AS l"
            " WHERE deleted = 0 AND NOT EXISTS"
            " (SELECT 1 FROM kv_log AS n WHERE n.key = l.key AND n.revision > l.revision)"
        ).fetchall()
    finally:
        conn.execute("COMMIT")
    revision = max(max_rev, meta.get("revision", 0))
    index = {r[0]: KeyValue(r[0], r[1], r[2], r[3], r[4]) for r in rows}
    return revision, meta.get("compact_revision", 0), index


def _append(conn: sqlite3.Connection, rows: Sequence[Row]) -> None:
    conn.execute("BEGIN")
    try:
        conn.executemany(INSERT_SQL, rows)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def _compact(conn: sqlite3.Connection, after: int, upto: int, current_revision: int) -> int:
    conn.execute("BEGIN IMMEDIATE")
    try:
        # Rows replaced by a write in (after, upto] -- including the rows tombstones deleted -- go first,
        # while the tombstones still point at them; then the tombstones themselves.
        cur = conn.execute(
            "DELETE FROM kv_log WHERE revision IN (SELECT prev_revision FROM kv_log"
            " WHERE revision > ? AND revision <= ? AND prev_revision > 0)",
            (after, upto),
        )
        deleted = cur.rowcount
        cur = conn.execute(
            "DELETE FROM kv_log WHERE revision > ? AND revision <= ? AND deleted = 1", (after, upto)
        )
        deleted += cur.rowcount
        conn.executemany(
            "INSERT OR REPLACE INTO kv_meta (name, value) VALUES (?, ?)",
            (("compact_revision", upto), ("revision", current_revision)),
        )
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return deleted


def _get(conn: sqlite3.Connection, key: str, revision: int) -> KeyValue | None:
    row = conn.execute(
        "SELECT value, create_revision, revision, version, deleted FROM kv_log"
        " WHERE key = ? AND revision <= ? ORDER BY revision DESC LIMIT 1",
        (key, revision),
    ).fetchone()
    if row is None or row[4]:
        return None
    return KeyValue(key, row[0], row[1], row[2], row[3])


def _range(
    conn: sqlite3.Connection, prefix: str, revision: int, limit: int, start_after: str | None
) -> tuple[list[KeyValue], int]:
    cond, key_params = _key_filter(prefix, False, "l.key")
    params: tuple[str | int, ...] = key_params
    if start_after is not None:
        cond += " AND l.key > ?"
        params += (start_after,)
    # A row is the version visible at `revision` when no later row of its key is at or below `revision`.
    where = (
        f" FROM kv_log AS l WHERE {cond} AND l.revision <= ? AND l.deleted = 0 AND NOT EXISTS"
        " (SELECT 1 FROM kv_log AS n WHERE n.key = l.key AND n.revision > l.revision AND n.revision <= ?)"
    )
    params += (revision, revision)
    conn.execute("BEGIN")  # one snapshot for the page and the count
    try:
        rows = conn.execute(
            "SELECT l.key, l.value, l.create_revision, l.revision, l.version"
            + where
            + " ORDER BY l.key LIMIT ?",
            (*params, limit if limit > 0 else -1),
        ).fetchall()
        if limit > 0 and len(rows) == limit:
            (count,) = conn.execute("SELECT COUNT(*)" + where, params).fetchone()
        else:
            count = len(rows)
    finally:
        conn.execute("COMMIT")
    return [KeyValue(r[0], r[1], r[2], r[3], r[4]) for r in rows], count


def _history(
    conn: sqlite3.Connection, prefix: str, exact: bool, first: int, last: int, limit: int
) -> list[Event]:
    cond, params = _key_filter(prefix, exact, "l.key")
    rows = conn.execute(
        "SELECT l.revision, l.key, l.create_revision, l.prev_revision, l.version, l.deleted, l.value,"
        " p.value, p.create_revision, p.version"
        " FROM kv_log AS l LEFT JOIN kv_log AS p ON p.revision = l.prev_revision"
        f" WHERE l.revision >= ? AND l.revision <= ? AND {cond} ORDER BY l.revision LIMIT ?",
        (first, last, *params, limit),
    ).fetchall()
    events: list[Event] = []
    for rev, key, create_rev, prev_rev, version, deleted, value, p_value, p_create, p_version in rows:
        prev = None
        if prev_rev:
            if p_value is None:
                raise StoreError(f"history row {rev} of {key!r} is missing its previous version {prev_rev}")
            prev = KeyValue(key, p_value, p_create, prev_rev, p_version)
        if deleted:
            assert prev is not None
            events.append(Event("DELETE", KeyValue(key, prev.value, create_rev, rev, 0), prev))
        else:
            events.append(Event("PUT", KeyValue(key, value, create_rev, rev, version), prev))
    return events
