"""Container logs kept as the kubelet keeps them (#24, finding 7): files 0600, rotated at
`--container-log-max-size` keeping `--container-log-max-files`, so a Pod running `yes` cannot fill the disk; and
`kubectl logs --tail/--limit-bytes` served from the end of the file in a worker thread, reading a few blocks of a
large log rather than all of it (on main a `yes` Pod's 338 MB log was read whole, in the event loop)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import stat
import time
from pathlib import Path

import pytest
from mini_kube.kubelet.logs import LogReader, LogWriter, follow
from mini_kube.machinery.refs import PODS

from tests.helpers import kubectl

from .conftest import eventually, new_namespace, pod, process_cluster_or_skip, status_of

MAX_SIZE = 256 * 1024
MAX_FILES = 3


def _files(path: Path) -> list[Path]:
    return sorted(path.parent.glob(path.name + "*"))


def _stats(path: Path) -> list[os.stat_result]:
    """The log's files as they are now (one may be rotated away while they are looked at)."""
    found = []
    for file in _files(path):
        with contextlib.suppress(FileNotFoundError):
            found.append(file.stat())
    return found


@pytest.mark.slow
def test_a_log_rotates_at_its_size_and_keeps_its_files(tmp_path):
    path = tmp_path / "logs" / "0.log"
    size = 16 * 1024  # ~180 KB of records below rotate it about ten times, each write checked
    writer = LogWriter(str(path), max_size=size, max_files=MAX_FILES)
    for index in range(2000):
        writer.write("stdout", f"line {index:06d} {'x' * 40}\n".encode())
        assert sum(f.stat().st_size for f in _files(path)) <= size * MAX_FILES
    writer.close()
    files = _files(path)
    assert len(files) == MAX_FILES and path in files
    assert all(stat.S_IMODE(f.stat().st_mode) == 0o600 for f in files)
    assert all(f.stat().st_size <= size for f in files)
    assert path.read_bytes().rstrip().endswith(b"line 001999 " + b"x" * 40)
    reader = LogReader(str(path), timestamps=False, since=None, tail=2, limit_bytes=None)
    assert b"".join(reader.chunks()) == f"line 001998 {'x' * 40}\nline 001999 {'x' * 40}\n".encode()


def test_follow_goes_on_across_rotations(tmp_path):
    path = tmp_path / "0.log"

    async def scenario() -> bytes:
        writer = LogWriter(str(path), max_size=4096, max_files=2)
        done = asyncio.Event()
        got: list[bytes] = []
        received = written = 0

        async def read() -> None:
            nonlocal received
            async for chunk in follow(str(path), writer, 0, timestamps=False, done=done):
                got.append(chunk)
                received += len(chunk)

        task = asyncio.create_task(read())
        for index in range(2000):
            line = f"{index}\n".encode()
            writer.write("stdout", line)
            written += len(line)
            if index % 20 == 19:  # the follower keeps up (each file is rotated after ~5 of these batches)
                while received < written:
                    await asyncio.sleep(0.001)
        writer.close()
        done.set()
        await asyncio.wait_for(task, 10)
        return b"".join(got)

    assert asyncio.run(scenario()) == "".join(f"{i}\n" for i in range(2000)).encode()


@pytest.fixture(scope="module")
def kube():
    process_cluster_or_skip()
    from mini_kube.testing import MiniKube

    with MiniKube(nodes=1, node_runtime="process",
                  node_options={"container_log_max_size": MAX_SIZE, "container_log_max_files": MAX_FILES}) as kube:
        yield kube


def _log_of(kube, uid: str) -> Path:
    root = Path(kube.nodes.kubelets[0].root)
    return eventually(lambda: next((p for p in root.rglob("0.log") if uid in str(p)), None))


@pytest.mark.slow
def test_a_pod_running_yes_keeps_its_log_under_the_cap(kube):
    ns = new_namespace(kube)
    created = kube.client.create(PODS, pod("yes", {"name": "main", "image": "busybox", "command": ["yes"]}), ns)
    path = _log_of(kube, created["metadata"]["uid"])
    eventually(lambda: len(_files(path)) == MAX_FILES)
    rotated = {f.name for f in _files(path) if f != path}  # each rotation names a file anew
    first = set(rotated)
    deadline = time.monotonic() + 60
    while len(rotated - first) < MAX_FILES:  # a steady flood, all its files replaced, stays within the cap
        assert time.monotonic() < deadline, f"the log stopped rotating after {len(rotated)} files"
        stats = _stats(path)
        assert len(stats) <= MAX_FILES
        assert sum(s.st_size for s in stats) <= MAX_SIZE * MAX_FILES
        rotated.update(f.name for f in _files(path) if f != path)
    assert all(stat.S_IMODE(s.st_mode) == 0o600 for s in _stats(path))
    assert kubectl(kube, "-n", ns, "logs", "yes", "--tail=1", "--limit-bytes=10").stdout == "y\n"
    kube.client.delete(PODS, "yes", ns)


def _bytes_read() -> int:
    """Bytes this process (the whole cluster runs in it) has read with read() and the like so far."""
    return int(next(line for line in Path("/proc/self/io").read_text().splitlines()
                    if line.startswith("rchar:")).split()[1])


@pytest.mark.slow
def test_tail_of_a_large_log_reads_only_its_end(kube):
    ns = new_namespace(kube)
    line = "z" * 200
    # ~10 MB of records in the log files, 256 KiB in the current one; then no more output
    # (yes's "Broken pipe" kept out of the log: its stderr could land after "last line")
    script = f"yes {line} 2>/dev/null | head -n 50000; echo last line; sleep 3600"
    kube.client.create(PODS, pod("big", {"name": "main", "image": "busybox", "command": ["sh", "-c", script]}), ns)
    eventually(lambda: status_of(kube, ns, "big").get("phase") == "Running")
    eventually(lambda: kubectl(kube, "-n", ns, "logs", "big", "--tail=1").stdout == "last line\n", timeout=60)
    reads = []
    for _ in range(3):  # the fewest of three: the process also reads for whatever else runs in it meanwhile
        before = _bytes_read()
        answer = kubectl(kube, "-n", ns, "logs", "big", "--tail=1", "--limit-bytes=4")
        reads.append(_bytes_read() - before)
        assert answer.stdout == "last"
    assert min(reads) < MAX_SIZE / 2, f"read {reads} bytes to answer from a {MAX_SIZE}-byte log"
    tail = kubectl(kube, "-n", ns, "logs", "big", "--tail=3", "--timestamps").stdout.splitlines()
    assert [t.split(" ", 1)[1] for t in tail] == [line, line, "last line"]
    assert tail[0][:4].isdigit() and tail[0][10] == "T"
    kube.client.delete(PODS, "big", ns)
