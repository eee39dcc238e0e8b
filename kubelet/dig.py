"""`dig`, for images that have it (agnhost, jessie-dnsutils) on a host that lacks it: the queries and output the
conformance suite's DNS probes use, with dnspython. `dig [@server] [-p port] [-x addr] [+tcp|+notcp] [+search]
[+short] [+noall] [+answer] name [type]`: the server is resolv.conf's first nameserver unless named; `+search`
tries resolv.conf's search list as dig does (names with fewer dots than `ndots` first); `+short` prints each
answer's data, `+noall +answer` the answer section in dig's layout. Exit 0 with a reply (NXDOMAIN too), 9 without
one, 1 on a usage error. Run as `python -m mini_kube.kubelet.dig ARGS`."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

import dns.exception
import dns.message
import dns.name
import dns.query
import dns.rcode
import dns.rdatatype
import dns.reversename

RESOLV_CONF = "/etc/resolv.conf"
TIMEOUT = 5.0
TRIES = 3


@dataclass
class Query:
    """What the command line asks."""

    name: str = ""
    rdtype: str = "A"
    server: str = ""
    port: int = 53
    tcp: bool = False
    search: bool = False
    short: bool = False
    answer_only: bool = False
    extra: list[str] = field(default_factory=list)


def parse(argv: list[str]) -> Query:
    """The Query, or ValueError saying what dig would."""
    query = Query()
    args = list(argv)
    while args:
        arg = args.pop(0)
        if arg.startswith("@"):
            query.server = arg[1:]
        elif arg == "-p":
            query.port = int(args.pop(0)) if args else 53
        elif arg == "-x":
            if not args:
                raise ValueError("-x requires an address")
            query.name, query.rdtype = dns.reversename.from_address(args.pop(0)).to_text(), "PTR"
        elif arg.startswith("+"):
            option = arg[1:].lower()
            if option in ("tcp", "vc"):
                query.tcp = True
            elif option in ("notcp", "novc"):
                query.tcp = False
            elif option == "search":
                query.search = True
            elif option == "nosearch":
                query.search = False
            elif option == "short":
                query.short = True
            elif option == "noall":
                query.answer_only = True
            elif option == "answer":
                pass
            else:
                query.extra.append(option)
        elif arg.upper() in dns.rdatatype.RdataType.__members__ and query.name:
            query.rdtype = arg.upper()
        elif not query.name:
            query.name = arg
        else:
            query.rdtype = arg.upper()
    if not query.name:
        query.name, query.rdtype = ".", "NS"
    return query


def resolv_conf(path: str = RESOLV_CONF) -> tuple[list[str], list[str], int]:
    """(nameservers, search domains, ndots) of the container's resolv.conf."""
    servers: list[str] = []
    search: list[str] = []
    ndots = 1
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError:
        lines = []
    for line in lines:
        words = line.split()
        if not words or words[0].startswith(("#", ";")):
            continue
        if words[0] == "nameserver" and len(words) > 1:
            servers.append(words[1])
        elif words[0] in ("search", "domain"):
            search = words[1:]
        elif words[0] == "options":
            for option in words[1:]:
                if option.startswith("ndots:") and option[6:].isdigit():
                    ndots = int(option[6:])
    return servers or ["127.0.0.1"], search, ndots


def candidates(name: str, search: list[str], ndots: int, use_search: bool) -> list[str]:
    """The names dig tries, in order."""
    if name.endswith(".") or not use_search:
        return [name]
    qualified = [f"{name}.{domain}" for domain in search]
    return [name, *qualified] if name.count(".") >= ndots else [*qualified, name]


def ask(name: str, query: Query, server: str) -> dns.message.Message:
    """One query, over TCP or UDP (retried as dig does); dns.exception.Timeout when nothing answers."""
    message = dns.message.make_query(name, query.rdtype)
    for attempt in range(TRIES):
        try:
            if query.tcp:
                return dns.query.tcp(message, server, timeout=TIMEOUT, port=query.port)
            return dns.query.udp(message, server, timeout=TIMEOUT, port=query.port)
        except dns.exception.Timeout:
            if attempt == TRIES - 1:
                raise
    raise dns.exception.Timeout


def render(reply: dns.message.Message, query: Query) -> str:
    """The answer as `+short` or `+noall +answer` shows it (the full layout is not needed by anyone here)."""
    lines: list[str] = []
    for rrset in reply.answer:
        for rdata in rrset:
            if query.short:
                lines.append(rdata.to_text())
            else:
                lines.append(f"{rrset.name.to_text()}\t\t{rrset.ttl}\tIN\t{dns.rdatatype.to_text(rrset.rdtype)}\t"
                             f"{rdata.to_text()}")
    if not query.short and not query.answer_only:
        header = [f";; ->>HEADER<<- opcode: QUERY, status: {dns.rcode.to_text(reply.rcode())}, id: {reply.id}",
                  ";; ANSWER SECTION:"]
        lines = header + lines
    return "".join(f"{line}\n" for line in lines)


def main(argv: list[str]) -> int:
    try:
        query = parse(argv)
    except ValueError as error:
        print(f"Invalid option: {error}", file=sys.stderr)
        return 1
    servers, search, ndots = resolv_conf()
    server = query.server or servers[0]
    reply = None
    try:
        for name in candidates(query.name, search, ndots, query.search):
            reply = ask(name, query, server)
            if reply.rcode() == dns.rcode.NOERROR and reply.answer:
                break
    except (dns.exception.Timeout, OSError):
        print(";; connection timed out; no servers could be reached", file=sys.stdout)
        return 9
    except (dns.exception.DNSException, ValueError) as error:
        print(f";; {error}", file=sys.stderr)
        return 10
    if reply is not None:
        sys.stdout.write(render(reply, query))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
