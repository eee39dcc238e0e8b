"""`python -m mini_kube.build_ash`: the install step that builds upstream busybox's ash, the `sh` of the busybox
and alpine images (kubelet/busybox_ash.py), into the serving installation (under sys.prefix). Not part of the
server, which never dials anything but loopback: the README's set-up commands run it once after `pip install`.

Upstream's release tarball, as Debian's archive keeps it unchanged (the `.orig` tarball; Debian's own patches,
which make ash drop environment variables such as `data-1`, are in another file and not applied), pinned by its
sha256, built with only ash (as `sh` and `ash`, the usual builtins; other commands come from PATH). The tarball
and the built binary are cached (`$XDG_CACHE_HOME/mini-kube`, else `~/.cache/mini-kube`), so a second venv
installs in milliseconds; an installation already built says so and stops. Without a C compiler, make or the
network it says so in one line and exits 0: the images' `sh` stays bash."""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.request
from pathlib import Path

from mini_kube.kubelet.busybox_ash import ASH_DIR, BIN_DIR, BINARY, VERSION, installed_ash

SHA256 = "3311dff32e746499f4df0d5df04d7eb396382d7e108bb9250e7b519b837043a4"  # as Debian's .dsc and busybox.net
TARBALL = f"busybox_{VERSION}.orig.tar.bz2"
SOURCES = (f"https://deb.debian.org/debian/pool/main/b/busybox/{TARBALL}",
           f"https://busybox.net/downloads/busybox-{VERSION}.tar.bz2")
DOWNLOAD_TIMEOUT = 60
# on top of `make allnoconfig`: ash as defconfig has it (the images' busybox is defconfig's), line editing for a
# terminal, no other applet; FEATURE_SH_STANDALONE stays off, so `sleep`, `cat`... are found on PATH
CONFIG = """
CONFIG_DESKTOP=y
CONFIG_LONG_OPTS=y
CONFIG_FEATURE_BUFFERS_USE_MALLOC=y
CONFIG_FEATURE_EDITING=y
CONFIG_FEATURE_EDITING_MAX_LEN=1024
CONFIG_FEATURE_EDITING_HISTORY=255
CONFIG_FEATURE_EDITING_SAVEHISTORY=y
CONFIG_FEATURE_TAB_COMPLETION=y
CONFIG_FEATURE_EDITING_FANCY_PROMPT=y
CONFIG_FEATURE_EDITING_WINCH=y
CONFIG_FEATURE_FANCY_ECHO=y
CONFIG_FEATURE_TEST_64=y
CONFIG_SH_IS_ASH=y
CONFIG_BASH_IS_NONE=y
CONFIG_SHELL_ASH=y
CONFIG_ASH=y
CONFIG_ASH_OPTIMIZE_FOR_SIZE=y
CONFIG_ASH_INTERNAL_GLOB=y
CONFIG_ASH_BASH_COMPAT=y
CONFIG_ASH_BASH_NOT_FOUND_HOOK=y
CONFIG_ASH_JOB_CONTROL=y
CONFIG_ASH_ALIAS=y
CONFIG_ASH_RANDOM_SUPPORT=y
CONFIG_ASH_EXPAND_PRMT=y
CONFIG_ASH_IDLE_TIMEOUT=y
CONFIG_ASH_MAIL=y
CONFIG_ASH_ECHO=y
CONFIG_ASH_PRINTF=y
CONFIG_ASH_TEST=y
CONFIG_ASH_HELP=y
CONFIG_ASH_GETOPTS=y
CONFIG_ASH_CMDCMD=y
CONFIG_FEATURE_SH_MATH=y
CONFIG_FEATURE_SH_MATH_64=y
CONFIG_FEATURE_SH_MATH_BASE=y
CONFIG_FEATURE_SH_EXTRA_QUIET=y
CONFIG_FEATURE_SH_READ_FRAC=y
CONFIG_FEATURE_SH_HISTFILESIZE=y
"""
BUILD_ID = hashlib.sha256(f"{VERSION} {SHA256} {CONFIG}".encode()).hexdigest()[:16]  # what a build is made of
STAMP = ASH_DIR / "built-from"
FALLBACK = "the busybox and alpine images' sh stays bash"


class NotBuilt(Exception):
    """Why ash could not be built here (said in one line; the installation keeps the bash fallback)."""


def cache_dir() -> Path:
    """Where downloaded tarballs and built binaries are kept between installations."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "mini-kube"


def configured(allnoconfig: str) -> str:
    """`make allnoconfig`'s .config with CONFIG's settings in place of its own."""
    wanted = dict(line.split("=", 1) for line in CONFIG.split())
    lines = []
    for line in allnoconfig.splitlines():
        found = re.match(r"# (CONFIG_\w+) is not set$|(CONFIG_\w+)=", line)
        key = found and (found.group(1) or found.group(2))
        lines.append(f"{key}={wanted.pop(key)}" if key in wanted else line)
    return "\n".join([*lines, *(f"{key}={value}" for key, value in wanted.items())]) + "\n"


def tarball() -> Path:
    """The release tarball, from the cache or downloaded, its sha256 checked."""
    path = cache_dir() / TARBALL
    if path.is_file() and hashlib.sha256(path.read_bytes()).hexdigest() == SHA256:
        return path
    problems = []
    for url in SOURCES:
        try:
            with urllib.request.urlopen(url, timeout=DOWNLOAD_TIMEOUT) as response:
                data = response.read()
        except OSError as error:
            problems.append(f"{url}: {error}")
            continue
        if hashlib.sha256(data).hexdigest() != SHA256:
            problems.append(f"{url}: sha256 {hashlib.sha256(data).hexdigest()}, not the pinned {SHA256}")
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f".{path.name}.{os.getpid()}")
        partial.write_bytes(data)
        partial.replace(path)
        return path
    raise NotBuilt(f"no busybox {VERSION} tarball ({'; '.join(problems)})")


def run(argv: list[str], cwd: Path, log: Path, stdin: str = "") -> None:
    """One build step, its output appended to `log`; a failure names the step and its last line."""
    with log.open("a") as out:
        done = subprocess.run(argv, cwd=cwd, input=stdin, stdout=out, stderr=subprocess.STDOUT, text=True)
    if done.returncode != 0:
        kept = cache_dir() / "busybox-ash-build.log"  # the work directory goes
        kept.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(log, kept)
        last = log.read_text().strip().splitlines()[-1:] or [""]
        raise NotBuilt(f"`{' '.join(argv)}` failed ({last[0]}; its log: {kept})")


def build(work: Path) -> Path:
    """Unpack, configure and build busybox in `work`; returns the binary."""
    for tool in ("make", "gcc"):
        if shutil.which(tool) is None:
            raise NotBuilt(f"no `{tool}` to build it with")
    with tarfile.open(tarball()) as archive:
        archive.extractall(work, filter="data")
    source = work / f"busybox-{VERSION}"
    log = work / "build.log"
    run(["make", "allnoconfig"], source, log)
    (source / ".config").write_text(configured((source / ".config").read_text()))
    run(["make", "oldconfig"], source, log, stdin="\n" * 2000)  # any question left: its default
    run(["make", f"-j{os.cpu_count() or 1}", "busybox"], source, log)
    binary = source / "busybox"
    (work / "sh").symlink_to(binary)
    said = subprocess.run([str(work / "sh"), "-c", "[[ a == a ]] && echo ok"], capture_output=True, text=True)
    if said.stdout != "ok\n":
        raise NotBuilt(f"the built shell does not run ({said.stderr.strip()})")
    return binary


def install(binary: Path) -> None:
    """Put `binary` in the installation as BINARY, with `sh` and `ash` beside it in BIN_DIR; each file renamed
    into place, so a container starting meanwhile never sees half of one."""
    BIN_DIR.mkdir(parents=True, exist_ok=True)
    partial = BINARY.with_name(f".{BINARY.name}.{os.getpid()}")
    shutil.copyfile(binary, partial)
    partial.chmod(0o755)
    partial.replace(BINARY)
    for name in ("sh", "ash"):
        link = BIN_DIR / f".{name}.{os.getpid()}"
        link.symlink_to(os.path.relpath(BINARY, BIN_DIR))
        link.replace(BIN_DIR / name)
    STAMP.write_text(BUILD_ID + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mini_kube.build_ash", description=__doc__.split("\n\n")[0])
    parser.add_argument("--rebuild", action="store_true", help="build again, ignoring the cache and the installed one")
    args = parser.parse_args(argv)
    if not args.rebuild and installed_ash() and STAMP.is_file() and STAMP.read_text().strip() == BUILD_ID:
        print(f"busybox ash {VERSION}: already built in {ASH_DIR}")
        return 0
    cached = cache_dir() / f"busybox-ash-{BUILD_ID}"
    started = time.monotonic()
    how = "from the cache"
    try:
        if args.rebuild or not cached.is_file():
            how = "built"
            with tempfile.TemporaryDirectory(prefix="mini-kube-ash-") as work:
                binary = build(Path(work))
                cached.parent.mkdir(parents=True, exist_ok=True)
                partial = cached.with_name(f".{cached.name}.{os.getpid()}")
                shutil.copyfile(binary, partial)
                partial.replace(cached)
        install(cached)
    except (NotBuilt, OSError) as error:
        kept = "the one built before stays" if installed_ash() else FALLBACK
        print(f"busybox ash {VERSION}: not built: {error}; {kept}")
        return 0
    print(f"busybox ash {VERSION}: {how} in {time.monotonic() - started:.1f} s, installed in {ASH_DIR}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
