"""One image layer (a tar stream) unpacked into a directory, safely: every name stays inside the directory (no
absolute names, no `..`, nothing written through a link), links stay inside it too (a hard link to a file of
the layer; a symbolic link whose relative target climbs out of the root is refused, an absolute one is kept:
it is read inside the container's root), no device nodes, setuid and setgid bits dropped, and the sizes are
bounded. Whiteouts (`.wh.NAME`, `.wh..wh..opq`) become overlayfs's own (a 0/0 character device, the
`trusted.overlay.opaque` attribute), so the layers stack with overlayfs as they are."""

from __future__ import annotations

import hashlib
import os
import posixpath
import stat
import tarfile
from dataclasses import dataclass
from typing import Protocol

WHITEOUT = ".wh."
OPAQUE = ".wh..wh..opq"
OPAQUE_XATTR = "trusted.overlay.opaque"
CHUNK = 1 << 20


class Readable(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...


class LayerError(ValueError):
    """A layer that is refused; the message says which entry and why."""


@dataclass(frozen=True)
class Limits:
    """What one layer may hold."""

    max_bytes: int = 16 << 30  # file contents, unpacked
    max_entries: int = 1_000_000
    max_name: int = 4096  # bytes of a path or link target


class HashingReader:
    """A file object that hashes (sha256) and counts what is read through it."""

    def __init__(self, raw: Readable) -> None:
        self.raw = raw
        self.sha256 = hashlib.sha256()
        self.count = 0

    def read(self, size: int = -1) -> bytes:
        data = self.raw.read(size)
        self.sha256.update(data)
        self.count += len(data)
        return data

    def drain(self) -> None:
        """Read to the end (a tar stream's padding after its last entry counts in its digest)."""
        while self.read(CHUNK):
            pass

    @property
    def digest(self) -> str:
        return f"sha256:{self.sha256.hexdigest()}"


def clean_name(name: str, limits: Limits) -> str:
    """The entry's path inside the layer (`""` for its root); LayerError for one that would leave it."""
    if len(name.encode(errors="surrogateescape")) > limits.max_name or "\0" in name:
        raise LayerError(f"entry {name[:80]!r}: name too long or invalid")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise LayerError(f"entry {name!r}: a path leaving the layer ('..')")
    return "/".join(parts)


class Unpacker:
    """Writes the entries of one layer under `root` (a new, empty directory of ours)."""

    def __init__(self, root: str, limits: Limits) -> None:
        self.root = root
        self.limits = limits
        self.written = 0
        self.entries = 0
        self.directories: list[tuple[str, tarfile.TarInfo]] = []  # metadata applied last (writes change mtimes)

    def path(self, name: str) -> str:
        """Where `name` goes, its parent directories made: refused when one of them is not a directory (a link
        in this layer, say: nothing is ever written through one)."""
        current = self.root
        for part in name.split("/")[:-1]:
            current = os.path.join(current, part)
            try:
                mode = os.lstat(current).st_mode
            except FileNotFoundError:
                os.mkdir(current, 0o755)
                continue
            if not stat.S_ISDIR(mode):
                raise LayerError(f"entry {name!r}: its parent {part!r} is not a directory (a path through a link)")
        return os.path.join(self.root, name)

    def plain_parents(self, name: str) -> bool:
        """Whether every parent of `name` is a directory of the layer (none a link)."""
        current = self.root
        for part in name.split("/")[:-1]:
            current = os.path.join(current, part)
            if not stat.S_ISDIR(os.lstat(current).st_mode) if os.path.lexists(current) else True:
                return False
        return True

    def clear(self, path: str, keep_directory: bool) -> None:
        """Remove what an earlier entry of the same name left (the later entry wins)."""
        try:
            mode = os.lstat(path).st_mode
        except FileNotFoundError:
            return
        if stat.S_ISDIR(mode):
            if keep_directory:
                return
            import shutil

            shutil.rmtree(path)
        else:
            os.unlink(path)

    def add(self, tar: tarfile.TarFile, member: tarfile.TarInfo) -> None:
        """Write one entry."""
        self.entries += 1
        if self.entries > self.limits.max_entries:
            raise LayerError(f"more than {self.limits.max_entries} entries")
        name = clean_name(member.name, self.limits)
        base = posixpath.basename(name)
        if base == OPAQUE:
            directory = self.path(name)[: -len(OPAQUE) - 1]
            os.makedirs(directory, 0o755, exist_ok=True)
            os.setxattr(directory, OPAQUE_XATTR, b"y", follow_symlinks=False)
            return
        if base.startswith(WHITEOUT):
            hidden = self.path(name)
            hidden = os.path.join(os.path.dirname(hidden), base[len(WHITEOUT):])
            self.clear(hidden, keep_directory=False)
            os.mknod(hidden, stat.S_IFCHR | 0o000, os.makedev(0, 0))
            return
        if not name:  # the layer's root: its mode and owner
            if member.isdir():
                self.directories.append((self.root, member))
            return
        path = self.path(name)
        if member.isdir():
            self.clear(path, keep_directory=True)
            if not os.path.isdir(path):
                os.mkdir(path, 0o700)
            self.directories.append((path, member))
            return
        self.clear(path, keep_directory=False)
        if member.isreg():
            self.file(tar, member, path)
        elif member.issym():
            self.symlink(member, name, path)
        elif member.islnk():
            target = clean_name(member.linkname, self.limits)
            source = os.path.join(self.root, target)
            if not target or not self.plain_parents(target) or not os.path.lexists(source) or os.path.isdir(
                    source):
                raise LayerError(f"entry {name!r}: hard link to {member.linkname!r}, not a file of this layer")
            os.link(source, path, follow_symlinks=False)
            return
        elif member.isfifo():
            os.mkfifo(path, 0o600)
        else:
            raise LayerError(f"entry {name!r}: device nodes and other special files are refused")
        self.metadata(path, member)

    def symlink(self, member: tarfile.TarInfo, name: str, path: str) -> None:
        target = member.linkname
        if not target or "\0" in target or len(target.encode(errors="surrogateescape")) > self.limits.max_name:
            raise LayerError(f"entry {name!r}: invalid link target")
        if not target.startswith("/"):  # relative: it must not climb above the root
            depth = len(name.split("/")) - 1
            for part in target.split("/"):
                depth += -1 if part == ".." else 0 if part in ("", ".") else 1
                if depth < 0:
                    raise LayerError(f"entry {name!r}: link to {target!r} leaves the root")
        os.symlink(target, path)

    def file(self, tar: tarfile.TarFile, member: tarfile.TarInfo, path: str) -> None:
        self.written += member.size
        if self.written > self.limits.max_bytes:
            raise LayerError(f"more than {self.limits.max_bytes} bytes unpacked")
        source = tar.extractfile(member)
        if source is None:
            raise LayerError(f"entry {member.name!r}: no contents")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        with os.fdopen(fd, "wb") as out:
            left = member.size
            while left > 0:
                chunk = source.read(min(CHUNK, left))
                if not chunk:
                    raise LayerError(f"entry {member.name!r}: truncated")
                out.write(chunk)
                left -= len(chunk)

    @staticmethod
    def metadata(path: str, member: tarfile.TarInfo) -> None:
        """Owner, mode (without setuid and setgid) and modification time; for links only owner and time."""
        os.lchown(path, member.uid, member.gid)
        if not member.issym():
            os.chmod(path, member.mode & 0o1777)
        os.utime(path, (member.mtime, member.mtime), follow_symlinks=False)

    def finish(self) -> None:
        for path, member in reversed(self.directories):
            self.metadata(path, member)


def unpack(stream: Readable, root: str, limits: Limits | None = None) -> tuple[str, int]:
    """Unpack the uncompressed layer `stream` into the empty directory `root`: its diffID (the sha256 of the
    tar stream) and the bytes of its files. LayerError for a layer that is refused, or not a tar stream."""
    limits = limits or Limits()
    reader = HashingReader(stream)
    unpacker = Unpacker(root, limits)
    try:
        with tarfile.open(fileobj=reader, mode="r|") as tar:  # type: ignore[call-overload]
            for member in tar:
                unpacker.add(tar, member)
    except tarfile.TarError as exc:
        raise LayerError(f"not a tar stream: {exc}") from None
    reader.drain()
    unpacker.finish()
    return reader.digest, unpacker.written
