"""`agnhost etc-hosts`, `dns-suffix` and `dns-server-list`: print the container's /etc/hosts, the `search` list of
its /etc/resolv.conf joined by commas, and the addresses of its first `nameserver` line, as upstream's (a file that
cannot be read, or a resolv.conf without the line asked for, is Go's panic: exit 2)."""

from __future__ import annotations

import sys
from collections.abc import Callable

from .flags import parse_or_exit

ETC_HOSTS = "/etc/hosts"
RESOLV_CONF = "/etc/resolv.conf"


class Panic(Exception):
    """What upstream panics with."""


def read(path: str) -> str:
    """The file's text (os.ReadFile), or a panic."""
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as handle:
            return handle.read()
    except OSError as error:
        raise Panic(f"open {path}: {(error.strerror or str(error)).lower()}") from None


def line_fields(path: str, keyword: str) -> list[str]:
    """The words after `keyword` on the first line starting with it (Go's strings.Split on one space)."""
    for line in read(path).split("\n"):
        if line.startswith(keyword):
            return line.split(" ")[1:]
    raise Panic("Could not find DNS search list!")


def run(command: str, argv: list[str], produce: Callable[[], str]) -> int:
    """Print what `produce` returns and a newline (fmt.Println), or panic as Go does."""
    parse_or_exit(command, {}, argv)
    try:
        text = produce()
    except Panic as panic:
        sys.stderr.write(f"panic: {panic}\n\ngoroutine 1 [running]:\n")
        return 2
    sys.stdout.write(text + "\n")
    sys.stdout.flush()
    return 0


def etc_hosts(argv: list[str]) -> int:
    """The hosts file as it is, and a newline (fmt.Println)."""
    return run("etc-hosts", argv, lambda: read(ETC_HOSTS))


def dns_suffix(argv: list[str]) -> int:
    """`search` domains, comma-separated."""
    return run("dns-suffix", argv, lambda: ",".join(line_fields(RESOLV_CONF, "search")))


def dns_server_list(argv: list[str]) -> int:
    """The first `nameserver` line's addresses, comma-separated."""
    return run("dns-server-list", argv, lambda: ",".join(line_fields(RESOLV_CONF, "nameserver")))
