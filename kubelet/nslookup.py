"""`nslookup`, for the images that have one (agnhost's and jessie-dnsutils' from BIND, busybox's applet): a name's
A and AAAA records (or `-type=T`) from resolv.conf's first nameserver (or the server named after the name),
through its search list as nslookup tries it; `-x`-style reverse lookups of an address (PTR). Output in the
layout of BIND's nslookup (`--busybox`: the applet's, whose server line reads `ADDR:53`); exit 0 with an
answer, 1 without (`** server can't find NAME: NXDOMAIN`) or when no server answers. Run as
`python -m mini_kube.kubelet.nslookup [--busybox] ARGS`."""

from __future__ import annotations

import ipaddress
import sys
from dataclasses import dataclass

import dns.exception
import dns.flags
import dns.message
import dns.rcode
import dns.rdatatype
import dns.reversename

from .dig import Query, ask, candidates, resolv_conf


@dataclass
class Lookup:
    """What the command line asks."""

    name: str = ""
    server: str = ""
    types: tuple[str, ...] = ("A", "AAAA")
    port: int = 53
    busybox: bool = False


def parse(argv: list[str]) -> Lookup:
    """The Lookup, or ValueError saying what is wrong."""
    lookup = Lookup()
    positional: list[str] = []
    for arg in argv:
        if arg == "--busybox":
            lookup.busybox = True
        elif arg.startswith("-") and "=" in arg:
            option, _, value = arg[1:].partition("=")
            if option.lower() in ("type", "query", "querytype", "q", "ty"):
                lookup.types = (value.upper(),)
            elif option.lower() == "port" and value.isdigit():
                lookup.port = int(value)
        elif not arg.startswith("-"):
            positional.append(arg)
    if not positional:
        raise ValueError("a name to look up is needed")
    lookup.name = positional[0]
    if len(positional) > 1:
        lookup.server = positional[1]
    try:
        address = ipaddress.ip_address(lookup.name)
    except ValueError:
        return lookup
    lookup.name, lookup.types = dns.reversename.from_address(str(address)).to_text(), ("PTR",)
    return lookup


def record_lines(reply: dns.message.Message) -> list[str]:
    """Each answer as nslookup prints it."""
    lines: list[str] = []
    for rrset in reply.answer:
        owner = rrset.name.to_text(omit_final_dot=True)
        for rdata in rrset:
            kind = dns.rdatatype.to_text(rrset.rdtype)
            if kind in ("A", "AAAA"):
                lines += [f"Name:\t{owner}", f"Address: {rdata.to_text()}"]
            elif kind == "CNAME":
                lines.append(f"{owner}\tcanonical name = {rdata.to_text()}")
            elif kind == "PTR":
                lines.append(f"{owner}\tname = {rdata.to_text()}")
            else:
                lines.append(f"{owner}\t{kind.lower()} = {rdata.to_text()}")
    return lines


def main(argv: list[str]) -> int:
    try:
        lookup = parse(argv)
    except ValueError as error:
        print(f"nslookup: {error}", file=sys.stderr)
        return 1
    servers, search, ndots = resolv_conf()
    server = lookup.server or servers[0]
    separator = ":" if lookup.busybox else "#"
    out = [f"Server:\t\t{server}", f"Address:\t{server}{separator}{lookup.port}", ""]
    found: list[str] = []
    authoritative = True
    failure = "NXDOMAIN"  # why nothing was found: the last refusal, or "No answer" once a name existed
    try:
        for rdtype in lookup.types:
            query = Query(rdtype=rdtype, port=lookup.port)
            for name in candidates(lookup.name, search, ndots, True):
                reply = ask(name, query, server)
                if reply.rcode() == dns.rcode.NOERROR:  # the name exists: the search ends here
                    failure = "No answer"
                    if reply.answer:
                        authoritative = authoritative and bool(reply.flags & dns.flags.AA)
                    found += record_lines(reply)
                    break
                if reply.rcode() != dns.rcode.NXDOMAIN:
                    failure = dns.rcode.to_text(reply.rcode())
    except (dns.exception.Timeout, OSError):
        print(";; connection timed out; no servers could be reached\n")
        return 1
    if not found:
        if failure == "No answer":
            out.append(f"*** Can't find {lookup.name.rstrip('.')}: No answer")
        else:
            out.append(f"** server can't find {lookup.name.rstrip('.')}: {failure}")
        print("\n".join(out) + "\n")
        return 1
    if not authoritative:
        out.append("Non-authoritative answer:")
    print("\n".join(out + found) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
