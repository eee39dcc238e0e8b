"""A volume's files written all at once, as upstream's AtomicWriter (pkg/volume/util/atomic_writer.go) writes
ConfigMap, Secret, downward API and projected volumes: the payload goes into a fresh timestamped directory
(`..2026_11_28_12_00_00.123456`), the `..data` symlink is switched to it by a rename, each top-level name is a
symlink `name -> ..data/name`, and the previous directory goes. A reader never sees half of an update (programs
watching a mounted ConfigMap watch `..data`), files dropped from the payload disappear, and a payload equal to
what is there writes nothing."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path

Payload = dict[str, tuple[bytes, int]]  # relative path -> (content, mode)
DATA = "..data"
DATA_TMP = "..data_tmp"


class PayloadError(ValueError):
    """A payload path that would leave the volume (absolute, '..', or starting with '..')."""


def _check(path: str) -> None:
    if not path or path.startswith("/") or path.startswith("..") or ".." in path.split("/"):
        raise PayloadError(f"invalid path {path!r}: must be relative, without '..' and not start with '..'")


def current_payload(directory: Path) -> dict[str, bytes] | None:
    """The contents now behind `..data` (None when nothing was written yet)."""
    data = directory / DATA
    if not data.is_symlink():
        return None
    base = directory / os.readlink(data)
    found: dict[str, bytes] = {}
    for root, _, files in os.walk(base):
        for name in files:
            path = Path(root) / name
            found[str(path.relative_to(base))] = path.read_bytes()
    return found


def write_payload(directory: Path, payload: Payload) -> bool:
    """Make `directory` hold exactly `payload`; False when it already did (nothing written)."""
    for path in payload:
        _check(path)
    directory.mkdir(parents=True, exist_ok=True)
    old = current_payload(directory)
    if old is not None and old == {path: data for path, (data, _) in payload.items()}:
        return False
    previous = os.readlink(directory / DATA) if old is not None else None
    stamp = time.strftime("..%Y_%m_%d_%H_%M_%S.", time.gmtime())
    fresh = Path(tempfile.mkdtemp(prefix=stamp, dir=directory))
    for path, (data, mode) in payload.items():
        target = fresh / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        os.chmod(target, mode)
    os.chmod(fresh, 0o755)
    link = directory / DATA_TMP
    if link.is_symlink():
        link.unlink()
    os.symlink(fresh.name, link)
    os.replace(link, directory / DATA)
    visible = {path.split("/", 1)[0] for path in payload}
    for name in visible:
        entry = directory / name
        if not entry.is_symlink():
            if entry.exists():  # a plain file or directory left from before: the symlink takes its place
                shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
            os.symlink(f"{DATA}/{name}", entry)
    for name in {path.split("/", 1)[0] for path in old or ()} - visible:
        entry = directory / name
        if entry.is_symlink():
            entry.unlink()
    if previous is not None and previous != fresh.name:
        shutil.rmtree(directory / previous, ignore_errors=True)
    return True
