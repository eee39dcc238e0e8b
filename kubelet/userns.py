"""User namespaces for Pods with `hostUsers: false`, allocated as upstream's kubelet allocates them
(pkg/kubelet/userns): each such Pod gets 65536 IDs of its own, one block starting at a multiple of 65536 from
65536 up (the first free one), mapped to IDs 0-65535 inside, the same for users and groups. Root in the Pod is
an unprivileged ID on the host, and no two Pods share an ID.

The nodes of one server, and other mini-kube processes, share the machine's kernel, where IDs are global: a
block is taken by holding an exclusive lock on a file named after it (under /run/mini-kube/userns, root's
only), so no block is given twice on this machine, and a crashed process's blocks come free with it (the kernel
drops its locks). A Pod's block is released when its sandbox goes, and its file with it."""

from __future__ import annotations

import contextlib
import fcntl
import functools
import os
import platform
import re
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

BLOCK = 1 << 16  # the IDs of one Pod (upstream's userNsLength)
FIRST = BLOCK  # the first block's first ID (upstream's default, with no `kubelet` entry in /etc/subuid)
BLOCKS = (1 << 32) // BLOCK - 1  # upstream's default range: every block from 65536 to 2^32


@dataclass(frozen=True)
class IdMapping:
    """IDs [container, container+length) inside are [host, host+length) on the host (users and groups)."""

    host: int
    length: int = BLOCK
    container: int = 0

    def line(self) -> str:
        """As /proc/<pid>/uid_map and gid_map take it."""
        return f"{self.container} {self.host} {self.length}\n"


UNSUPPORTED = "can't set `spec.hostUsers: false`, runtime does not support user namespaces"  # upstream's words


@functools.cache
def host_supports() -> bool:
    """kernel_supports for this machine's kernel (asked once)."""
    return kernel_supports(platform.release())


def kernel_supports(release: str) -> bool:
    """Whether a kernel of `release` can run a Pod in a user namespace as mini-kube runs it: user namespaces, and
    idmapped mounts of tmpfs (Linux 6.3: the Pod's token, ConfigMap and Secret volumes live on one) and of the
    disk's filesystems (5.12+)."""
    found = re.match(r"(\d+)\.(\d+)", release)
    if not found or (int(found[1]), int(found[2])) < (6, 3):
        return False
    try:
        with open("/proc/sys/user/max_user_namespaces", encoding="ascii") as handle:
            return int(handle.read()) > 0 and os.path.exists("/proc/self/ns/user")
    except (OSError, ValueError):
        return False


class UserNamespaceError(OSError):
    """No block can be given (the sandbox cannot be made: FailedCreatePodSandBox)."""


def lock_directory() -> Path:
    """Where the blocks' lock files live: /run/mini-kube/userns, or under the temp dir without /run."""
    base = Path("/run") if os.path.isdir("/run") and os.access("/run", os.W_OK) else Path(tempfile.gettempdir())
    return base / "mini-kube" / "userns"


class UserNamespaces:
    """The blocks this process holds, by Pod UID."""

    def __init__(self, directory: Path | None = None, blocks: int = BLOCKS) -> None:
        self.directory = directory or lock_directory()
        self.blocks = blocks
        self._held: dict[str, tuple[IdMapping, int]] = {}  # pod uid -> (its mapping, its lock file's fd)
        self._lock = threading.Lock()  # allocations run in executor threads
        self._swept = False

    def allocate(self, pod_uid: str) -> IdMapping:
        """The Pod's block (the one it holds already, else the first free one on the machine). Blocking (a few
        system calls per block tried): run it off the event loop. UserNamespaceError where the kernel cannot
        run one, with upstream's message."""
        if not host_supports():
            raise UserNamespaceError(UNSUPPORTED)
        with self._lock:
            if pod_uid in self._held:
                return self._held[pod_uid][0]
            self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            if not self._swept:
                self._sweep()
            for index in range(self.blocks):
                mapping = IdMapping(FIRST + index * BLOCK)
                fd = self._take(self.directory / str(mapping.host))
                if fd is not None:
                    self._held[pod_uid] = (mapping, fd)
                    return mapping
        raise UserNamespaceError("create user namespace: could not find an empty slot to allocate a user namespace")

    def release(self, pod_uid: str) -> None:
        """Give the Pod's block back (nothing when it holds none)."""
        with self._lock:
            held = self._held.pop(pod_uid, None)
            if held is None:
                return
            mapping, fd = held
            with contextlib.suppress(OSError):  # removed while still locked: no one holds the name meanwhile
                os.unlink(self.directory / str(mapping.host))
            os.close(fd)

    def release_all(self) -> None:
        for pod_uid in list(self.held()):
            self.release(pod_uid)

    def held(self) -> dict[str, IdMapping]:
        with self._lock:
            return {uid: mapping for uid, (mapping, _) in self._held.items()}

    def _sweep(self) -> None:
        """Remove the files of blocks no process holds (a crashed one's), once, at the first allocation: each is
        locked first, so a block in use is never touched (and one another process is just taking, it takes
        again)."""
        self._swept = True
        for path in self.directory.iterdir():
            fd = self._take(path, create=False)
            if fd is not None:
                with contextlib.suppress(OSError):
                    path.unlink()
                os.close(fd)

    @staticmethod
    def _take(path: Path, create: bool = True) -> int | None:
        """An fd holding the lock on `path`, or None when another holds it. A file removed by its holder between
        our open and our lock is not the block's any more: try the name again."""
        for _ in range(3):
            try:
                fd = os.open(path, os.O_RDWR | os.O_CLOEXEC | (os.O_CREAT if create else 0), 0o600)
            except FileNotFoundError:
                return None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                return None
            try:
                same = os.stat(path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if same:
                return fd
            os.close(fd)
        return None
