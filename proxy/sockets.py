"""Sockets on the host or inside the cluster network namespace.

Inside the namespace a socket is made by `mini_kube.network.namespaces.socket_in` (a thread that setns()es),
which costs a thread start; new connections must not wait for that, so unconnected sockets are made ahead in
a small pool, refilled in the background. Loopback addresses (127.0.0.0/8) are always the host's: an endpoint
such as the API server's own address is dialled on the host even when the proxy serves a namespace."""

from __future__ import annotations

import asyncio
import ctypes
import ipaddress
import logging
import os
import socket
import threading
from collections import deque
from collections.abc import Callable

log = logging.getLogger("mini-kube.proxy")
SocketIn = Callable[[str, int, int], socket.socket]
POOL_SIZE = 32
CLONE_NEWNET = 0x40000000
STREAM, DGRAM = socket.SOCK_STREAM, socket.SOCK_DGRAM


def default_socket_in() -> SocketIn:
    """The network package's `socket_in` (imported when a namespace is first used); until that package is
    installed, `setns_socket`."""
    try:
        from mini_kube.network.namespaces import socket_in  # type: ignore[import-not-found]
    except ImportError:
        return setns_socket
    return socket_in


def setns_socket(netns: str, family: int, kind: int) -> socket.socket:
    """A socket made inside the network namespace `netns` (a /proc/PID/ns/net path) by a short-lived thread
    that setns()es into it; the socket stays in that namespace."""
    made: list[socket.socket | BaseException] = []

    def run() -> None:
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            fd = os.open(netns, os.O_RDONLY | os.O_CLOEXEC)
            try:
                if libc.setns(fd, CLONE_NEWNET) != 0:
                    err = ctypes.get_errno()
                    raise OSError(err, f"setns {netns}: {os.strerror(err)}")
            finally:
                os.close(fd)
            made.append(socket.socket(family, kind))
        except BaseException as exc:  # handed to the caller's thread
            made.append(exc)

    thread = threading.Thread(target=run, name="setns")
    thread.start()
    thread.join()
    if isinstance(made[0], BaseException):
        raise made[0]
    return made[0]


def family_of(ip: str) -> int:
    return socket.AF_INET6 if ":" in ip else socket.AF_INET


def is_loopback(ip: str) -> bool:
    try:
        return ipaddress.ip_address(ip).is_loopback
    except ValueError:
        return False


class SocketMaker:
    """Makes sockets where an address lives: in `netns` (when given) unless the address is loopback."""

    def __init__(self, netns: str | None = None, socket_in: SocketIn | None = None, pool_size: int = POOL_SIZE):
        self.netns = netns
        self._socket_in = socket_in
        self.pool_size = pool_size
        self._pools: dict[tuple[int, int], deque[socket.socket]] = {}
        self._filling: set[tuple[int, int]] = set()
        self._tasks: set[asyncio.Future[None]] = set()

    def in_netns(self, ip: str) -> bool:
        return self.netns is not None and not is_loopback(ip)

    def _make_in_netns(self, family: int, kind: int) -> socket.socket:
        if self._socket_in is None:
            self._socket_in = default_socket_in()
        assert self.netns is not None
        return self._socket_in(self.netns, family, kind)

    def socket(self, ip: str, kind: int) -> socket.socket:
        """A non-blocking socket of type `kind` that can reach (or bind) `ip`."""
        family = family_of(ip)
        if not self.in_netns(ip):
            sock = socket.socket(family, kind)
        else:
            pool = self._pools.setdefault((family, kind), deque())
            sock = pool.popleft() if pool else self._make_in_netns(family, kind)
            if len(pool) < self.pool_size // 2:
                self._refill(family, kind)
        sock.setblocking(False)
        return sock

    def _refill(self, family: int, kind: int) -> None:
        key = (family, kind)
        if key in self._filling:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._filling.add(key)

        def fill() -> None:
            pool = self._pools[key]
            while len(pool) < self.pool_size:
                pool.append(self._make_in_netns(family, kind))

        future = loop.run_in_executor(None, fill)
        self._tasks.add(future)

        def done(fut: asyncio.Future[None]) -> None:
            self._tasks.discard(fut)
            self._filling.discard(key)
            if not fut.cancelled() and fut.exception() is not None:
                log.warning("could not make sockets in %s: %s", self.netns, fut.exception())

        future.add_done_callback(done)

    def prime(self, kinds: tuple[int, ...] = (STREAM, DGRAM)) -> None:
        """Start filling the pools (when serving a namespace)."""
        if self.netns is not None:
            for kind in kinds:
                self._pools.setdefault((socket.AF_INET, kind), deque())
                self._refill(socket.AF_INET, kind)

    def listening(self, ip: str, port: int, kind: int) -> socket.socket:
        """A socket bound to ip:port (and listening, for TCP)."""
        sock = self.socket(ip, kind)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((ip, port))
            if kind == socket.SOCK_STREAM:
                sock.listen(1024)
        except OSError:
            sock.close()
            raise
        return sock

    async def close(self) -> None:
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        for pool in self._pools.values():
            while pool:
                pool.popleft().close()
