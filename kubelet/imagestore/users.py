"""An image's `User` (`1000`, `1000:1000`, `app`, `app:staff`), as containerd resolves it: names through the
image's own /etc/passwd and /etc/group (read from its layers, topmost first, never through a link), a uid
without a group gets its passwd entry's primary group, else 0."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass

MAX_FILE = 4 << 20


@dataclass(frozen=True)
class ImageUser:
    """The user an image runs as. `uid`: the config's numeric user (None when it names one: upstream's kubelet
    then cannot tell whether it is root); `name`: the named user; `run_uid`/`gid`: what the container runs as
    (gid None: the passwd entry's primary group, else 0); `passwd`, `group`: the image's /etc/passwd and
    /etc/group ("" without one)."""

    uid: int | None = 0
    name: str = ""
    run_uid: int = 0
    gid: int | None = None
    passwd: str = ""
    group: str = ""


class UserError(ValueError):
    """A user or group the image does not have (the container cannot be created)."""


def image_file(layers: tuple[str, ...], path: str) -> str:
    """The file `path` (e.g. `etc/passwd`) of the union of `layers` (topmost first): "" when the top layer that
    has it hides it (a whiteout), it is not a regular file, or no layer has it."""
    for layer in layers:
        candidate = os.path.join(layer, path)
        parent = layer
        hidden = False
        for part in path.split("/")[:-1]:
            parent = os.path.join(parent, part)
            if os.path.islink(parent) or (os.path.lexists(parent) and not os.path.isdir(parent)):
                hidden = True
                break
        if hidden:
            return ""
        try:
            mode = os.lstat(candidate).st_mode
        except FileNotFoundError:
            continue
        return candidate if stat.S_ISREG(mode) else ""
    return ""


def _entries(path: str) -> list[list[str]]:
    if not path:
        return []
    try:
        with open(path, "rb") as handle:
            text = handle.read(MAX_FILE).decode(errors="replace")
    except OSError:
        return []
    return [line.split(":") for line in text.splitlines() if line and not line.startswith("#")]


def resolve_user(user: str, layers: tuple[str, ...]) -> ImageUser:
    """The ImageUser of a config's `User` for an image with `layers` (none: the host's files, as built-in
    images). UserError for a name the image's files do not have."""
    passwd = image_file(layers, "etc/passwd") if layers else "/etc/passwd"
    name, _, group = user.partition(":")
    uid: int | None
    if not name:
        uid, run_uid = 0, 0
        name = ""
    elif name.isdigit():
        uid = run_uid = int(name)
        name = ""
    else:
        found = next((e for e in _entries(passwd) if len(e) > 3 and e[0] == name and e[2].isdigit()), None)
        if found is None:
            raise UserError(f"unable to find user {name}: no matching entries in passwd file")
        uid, run_uid = None, int(found[2])
    gid: int | None = None
    if group:
        if group.isdigit():
            gid = int(group)
        else:
            groups = image_file(layers, "etc/group") if layers else "/etc/group"
            entry = next((e for e in _entries(groups) if len(e) > 2 and e[0] == group and e[2].isdigit()), None)
            if entry is None:
                raise UserError(f"unable to find group {group}: no matching entries in group file")
            gid = int(entry[2])
    return ImageUser(uid, name, run_uid, gid, passwd, image_file(layers, "etc/group") if layers else "/etc/group")


def primary_gid(uid: int, passwd: str) -> int:
    """The primary group of `uid` in `passwd`, else 0 (as containerd)."""
    for fields in _entries(passwd):
        if len(fields) > 3 and fields[2] == str(uid) and fields[3].isdigit():
            return int(fields[3])
    return 0


def additional_gids(uid: int, passwd: str, group: str) -> list[int]:
    """The groups the image's /etc/group makes `uid` a member of, as containerd's WithAdditionalGIDs: the
    groups (other than one named as the user) whose member list names the user `uid` has in `passwd`."""
    name = next((f[0] for f in _entries(passwd) if len(f) > 2 and f[2] == str(uid)), None)
    if name is None:
        return []
    return [int(f[2]) for f in _entries(group)
            if len(f) > 3 and f[2].isdigit() and f[0] != name and name in f[3].strip().split(",")]


def home_of(uid: int, passwd: str) -> str:
    """The home directory of `uid` in `passwd`, else `/` (as runc sets HOME when the environment has none)."""
    for fields in _entries(passwd):
        if len(fields) > 5 and fields[2] == str(uid) and fields[5]:
            return fields[5]
    return "/"
