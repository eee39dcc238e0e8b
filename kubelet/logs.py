"""Container logs in the CRI format (`<RFC3339Nano> stdout|stderr F|P <text>`), written by the kubelet from the
container's pipes and read back for `kubectl logs` (`--tail`, `--since`, `--timestamps`, `-f`)."""

from __future__ import annotations

import asyncio
import datetime as dt
import os
from collections.abc import AsyncIterator
from pathlib import Path

MAX_LINE = 16 * 1024  # a longer line is split into partial (P) records, as containerd does
PARTIAL_WAIT = 0.1  # seconds a line may wait for its newline before what came is logged as a partial record


def _stamp() -> str:
    now = dt.datetime.now(dt.UTC)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond * 1000:09d}Z"


class LogWriter:
    """Appends records to one container's log file; `changed` wakes followers."""

    def __init__(self, path: str) -> None:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._file = open(path, "ab", buffering=0)  # noqa: SIM115 - open for the container's life
        self.changed = asyncio.Event()

    def write(self, stream: str, data: bytes) -> None:
        lines = data.split(b"\n")
        out = []
        for index, line in enumerate(lines):
            last = index == len(lines) - 1
            if last and not line:
                break
            while len(line) > MAX_LINE:
                out.append(f"{_stamp()} {stream} P ".encode() + line[:MAX_LINE] + b"\n")
                line = line[MAX_LINE:]
            out.append(f"{_stamp()} {stream} {'P' if last else 'F'} ".encode() + line + b"\n")
        if out:
            self._file.write(b"".join(out))
            self.changed.set()

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


async def follow(path: str, writer: LogWriter | None, offset: int, *, timestamps: bool,
                 done: asyncio.Event) -> AsyncIterator[bytes]:
    """New records of a log file as they come, until `done` is set and everything is read."""
    position = offset
    while True:
        size = os.path.getsize(path) if os.path.exists(path) else 0
        if size > position:
            with open(path, "rb") as handle:
                handle.seek(position)
                chunk = handle.read(size - position)
            cut = chunk.rfind(b"\n") + 1
            position += cut
            if cut:
                yield render(chunk[:cut].splitlines(keepends=True), timestamps=timestamps, since=None, tail=None)
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
