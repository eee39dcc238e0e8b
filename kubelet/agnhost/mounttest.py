"""`agnhost mounttest`: make files with given permissions and print the file system type, mode, permissions,
owner and content of the paths given, in upstream's order and with its exact lines (`mount type of "/x": tmpfs`,
`mode of file "/x": -rw-r--r--`); exit 1 if any step failed."""

from __future__ import annotations

import ctypes
import ctypes.util
import json
import os
import stat
import time

from .flags import Flag, parse_or_exit

FLAGS = {name: Flag(str, "") for name in (
    "fs_type", "file_mode", "file_perm", "file_owner", "new_file_0644", "new_file_0666", "new_file_0660",
    "new_file_0777", "file_content", "file_content_in_loop")}
FLAGS |= {"retry_time": Flag(int, 180), "break_on_expected_content": Flag(bool, True)}
INITIAL_CONTENT = "mount-tester new file\n"
TMPFS_MAGIC = 0x01021994
TYPE_LETTERS = "dalTLDpSugct?"


def quote(path: str) -> str:
    """Go's %q of a string."""
    return json.dumps(path, ensure_ascii=False)


def go_error(op: str, path: str, error: OSError) -> str:
    """An *os.PathError's text: `open /x: no such file or directory`."""
    return f"{op} {path}: {(error.strerror or str(error)).lower()}"


def go_mode(mode: int, perm_only: bool = False) -> str:
    """Go's FileMode.String() of a stat mode (`drwxrwxrwt` is `dtrwxrwxrwx`); `perm_only`: Mode().Perm()."""
    bits = "rwxrwxrwx"
    perms = "".join(bits[i] if mode & (1 << (8 - i)) else "-" for i in range(9))
    if perm_only:
        return "-" + perms
    kinds = {"d": stat.S_ISDIR(mode), "L": stat.S_ISLNK(mode), "D": stat.S_ISBLK(mode) or stat.S_ISCHR(mode),
             "p": stat.S_ISFIFO(mode), "S": stat.S_ISSOCK(mode), "u": bool(mode & stat.S_ISUID),
             "g": bool(mode & stat.S_ISGID), "c": stat.S_ISCHR(mode), "t": bool(mode & stat.S_ISVTX)}
    letters = "".join(letter for letter in TYPE_LETTERS if kinds.get(letter))
    return (letters or "-") + perms


def statfs_type(path: str) -> int:
    """statfs(2)'s f_type (the first word of struct statfs on 64-bit Linux)."""
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    buffer = ctypes.create_string_buffer(256)
    if libc.statfs(os.fsencode(path), buffer) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, os.strerror(errno))
    return ctypes.c_long.from_buffer(buffer).value


def fs_type(path: str) -> bool:
    try:
        kind = statfs_type(path)
    except OSError as error:
        print(f"error from statfs({quote(path)}): {(error.strerror or '').lower()}")
        return False
    print(f"mount type of {quote(path)}: {'tmpfs' if kind == TMPFS_MAGIC else kind}")
    return True


def read_content(path: str) -> bool:
    try:
        with open(path, "rb") as handle:
            content = handle.read().decode(errors="replace")
    except OSError as error:
        print(f"error reading file content for {quote(path)}: {go_error('open', path, error)}")
        return False
    print(f"content of file {quote(path)}: {content}")
    return True


def write_new(path: str, perm: int) -> bool:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, perm)
        with os.fdopen(fd, "w") as handle:
            handle.write(INITIAL_CONTENT)
    except OSError as error:
        print(f"error writing new file {quote(path)}: {go_error('open', path, error)}")
        return False
    return read_content(path)


def stat_line(path: str, what: str, perm_only: bool) -> bool:
    try:
        mode = os.stat(path).st_mode
    except OSError as error:
        print(f"error from Stat({quote(path)}): {go_error('stat', path, error)}")
        return False
    print(f"{what} of file {quote(path)}: {go_mode(mode, perm_only)}")
    return True


def owner(path: str) -> bool:
    try:
        info = os.stat(path)
    except OSError as error:
        print(f"error from stat({quote(path)}): {(error.strerror or '').lower()}")
        return False
    print(f"owner UID of {quote(path)}: {info.st_uid}")
    print(f"owner GID of {quote(path)}: {info.st_gid}")
    return True


def content_in_loop(path: str, retry: int, break_on_expected: bool) -> bool:
    ok, start = False, time.monotonic()
    while time.monotonic() - start < retry:
        try:
            with open(path, "rb") as handle:
                content = handle.read().decode(errors="replace")
        except OSError as error:
            print(f"Error reading file {path}: {go_error('open', path, error)}, retrying", flush=True)
            ok = False
        else:
            ok = True
            print(f"content of file {quote(path)}: {content}", flush=True)
            if break_on_expected and content == INITIAL_CONTENT:
                break
            if break_on_expected:
                print(f"Unexpected content. Expected: {INITIAL_CONTENT}. Retrying", flush=True)
        time.sleep(2)
    return ok


def main(argv: list[str]) -> int:
    """Each step in upstream's order (fs type, new files, mode, perms, owner, content, content in a loop)."""
    opts = parse_or_exit("mounttest", FLAGS, argv)
    os.umask(0)
    results = []
    if opts["fs_type"]:
        results.append(fs_type(opts["fs_type"]))
    for perm in (0o644, 0o666, 0o660, 0o777):
        if opts[f"new_file_0{perm:o}"]:
            results.append(write_new(opts[f"new_file_0{perm:o}"], perm))
    if opts["file_mode"]:
        results.append(stat_line(opts["file_mode"], "mode", False))
    if opts["file_perm"]:
        results.append(stat_line(opts["file_perm"], "perms", True))
    if opts["file_owner"]:
        results.append(owner(opts["file_owner"]))
    if opts["file_content"]:
        results.append(read_content(opts["file_content"]))
    if opts["file_content_in_loop"]:
        results.append(content_in_loop(opts["file_content_in_loop"], opts["retry_time"],
                                       opts["break_on_expected_content"]))
    return 0 if all(results) else 1
