"""Sockets on the host or inside the cluster network namespace.

A socket belongs to the namespace of the thread that made it. Sockets for the namespace are made in batches by
the event loop's own thread, which enters the namespace for just that long (`sockets_in`: one setns pair per
batch, no other thread and no GIL hand-over), and kept in a pool until a listener or a connection takes one.
Loopback addresses (127.0.0.0/8) are the host's: an endpoint such as the API server's own address is dialled on
the host even when the proxy serves a namespace; only a listener asked for `inside` (the node's address in the
cluster network, where Pods reach it) binds one there."""

from __future__ import annotations

import ipaddress
import logging
import socket
from collections import deque
from functools import lru_cache
from socket import socket as Socket

from mini_kube.network.namespaces import sockets_in
from mini_kube.network.relay import family_of, listen_on

log = logging.getLogger("mini-kube.proxy")
POOL_SIZE = 64
STREAM, DGRAM = socket.SOCK_STREAM, socket.SOCK_DGRAM


@lru_cache(maxsize=4096)  # asked for every connection a proxy dials: endpoints are few, parsing is not free
def is_loopback(ip: str) -> bool:
    try:
        return ipaddress.ip_address(ip).is_loopback
    except ValueError:
        return False


class SocketMaker:
    """Makes sockets where an address lives: in `netns` (when given) unless the address is loopback."""

    def __init__(self, netns: str | None = None, pool_size: int = POOL_SIZE) -> None:
        self.netns = netns
        self.pool_size = pool_size
        self._pools: dict[tuple[int, int], deque[Socket]] = {}

    def in_netns(self, ip: str) -> bool:
        return self.netns is not None and not is_loopback(ip)

    def socket(self, ip: str, kind: int, inside: bool = False) -> Socket:
        """A non-blocking socket of type `kind` that can reach (or bind) `ip`: in the namespace if `ip` lives
        there, or if `inside`."""
        family = family_of(ip)
        if not (self.in_netns(ip) or (inside and self.netns is not None)):
            sock = socket.socket(family, kind | socket.SOCK_NONBLOCK)
        else:
            pool = self._pools.get((family, kind))
            if not pool:
                assert self.netns is not None
                pool = self._pools[(family, kind)] = deque(
                    sockets_in(self.netns, family, kind | socket.SOCK_NONBLOCK, self.pool_size))
            sock = pool.popleft()
        return sock

    def listening(self, ip: str, port: int, kind: int, inside: bool = False) -> Socket:
        """A socket bound to ip:port (and listening, for TCP); with `inside`, in the namespace."""
        return listen_on(self.socket(ip, kind, inside), ip, port)

    def close(self) -> None:
        for pool in self._pools.values():
            while pool:
                pool.popleft().close()
