"""Sockets on the host or inside the cluster network namespace.

A socket is made inside the namespace by a thread that has entered it. New connections must not wait for that,
so unconnected sockets are made ahead in a pool, refilled in the background by one thread that stays in the
namespace; only when the pool is empty is one made on the spot, by `mini_kube.network.namespaces.socket_in`
(a short-lived thread that setns()es). Loopback addresses (127.0.0.0/8) are always the host's: an endpoint
such as the API server's own address is dialled on the host even when the proxy serves a namespace."""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import queue
import socket
import threading
from collections import deque
from collections.abc import Callable
from typing import Any

from mini_kube.network.namespaces import setns
from mini_kube.network.namespaces import socket_in as default_socket_in
from mini_kube.network.relay import family_of, listen_on

log = logging.getLogger("mini-kube.proxy")
SocketIn = Callable[[str, int, int], socket.socket]
POOL_SIZE = 64
STREAM, DGRAM = socket.SOCK_STREAM, socket.SOCK_DGRAM


class _NetnsWorker:
    """A thread that lives in the namespace and fills socket pools there on request: one setns for all the
    sockets, instead of a thread started per socket (which, holding the GIL, would stall the event loop)."""

    def __init__(self, netns: str) -> None:
        self.netns = netns
        self.requests: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._run, name="netns-sockets", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            setns(self.netns)
            entered: OSError | None = None
        except OSError as exc:
            entered = exc
        while (request := self.requests.get()) is not None:
            pool, family, kind, target, done = request
            error = entered
            try:
                while error is None and len(pool) < target:
                    pool.append(socket.socket(family, kind))  # deque.append is atomic
            except OSError as exc:
                error = exc
            done(error)

    def fill(self, pool: deque[socket.socket], family: int, kind: int, target: int,
             done: Callable[[OSError | None], None]) -> None:
        self.requests.put((pool, family, kind, target, done))

    def close(self) -> None:
        self.requests.put(None)
        self.thread.join(1)


def is_loopback(ip: str) -> bool:
    try:
        return ipaddress.ip_address(ip).is_loopback
    except ValueError:
        return False


class SocketMaker:
    """Makes sockets where an address lives: in `netns` (when given) unless the address is loopback."""

    def __init__(self, netns: str | None = None, socket_in: SocketIn | None = None, pool_size: int = POOL_SIZE):
        self.netns = netns
        self._socket_in = socket_in or default_socket_in
        self.pool_size = pool_size
        self._pools: dict[tuple[int, int], deque[socket.socket]] = {}
        self._filling: set[tuple[int, int]] = set()
        self._worker: _NetnsWorker | None = None

    def in_netns(self, ip: str) -> bool:
        return self.netns is not None and not is_loopback(ip)

    def _make_in_netns(self, family: int, kind: int) -> socket.socket:
        assert self.netns is not None
        return self._socket_in(self.netns, family, kind)

    def socket(self, ip: str, kind: int) -> socket.socket:
        """A non-blocking socket of type `kind` that can reach (or bind) `ip`."""
        family = family_of(ip)
        if not self.in_netns(ip):
            sock = socket.socket(family, kind)
        else:
            pool = self._pools.setdefault((family, kind), deque())
            if not pool:
                self._fill_now(pool, family, kind)
            sock = pool.popleft() if pool else self._make_in_netns(family, kind)
            if len(pool) < self.pool_size // 2:
                self._refill(family, kind)
        sock.setblocking(False)
        return sock

    def _fill_now(self, pool: deque[socket.socket], family: int, kind: int) -> None:
        """Fill an empty pool and wait for it (a burst of listeners or connections outran the refill)."""
        assert self.netns is not None
        if self._worker is None:
            self._worker = _NetnsWorker(self.netns)
        done = threading.Event()
        self._worker.fill(pool, family, kind, self.pool_size, lambda _error: done.set())
        done.wait(5)

    def _refill(self, family: int, kind: int) -> None:
        key = (family, kind)
        if key in self._filling or self.netns is None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._filling.add(key)
        if self._worker is None:
            self._worker = _NetnsWorker(self.netns)

        def filled(error: OSError | None) -> None:  # on the loop
            self._filling.discard(key)
            if error is not None:
                log.warning("could not make sockets in %s: %s", self.netns, error)

        def done(error: OSError | None) -> None:  # on the worker thread
            with contextlib.suppress(RuntimeError):  # the loop has closed
                loop.call_soon_threadsafe(filled, error)

        self._worker.fill(self._pools[key], family, kind, self.pool_size, done)

    def prime(self, kinds: tuple[int, ...] = (STREAM, DGRAM)) -> None:
        """Start filling the pools (when serving a namespace)."""
        if self.netns is not None:
            for kind in kinds:
                self._pools.setdefault((socket.AF_INET, kind), deque())
                self._refill(socket.AF_INET, kind)

    def listening(self, ip: str, port: int, kind: int) -> socket.socket:
        """A socket bound to ip:port (and listening, for TCP)."""
        return listen_on(self.socket(ip, kind), ip, port)

    async def close(self) -> None:
        if self._worker is not None:
            await asyncio.get_running_loop().run_in_executor(None, self._worker.close)
            self._worker = None
        for pool in self._pools.values():
            while pool:
                pool.popleft().close()
