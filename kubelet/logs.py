"""Container logs in the CRI format (`<RFC3339Nano> stdout|stderr F|P <text>`), written by the kubelet from the
container's pipes and read back for `kubectl logs` (`--tail`, `--since`, `--timestamps`, `--limit-bytes`, `-f`).

As the kubelet keeps them: files 0600, rotated when the next write would take the file past
`--container-log-max-size` (10 MiB) into `<file>.<time>`, keeping `--container-log-max-files` (5) files in all,
the current one included (upstream also gzips the older rotated files; these stay plain). `kubectl logs` reads
the current file only, as upstream's, in blocks in a worker thread: `--tail` from the end, stopping at
`--limit-bytes`, so neither the file's size nor the request costs the event loop or unbounded memory."""

from __future__ import annotations

import asyncio
import datetime as dt
import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

MAX_LINE = 16 * 1024  # a longer line is split into partial (P) records, as containerd does
PARTIAL_WAIT = 0.1  # seconds a line may wait for its newline before what came is logged as a partial record
MAX_SIZE = 10 * 1024 * 1024  # --container-log-max-size: a log file is rotated before it grows past this
MAX_FILES = 5  # --container-log-max-files: the most files of one container's log, the current one included
BLOCK = 1 << 16  # bytes read at a time when serving logs
FIRST_BLOCK = 1 << 12  # bytes read first when looking back from the end (doubled up to BLOCK)


def _stamp() -> str:
    now = dt.datetime.now(dt.UTC)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond * 1000:09d}Z"


class LogWriter:
    """Appends records to one container's log file (0600), rotating it at `max_size` and keeping `max_files`
    files; `changed` wakes followers."""

    def __init__(self, path: str, *, max_size: int = MAX_SIZE, max_files: int = MAX_FILES) -> None:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.max_size = max_size
        self.max_files = max(max_files, 1)
        self._file = self._open()
        self._size = os.fstat(self._file.fileno()).st_size
        self.changed = asyncio.Event()

    def _open(self) -> Any:
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        os.fchmod(fd, 0o600)
        return os.fdopen(fd, "ab", buffering=0)

    def _rotate(self) -> None:
        """The current file becomes `<path>.<time>`; the oldest rotated files go past `max_files`."""
        self._file.close()
        now = dt.datetime.now(dt.UTC)
        if self.max_files > 1:
            os.replace(self.path, f"{self.path}.{now.strftime('%Y%m%d-%H%M%S.%f')}")
        else:
            os.unlink(self.path)
        rotated = sorted(Path(self.path).parent.glob(Path(self.path).name + ".*"))
        for old in rotated[:max(len(rotated) - (self.max_files - 1), 0)]:
            old.unlink(missing_ok=True)
        self._file = self._open()
        self._size = 0

    def write(self, stream: str, data: bytes) -> None:
        """Log `data`'s lines, each a record stamped with the time it came (one read's lines came together: one
        stamp for all, made once, as a `yes` Pod's 30,000 lines per read made the stamps most of the work)."""
        lines = data.split(b"\n")
        stamp = f"{_stamp()} {stream}"
        full, partial = f"{stamp} F ".encode(), f"{stamp} P ".encode()
        out = []
        for index, line in enumerate(lines):
            last = index == len(lines) - 1
            if last and not line:
                break
            while len(line) > MAX_LINE:
                out.append(partial + line[:MAX_LINE] + b"\n")
                line = line[MAX_LINE:]
            out.append((partial if last else full) + line + b"\n")
        if not out:
            return
        batch: list[bytes] = []
        size = self._size
        for record in out:  # rotated between records, before one would take the file past max_size
            if size + len(record) > self.max_size and size:
                self._append(batch)
                self._rotate()
                batch, size = [], 0
            batch.append(record)
            size += len(record)
        self._append(batch)
        self.changed.set()

    def _append(self, records: list[bytes]) -> None:
        payload = b"".join(records)
        if payload:
            self._file.write(payload)
            self._size += len(payload)

    async def pump(self, reader: asyncio.StreamReader, stream: str) -> None:
        """Copy a pipe into the log until it closes: whole lines as they come, and a line still without its newline
        after PARTIAL_WAIT as a partial (P) record, so `printf abc; sleep 1000` shows `abc` (as containerd does)."""
        pending = b""
        while True:
            try:
                if pending:
                    chunk = await asyncio.wait_for(reader.read(1 << 16), PARTIAL_WAIT)
                else:
                    chunk = await reader.read(1 << 16)
            except TimeoutError:
                self.write(stream, pending)
                pending = b""
                continue
            except (OSError, ValueError):
                chunk = b""
            if not chunk:
                if pending:
                    self.write(stream, pending)
                return
            data = pending + chunk
            cut = data.rfind(b"\n") + 1
            if len(data) - cut >= MAX_LINE:  # a line longer than a record: its full records now
                cut = len(data) - (len(data) - cut) % MAX_LINE
            if cut:
                self.write(stream, data[:cut])
            pending = data[cut:]

    def close(self) -> None:
        self._file.close()
        self.changed.set()


def parse(line: bytes) -> tuple[str, str, bool, bytes]:
    """(timestamp, stream, complete, text) of one record."""
    stamp, stream, tag, text = line.rstrip(b"\n").split(b" ", 3) if line.count(b" ") >= 3 else (
        *line.rstrip(b"\n").split(b" ", 2), b"")
    return stamp.decode(), stream.decode(), tag == b"F", text


def _time(stamp: str) -> dt.datetime:
    return dt.datetime.fromisoformat(stamp[:26].rstrip("Z") + "+00:00")


def render(records: list[bytes], *, timestamps: bool, since: dt.datetime | None, tail: int | None,
           limit_bytes: int | None = None) -> bytes:
    """The text `kubectl logs` shows for these records."""
    out: list[bytes] = []
    for record in records:
        if not record.strip():
            continue
        stamp, _, complete, text = parse(record)
        if since is not None and _time(stamp) < since:
            continue
        prefix = f"{stamp} ".encode() if timestamps else b""
        out.append(prefix + text + (b"\n" if complete else b""))
    if tail is not None and tail >= 0:
        out = out[-tail:] if tail else []
    data = b"".join(out)
    return data[:limit_bytes] if limit_bytes is not None else data


class LogReader:
    """One `kubectl logs` answer read from a log file in blocks (blocking I/O: run `chunks` in a thread). With
    `tail` it starts that many records before the end, found by reading backwards; it stops once `limit_bytes`
    are given. `end` and `inode` say where a follower goes on."""

    def __init__(self, path: str, *, timestamps: bool, since: dt.datetime | None, tail: int | None,
                 limit_bytes: int | None) -> None:
        self.path = path
        self.timestamps = timestamps
        self.since = since
        self.tail = tail if tail is not None and tail >= 0 else None
        self.limit_bytes = limit_bytes
        self.end = 0
        self.inode: int | None = None

    def chunks(self) -> Iterator[bytes]:
        try:
            handle = open(self.path, "rb")  # noqa: SIM115 - closed below
        except FileNotFoundError:
            return
        with handle:
            stat = os.fstat(handle.fileno())
            self.inode = stat.st_ino
            self.end = _after_last_newline(handle, stat.st_size)
            start = 0 if self.tail is None else _tail_start(handle, self.end, self.tail)
            left = self.limit_bytes
            position, carry = start, b""
            handle.seek(start)
            while position < self.end and left != 0:
                block = handle.read(min(BLOCK, self.end - position))
                if not block:
                    return
                position += len(block)
                data = carry + block
                cut = data.rfind(b"\n") + 1
                carry = data[cut:]
                out = render(data[:cut].splitlines(keepends=True), timestamps=self.timestamps, since=self.since,
                             tail=None)
                if left is not None:
                    out = out[:left]
                    left -= len(out)
                if out:
                    yield out


def _after_last_newline(handle: Any, size: int) -> int:
    """The offset just after the file's last complete record (a write may be under way)."""
    position, step = size, FIRST_BLOCK
    while position > 0:
        step = min(step, position)
        handle.seek(position - step)
        block = handle.read(step)
        index = block.rfind(b"\n")
        if index >= 0:
            return position - step + index + 1
        position -= step
        step = min(step * 2, BLOCK)
    return 0


def _tail_start(handle: Any, end: int, tail: int) -> int:
    """The offset of the `tail`-th record before `end` (0 when there are fewer)."""
    if tail == 0:
        return end
    seen, position, step = 0, end, FIRST_BLOCK
    while position > 0:
        step = min(step, position)
        position -= step
        handle.seek(position)
        block = handle.read(step)
        index = len(block)
        while (index := block.rfind(b"\n", 0, index)) >= 0:
            seen += 1
            if seen == tail + 1:
                return position + index + 1
        step = min(step * 2, BLOCK)
    return 0


async def follow(path: str, writer: LogWriter | None, offset: int, *, timestamps: bool, done: asyncio.Event,
                 inode: int | None = None) -> AsyncIterator[bytes]:
    """New records of a log file as they come, until `done` is set and everything is read; from `offset` in the
    file `inode` (the current file when None, or from its start if it has been rotated since), then on into the
    files that rotation puts in its place. Reads are bounded blocks in a worker thread."""
    handle = None
    position, carry, draining = offset, b"", False
    try:
        while True:
            if handle is None:
                try:
                    handle = open(path, "rb")  # noqa: SIM115 - closed below
                except FileNotFoundError:
                    handle = None
                if handle is not None:
                    if inode is not None and os.fstat(handle.fileno()).st_ino != inode:
                        position = 0
                    handle.seek(position)
            if handle is not None:
                block = await asyncio.to_thread(handle.read, BLOCK)
                if block:
                    data = carry + block
                    cut = data.rfind(b"\n") + 1
                    carry = data[cut:]
                    if cut:
                        yield render(data[:cut].splitlines(keepends=True), timestamps=timestamps, since=None,
                                     tail=None)
                    continue
                if draining:  # the rotated file is read to its end: on into the new one
                    handle.close()
                    handle, inode, position, carry, draining = None, None, 0, b"", False
                    continue
                if _rotated(path, handle):  # read what the old file got before it was rotated, then go on
                    draining = True
                    continue
            if done.is_set():
                return
            if writer is not None:
                writer.changed.clear()
                waiter = asyncio.ensure_future(writer.changed.wait())
                stopper = asyncio.ensure_future(done.wait())
                await asyncio.wait([waiter, stopper], timeout=1.0, return_when=asyncio.FIRST_COMPLETED)
                waiter.cancel()
                stopper.cancel()
            else:
                await asyncio.sleep(0.2)
    finally:
        if handle is not None:
            handle.close()


def _rotated(path: str, handle: Any) -> bool:
    """Whether `path` names another file than the open `handle` now."""
    try:
        return os.stat(path).st_ino != os.fstat(handle.fileno()).st_ino
    except FileNotFoundError:
        return False
