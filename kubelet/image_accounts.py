"""The accounts of a built-in image: whom its containers run as (its config's User, root when it has none) and its
/etc/passwd and /etc/group, which are the host's (standing in for every built-in image's) with the users and
groups the image adds in place of any host entry of the same name or id. Files are written once per node and image, and bound read-only over the container's
/etc/passwd and /etc/group, so `id` names them and the kubelet finds the user's groups where containerd would."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from .images import Image
from .imagestore.users import ImageUser, resolve_user

HOST_FILES = {"passwd": "/etc/passwd", "group": "/etc/group"}
MAX_HOST_FILE = 1 << 20


def _written(directory: Path, name: str, lines: tuple[str, ...]) -> str:
    """The image's `lines` then the host's /etc/<name> less the entries whose name or id the image's have,
    under `directory` (named by its content: never rewritten in place while a container has it bound)."""
    try:
        with open(HOST_FILES[name], "rb") as handle:
            host = handle.read(MAX_HOST_FILE).decode(errors="replace").splitlines()
    except OSError:
        host = []
    taken = {(i, f) for line in lines for i, f in enumerate(line.split(":")[:3]) if i != 1}
    kept = [line for line in host if not any((i, f) in taken for i, f in enumerate(line.split(":")[:3]) if i != 1)]
    text = "".join(f"{line}\n" for line in (*lines, *kept))
    path = directory / f"{name}-{hashlib.sha256(text.encode()).hexdigest()[:16]}"
    if not path.exists():
        directory.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(".partial")
        partial.write_text(text)
        os.chmod(partial, 0o644)
        partial.replace(path)
    return str(path)


def has_accounts(image: Image) -> bool:
    """Whether the image's user or files differ from the host's."""
    return bool(image.user or image.passwd or image.group)


def image_accounts(image: Image, directory: Path) -> tuple[ImageUser, list[dict[str, Any]]]:
    """The image's user (with the paths of its /etc/passwd and /etc/group) and the read-only mounts that show
    those files in its containers."""
    passwd = _written(directory, "passwd", image.passwd) if image.passwd else HOST_FILES["passwd"]
    group = _written(directory, "group", image.group) if image.group else HOST_FILES["group"]
    user = resolve_user(image.user, ())
    user = ImageUser(user.uid, user.name, user.run_uid, user.gid, passwd, group)
    mounts = [{"source": source, "target": target, "readOnly": True}
              for source, target in ((passwd, "/etc/passwd"), (group, "/etc/group")) if source != target]
    return user, mounts
