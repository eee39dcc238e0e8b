"""`agnhost port-forward-tester`: accept one TCP connection on BIND_ADDRESS (localhost) : BIND_PORT, check that the
client first sends EXPECTED_CLIENT_DATA (when set), write CHUNKS chunks of CHUNK_SIZE `x`s CHUNK_INTERVAL ms
apart, close the write half, and exit; each stage logged to stdout with upstream's words and exit codes."""

from __future__ import annotations

import contextlib
import os
import socket
import time

from .flags import parse_or_exit

RST_AVOIDANCE_DELAY = 0.5


def say(text: str) -> None:
    print(text, flush=True)


def env_int(name: str) -> int:
    """strconv.Atoi of the variable, or exit 1 saying why."""
    text = os.environ.get(name, "")
    try:
        return int(text, 10)
    except ValueError:
        say(f'Error parsing {name} "{text}": strconv.Atoi: parsing "{text}": invalid syntax')
        raise SystemExit(1) from None


def main(argv: list[str]) -> int:
    """Serve one client."""
    parse_or_exit("port-forward-tester", {}, argv)
    address = os.environ.get("BIND_ADDRESS") or "localhost"
    port = os.environ.get("BIND_PORT", "")
    joined = f"[{address}]:{port}" if ":" in address else f"{address}:{port}"
    try:
        found = socket.getaddrinfo(address, int(port), type=socket.SOCK_STREAM)
    except (OSError, ValueError):
        say(f"Error resolving: address {joined}: invalid port" if not port.isdigit()
            else f"Error resolving: lookup {address}: no such host")
        return 1
    # Go's ResolveTCPAddr takes the first IPv4 address of a name (localhost is 127.0.0.1, not ::1)
    wanted = socket.AF_INET6 if ":" in address else socket.AF_INET
    family, _, _, _, sockaddr = next((entry for entry in found if entry[0] == wanted), found[0])
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind(sockaddr)
        listener.listen(1)
    except OSError as error:
        say(f"Error listening: listen tcp {joined}: bind: {(error.strerror or '').lower()}")
        return 1
    conn, _peer = listener.accept()
    say("Accepted client connection")
    expected = os.environ.get("EXPECTED_CLIENT_DATA", "")
    if expected:
        want = expected.encode()
        try:
            got, failure = conn.recv(len(want)), ""
        except OSError as exc:
            got, failure = b"", (exc.strerror or str(exc)).lower()
        if len(got) != len(want):
            say(f"Expected to read {len(want)} bytes from client, but got {len(got)} instead. "
                f"err={failure or ('EOF' if not got else '<nil>')}")
            return 2
        if got != want:
            say(f'Expect to read "{expected}", but got "{got.decode(errors="replace")}". err=<nil>')
            return 3
        say("Received expected client data")
    chunks, size, interval = env_int("CHUNKS"), env_int("CHUNK_SIZE"), env_int("CHUNK_INTERVAL")
    data = b"x" * max(size, 0)
    for index in range(chunks):
        try:
            conn.sendall(data)
        except OSError as exc:
            say(f"Expected to write {size} bytes from client, but wrote 0 instead. err={exc}")
            return 4
        if index + 1 < chunks:
            time.sleep(interval / 1000)
    say("Shutting down connection")
    with contextlib.suppress(OSError):  # CloseWrite: the FIN first, so the client reads every chunk
        conn.shutdown(socket.SHUT_WR)
    time.sleep(RST_AVOIDANCE_DELAY)
    conn.close()
    say("Done")
    return 0
