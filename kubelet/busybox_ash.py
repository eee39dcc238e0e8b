"""Upstream busybox's ash, the `sh` of the busybox and alpine images, where the install step built it into the
serving installation (`python -m mini_kube.build_ash`, which the README's set-up commands run): a busybox with
only ash (`sh`, `ash`) under sys.prefix, which every container sees read-only (kubelet/runtime/process.py keeps
the prefix). Without it those images' `sh` is bash (kubelet/image_bin/shell), which words some errors as bash
does."""

from __future__ import annotations

import os
import sys
from pathlib import Path

VERSION = "1.37.0"
ASH_DIR = Path(sys.prefix) / "libexec" / "mini-kube" / "busybox-ash"
BINARY = ASH_DIR / "busybox"  # a busybox whose applets are ash and sh (it runs the one its name says)
BIN_DIR = ASH_DIR / "bin"  # `sh` and `ash`, links to BINARY: first on the images' PATH


def installed_ash() -> Path | None:
    """The built busybox (its real path, for binding at an image's /bin/sh), or None when it was not built."""
    if not os.access(BINARY, os.X_OK) or not (BIN_DIR / "sh").exists():
        return None
    return Path(os.path.realpath(BINARY))
