"""`nc`, for the images that have one (agnhost's netcat-openbsd, busybox's applet): the options the conformance
suite and everyday scripts use, as OpenBSD's netcat behaves. `nc [-46kltuNnUvz] [-p port] [-s addr] [-w secs]
[-q secs] [host] [port]`:

- connect (TCP, `-u` UDP, `-U` a Unix socket), copy stdin to the peer and the peer to stdout until the peer
  closes, or for `-w` seconds nothing comes (also the connect timeout); after stdin's end the write side stays
  open (`-N` shuts it down, `-q N` quits N seconds later);
- `-l` listen instead (on `-p`/the port argument, or a Unix socket with `-U`), serving one peer, or with `-k`
  one after another;
- `-z` only connects (UDP: sends probes and fails on a refusal); `-v` says so on stderr, as netcat words it;
- exit 0 on success, 1 when the connection failed (or a usage error).

Run as `python -m mini_kube.kubelet.nc ARGS`."""

from __future__ import annotations

import errno
import os
import selectors
import socket
import sys
import time
from dataclasses import dataclass

CHUNK = 65536
UDP_PROBES = 3  # datagrams -z sends to a UDP port (a refusal arrives as an error on a later one)


class Usage(ValueError):
    """A command line nc refuses."""


@dataclass
class Options:
    """What the command line asks."""

    host: str = ""
    port: str = ""
    listen: bool = False
    keep: bool = False
    udp: bool = False
    unix: bool = False
    verbose: bool = False
    scan: bool = False
    numeric: bool = False
    shutdown_on_eof: bool = False
    quit_after_eof: float | None = None  # -q: seconds after stdin's end (None: never)
    timeout: float | None = None  # -w
    source_port: int | None = None
    source_address: str = ""
    family: int = socket.AF_UNSPEC


def number(flag: str, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise Usage(f"{flag}: invalid number {text!r}") from None
    return value


def parse(argv: list[str]) -> Options:
    """The Options, or Usage saying what is wrong."""
    options = Options()
    positional: list[str] = []
    args = list(argv)
    while args:
        arg = args.pop(0)
        if arg == "--" or not arg.startswith("-") or arg == "-":
            positional.extend([arg] if arg != "--" else [])
            if arg == "--":
                positional.extend(args)
                break
            continue
        letters = arg[1:]
        while letters:
            letter, letters = letters[0], letters[1:]
            if letter in "pswqi":
                value = letters or (args.pop(0) if args else "")
                letters = ""
                if not value:
                    raise Usage(f"option requires an argument -- {letter}")
                if letter == "p":
                    options.source_port = int(number("-p", value))
                elif letter == "s":
                    options.source_address = value
                elif letter == "w":
                    options.timeout = max(number("-w", value), 0.001)
                elif letter == "q":
                    seconds = number("-q", value)
                    options.quit_after_eof = None if seconds < 0 else seconds
                continue  # -i (interval between lines) is accepted and ignored
            flag = {"l": "listen", "k": "keep", "u": "udp", "U": "unix", "v": "verbose", "z": "scan",
                    "n": "numeric", "N": "shutdown_on_eof"}.get(letter)
            if flag is not None:
                setattr(options, flag, True)
            elif letter == "4":
                options.family = socket.AF_INET
            elif letter == "6":
                options.family = socket.AF_INET6
            elif letter not in "tdDC":  # -t (TCP, the default), -d (no stdin), -D, -C: nothing to do here
                raise Usage(f"invalid option -- '{letter}'")
    if options.unix:
        if len(positional) != 1:
            raise Usage("a Unix socket's path is needed")
        options.host = positional[0]
        return options
    if options.listen:
        if len(positional) == 2:
            options.source_address, options.port = positional
        elif len(positional) == 1:
            options.port = positional[0]
        elif options.source_port is not None:
            options.port = str(options.source_port)
        else:
            raise Usage("missing port number")
        return options
    if len(positional) != 2:
        raise Usage("missing hostname and port" if not positional else "missing port number")
    options.host, options.port = positional
    return options


def service(port: int, udp: bool) -> str:
    """The port's name in /etc/services, as netcat's report shows it ('*' when it has none)."""
    try:
        return socket.getservbyport(port, "udp" if udp else "tcp")
    except OSError:
        return "*"


def warn(message: str) -> None:
    sys.stderr.write(f"nc: {message}\n")
    sys.stderr.flush()


def addresses(options: Options, host: str | None, passive: bool = False) -> list[tuple]:
    """getaddrinfo's answers for the host and port asked."""
    flags = (socket.AI_NUMERICHOST if options.numeric and host else 0) | (socket.AI_PASSIVE if passive else 0)
    kind = socket.SOCK_DGRAM if options.udp else socket.SOCK_STREAM
    return socket.getaddrinfo(host, options.port, options.family, kind, 0, flags)


def connect(options: Options) -> socket.socket | None:
    """A socket connected to the peer asked, or None (each failure said on stderr, as netcat says it)."""
    if options.unix:
        peer = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM if options.udp else socket.SOCK_STREAM)
        try:
            peer.settimeout(options.timeout)
            peer.connect(options.host)
        except OSError as error:
            peer.close()
            warn(f"{options.host}: {error.strerror or error}")
            return None
        return peer
    proto = "udp" if options.udp else "tcp"
    try:
        candidates = addresses(options, options.host)
    except (socket.gaierror, UnicodeError) as error:
        warn(f'getaddrinfo for host "{options.host}" port {options.port}: '
             f'{getattr(error, "strerror", None) or error}')
        return None
    for family, kind, number_, _, address in candidates:
        peer = socket.socket(family, kind, number_)
        try:
            if options.source_port is not None or options.source_address:
                peer.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                peer.bind((options.source_address or ("::" if family == socket.AF_INET6 else "0.0.0.0"),
                           options.source_port or 0))
            peer.settimeout(options.timeout)
            peer.connect(address)
        except TimeoutError:
            peer.close()
            warn(f"connect to {options.host} port {options.port} ({proto}) timed out: Operation now in progress")
            continue
        except OSError as error:
            peer.close()
            warn(f"connect to {options.host} port {options.port} ({proto}) failed: {error.strerror or error}")
            continue
        peer.settimeout(None)
        if options.verbose:
            shown = f" ({address[0]})" if address[0] != options.host else ""
            sys.stderr.write(f"Connection to {options.host}{shown} {address[1]} port "
                             f"[{proto}/{service(address[1], options.udp)}] succeeded!\n")
            sys.stderr.flush()
        return peer
    return None


def udp_probe(peer: socket.socket, timeout: float | None) -> bool:
    """Whether a UDP port takes datagrams: probes sent, a refusal (ICMP port unreachable) reported on the next."""
    try:
        for _ in range(UDP_PROBES):
            peer.send(b"X")
            time.sleep(min(timeout or 1.0, 1.0) / UDP_PROBES)
        peer.send(b"X")
    except ConnectionRefusedError:
        return False
    return True


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def relay(peer: socket.socket, options: Options, stdin_open: bool = True) -> int:
    """Copy stdin to the peer and the peer to stdout, as netcat's readwrite does; the exit code."""
    chooser = selectors.PollSelector()  # poll: stdin may be a regular file, which epoll refuses
    chooser.register(peer, selectors.EVENT_READ, "net")
    if stdin_open:
        try:
            chooser.register(sys.stdin.fileno(), selectors.EVENT_READ, "stdin")
        except (OSError, ValueError):
            stdin_open = False
    quit_at: float | None = None
    while True:
        wait = options.timeout
        if quit_at is not None:
            left = max(quit_at - time.monotonic(), 0.0)
            wait = left if wait is None else min(wait, left)
        ready = chooser.select(wait)
        if not ready:
            return 0  # idle for -w seconds, or -q's time after stdin's end
        for key, _ in ready:
            if key.data == "stdin":
                data = os.read(key.fd, CHUNK)
                if data:
                    try:
                        peer.sendall(data)
                    except ConnectionRefusedError:
                        return 1
                    except OSError:
                        return 0
                    continue
                chooser.unregister(key.fd)
                if options.shutdown_on_eof and not options.udp:
                    peer.shutdown(socket.SHUT_WR)
                if options.quit_after_eof is not None:
                    quit_at = time.monotonic() + options.quit_after_eof
            else:
                try:
                    data = peer.recv(CHUNK)
                except ConnectionRefusedError:
                    return 1  # UDP: the port is closed
                except OSError:
                    return 0
                if not data and not options.udp:
                    return 0
                write_all(sys.stdout.fileno(), data)


def listener(options: Options) -> socket.socket:
    """The listening (or, for UDP, bound) socket."""
    kind = socket.SOCK_DGRAM if options.udp else socket.SOCK_STREAM
    if options.unix:
        server = socket.socket(socket.AF_UNIX, kind)
        server.bind(options.host)
    else:
        family, kind, number_, _, address = addresses(options, options.source_address or None, passive=True)[0]
        server = socket.socket(family, kind, number_)
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind(address)
    if not options.udp:
        server.listen(1)
    if options.verbose:
        where = options.host if options.unix else f"on {server.getsockname()[0]} {server.getsockname()[1]}"
        sys.stderr.write(f"Listening {where}\n" if not options.unix else f"Bound on {where}\n")
        sys.stderr.flush()
    return server


def serve(options: Options) -> int:
    """-l: one peer (with -k, one after another), relayed as a client's connection is."""
    try:
        server = listener(options)
    except OSError as error:
        warn(f"{error.strerror or error}")
        return 1
    if options.udp:  # the first datagram's sender is the peer
        data, sender = server.recvfrom(CHUNK)
        write_all(sys.stdout.fileno(), data)
        if sender:
            server.connect(sender)
        return relay(server, options)
    stdin_open = True
    while True:
        peer, address = server.accept()
        if options.verbose:
            sys.stderr.write(f"Connection received on {address[0] if address else options.host}"
                             f"{f' {address[1]}' if address and len(address) > 1 else ''}\n")
            sys.stderr.flush()
        code = relay(peer, Options(**{**options.__dict__, "timeout": None}), stdin_open)
        peer.close()
        if not options.keep:
            return code
        stdin_open = False  # stdin went to the first peer


def main(argv: list[str]) -> int:
    try:
        options = parse(argv)
    except Usage as error:
        warn(str(error))
        sys.stderr.write("usage: nc [-46kltuNnUvz] [-p port] [-q seconds] [-s source] [-w timeout] "
                         "[destination] [port]\n")
        return 1
    try:
        if options.listen:
            return serve(options)
        peer = connect(options)
        if peer is None:
            return 1
        with peer:
            if options.scan:
                return 0 if not options.udp or udp_probe(peer, options.timeout) else 1
            return relay(peer, options)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except OSError as error:
        if error.errno == errno.EPIPE:
            return 0
        warn(f"{error.strerror or error}")
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
