"""Temporary directories that go with the process that made them, even when it is killed: each holds a lock file
its maker keeps locked while it lives, and the next process making one of the same kind removes those whose maker
is gone (a `:memory:` server's CA key, its component logs and node files are not left in the temp dir by a
crash). A directory with a mount beneath it is left alone: removing it could reach into what is mounted."""

from __future__ import annotations

import fcntl
import os
import shutil
import tempfile
from pathlib import Path

LOCK_FILE = ".owner"
STAGING = ".new-"  # the name a directory has until its lock is taken
_held: dict[Path, int] = {}  # directories this process made -> the descriptor holding each one's lock


def make_owned(prefix: str) -> Path:
    """A new directory `<tempdir>/<prefix>XXXX`, locked as this process's; abandoned ones of `prefix` go first."""
    remove_abandoned(prefix)
    staging = Path(tempfile.mkdtemp(prefix=STAGING + prefix))  # locked before it has a name another one sweeps
    descriptor = os.open(staging / LOCK_FILE, os.O_CREAT | os.O_RDWR | os.O_CLOEXEC, 0o600)
    fcntl.flock(descriptor, fcntl.LOCK_EX)
    path = staging.with_name(staging.name.removeprefix(STAGING))
    os.rename(staging, path)
    _held[path] = descriptor
    return path


def remove_owned(path: Path) -> None:
    """Remove a directory `make_owned` made, and let go of its lock."""
    shutil.rmtree(path, ignore_errors=True)
    descriptor = _held.pop(path, None)
    if descriptor is not None:
        os.close(descriptor)


def remove_abandoned(prefix: str) -> list[Path]:
    """Remove the directories of `prefix` in the temp dir whose maker is gone; the ones removed."""
    removed = []
    with os.scandir(tempfile.gettempdir()) as entries:
        candidates = [Path(e.path) for e in entries if e.name.startswith(prefix) and e.is_dir(follow_symlinks=False)]
    for path in candidates:
        if path in _held or not _lock_is_free(path) or _has_mounts(path):
            continue
        shutil.rmtree(path, ignore_errors=True)
        removed.append(path)
    return removed


def _lock_is_free(path: Path) -> bool:
    """Whether `path` has a lock file that no process holds (a directory without one is not ours: left alone)."""
    try:
        descriptor = os.open(path / LOCK_FILE, os.O_RDWR | os.O_CLOEXEC | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except OSError:
        return False
    finally:
        os.close(descriptor)


def _has_mounts(path: Path) -> bool:
    """Whether anything is mounted at or beneath `path` in this mount namespace."""
    inside = str(path.resolve()) + "/"
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as mounts:
            return any((line.split()[4] + "/").startswith(inside) for line in mounts)
    except OSError:
        return True  # cannot tell: left alone
