"""The data dir: private (0700, files 0600: it holds every Secret and the CA key), and used by one server at a
time (an exclusive lock taken before anything in it is touched)."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
from pathlib import Path
from typing import IO

LOCK_NAME = "mini-kube.lock"
IMAGES = "images"  # `mini-kube image load`'s store (kubelet/imagestore/store.py)


class StartupError(Exception):
    """The server cannot start; the message says why in one line."""


def _secure(path: Path) -> None:
    """Make the dir 0700 and everything in it owner-only (fixing what older versions created world-readable),
    except the files of loaded images (IMAGES: the store is 0700 itself, and its files keep the modes their
    images give them, which containers see)."""
    os.chmod(path, 0o700)
    for directory, dirs, files in os.walk(path):
        if Path(directory) == path and IMAGES in dirs:
            dirs.remove(IMAGES)
        for name in dirs + files:
            entry = Path(directory) / name
            with contextlib.suppress(FileNotFoundError):
                mode = entry.lstat().st_mode
                if stat.S_ISLNK(mode):
                    continue
                os.chmod(entry, 0o700 if stat.S_ISDIR(mode) else stat.S_IMODE(mode) & 0o700)


def claim(data_dir: str) -> IO[str]:
    """Create or check the data dir, make it private and lock it; keep the returned handle open while serving."""
    path = Path(data_dir).expanduser()
    if path.exists() and not path.is_dir():
        raise StartupError(f"data dir {path} is not a directory")
    try:
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
        _secure(path)
        handle = open(path / LOCK_NAME, "a+")  # noqa: SIM115 - held for the server's lifetime
    except PermissionError as exc:
        raise StartupError(f"data dir {path} is not writable: {exc.strerror}") from None
    except OSError as exc:
        reason = "read-only file system" if exc.errno == errno.EROFS else exc.strerror
        raise StartupError(f"data dir {path} cannot be used: {reason}") from None
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        holder = handle.read().strip() or "another process"
        handle.close()
        raise StartupError(f"data dir {path} is in use by another mini-kube server ({holder}); stop it or "
                           "choose another --data-dir") from None
    handle.seek(0)
    handle.truncate()
    handle.write(f"pid {os.getpid()}\n")
    handle.flush()
    return handle


def secure_files(data_dir: str) -> None:
    """After the store created its files: owner-only, whatever the umask."""
    _secure(Path(data_dir).expanduser())
