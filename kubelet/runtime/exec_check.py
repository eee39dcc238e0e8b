"""Why a command cannot be exec'd in a running container, found before nsenter runs it, in the runtime's words
(`exec: "/x": stat /x: no such file or directory`, as runc says it) rather than nsenter's: the container's
process is gone, or the command is not in the container's root or on its PATH."""

from __future__ import annotations

import os


class ExecError(OSError):
    """A command that cannot start in the container (the exec fails before anything runs)."""


def resolve_in(root: str, path: str) -> str:
    """`path` under `root` with its links followed as the container follows them: an absolute link (an image's
    /bin/sh -> /bin/busybox) from the container's root, not the host's."""
    parts = [p for p in path.split("/") if p not in ("", ".")]
    done: list[str] = []
    hops = 40
    while parts:
        part = parts.pop(0)
        if part == "..":
            if done:
                done.pop()
            continue
        candidate = os.path.join(root, *done, part)
        if hops and os.path.islink(candidate):
            hops -= 1
            link = os.readlink(candidate)
            if link.startswith("/"):
                done = []
            parts = [p for p in link.split("/") if p not in ("", ".")] + parts
            continue
        done.append(part)
    return os.path.join(root, *done)


def exec_problem(pid: int | None, argv: list[str], path: str) -> str | None:
    """What keeps `argv` from being exec'd in the container whose main process is `pid`, or None."""
    if pid is None or not os.path.exists(f"/proc/{pid}/ns/uts"):
        return "container not running"
    if not argv:
        return None
    root = f"/proc/{pid}/root"
    name = argv[0]
    if "/" in name:
        where = name if name.startswith("/") else os.path.join(os.readlink(f"/proc/{pid}/cwd"), name)
        full = resolve_in(root, where)
        if not os.path.exists(full):
            return f'exec: "{name}": stat {name}: no such file or directory'
        if os.path.isdir(full) or not os.access(full, os.X_OK):
            return f'exec: "{name}": permission denied'
        return None
    for folder in path.split(":"):
        candidate = resolve_in(root, os.path.join(folder, name)) if folder.startswith("/") else ""
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return None
    return f'exec: "{name}": executable file not found in $PATH'
