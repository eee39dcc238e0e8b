"""Hold N connections to ip:port from this process (its own descriptors), then say how many the far side kept
(it sent something) and how many it reset; hold them until stdin closes. Usage: flood.py IP PORT N"""

from __future__ import annotations

import errno
import select
import socket
import sys


def main() -> None:
    ip, port, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    socks = []
    for _ in range(count):
        sock = socket.socket()
        sock.setblocking(False)
        code = sock.connect_ex((ip, port))
        if code not in (0, errno.EINPROGRESS):
            sock.close()
            continue
        socks.append(sock)
    held = refused = 0
    poller = select.epoll()
    for sock in socks:
        poller.register(sock.fileno(), select.EPOLLIN | select.EPOLLRDHUP)
    pending = {sock.fileno(): sock for sock in socks}
    while pending:
        events = poller.poll(10)
        if not events:
            break
        for fd, _ in events:
            sock = pending.pop(fd, None)
            if sock is None:
                continue
            poller.unregister(fd)
            try:
                data = sock.recv(64)
            except OSError:
                data = b""
            if data:
                held += 1
            else:
                refused += 1
    print(f"held {held} refused {refused} silent {len(pending)}", flush=True)
    sys.stdin.read()


if __name__ == "__main__":
    main()
