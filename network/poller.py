"""Edge-triggered readiness for many raw sockets, read by the event loop as one file descriptor.

The relays register every socket they move bytes between once, for input and output, edge-triggered
(EPOLLET): a socket reports when something new happens on it, not for as long as it stays ready, so a relay
never has to add and remove interest as a connection fills and drains, and the event loop sees one file
descriptor (the epoll's) however many sockets there are. Whoever registers a socket must read (or write) it
until the kernel says EAGAIN before waiting for its next event.

One `Poller` serves every relay on a loop (`Poller.of(loop)`); it lives while something uses it (`acquire` and
`release`) and closes its epoll after the last user.
"""

from __future__ import annotations

import asyncio
import select
from collections.abc import Callable

Handler = Callable[[int], None]  # called with the epoll event mask
EVENTS = select.EPOLLIN | select.EPOLLOUT | select.EPOLLRDHUP | select.EPOLLET
READABLE = select.EPOLLIN | select.EPOLLRDHUP | select.EPOLLHUP | select.EPOLLERR
WRITABLE = select.EPOLLOUT | select.EPOLLHUP | select.EPOLLERR
MAX_EVENTS = 256  # events handled per turn of the loop; more wait for the next turn


class Poller:
    """An epoll whose events go to the handler registered for each file descriptor."""

    _by_loop: dict[asyncio.AbstractEventLoop, Poller] = {}

    @classmethod
    def of(cls, loop: asyncio.AbstractEventLoop) -> Poller:
        """The loop's poller (made on first use), with one more user."""
        poller = cls._by_loop.get(loop)
        if poller is None:
            poller = cls._by_loop[loop] = cls(loop)
        poller.users += 1
        return poller

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.epoll = select.epoll()
        self.handlers: dict[int, Handler] = {}
        self.users = 0
        loop.add_reader(self.epoll.fileno(), self._ready)

    def acquire(self) -> None:
        self.users += 1

    def release(self) -> None:
        """One user fewer; the last one closes the epoll."""
        self.users -= 1
        if self.users == 0 and self._by_loop.get(self.loop) is self:
            del self._by_loop[self.loop]
            if not self.loop.is_closed():
                self.loop.remove_reader(self.epoll.fileno())
            self.epoll.close()

    def watch(self, fd: int, handler: Handler) -> None:
        """Deliver `fd`'s events to `handler` from now on (an event comes at once if it is ready already)."""
        self.handlers[fd] = handler
        self.epoll.register(fd, EVENTS)

    def redirect(self, fd: int, handler: Handler) -> None:
        """Deliver the events of the already watched `fd` to another handler."""
        self.handlers[fd] = handler

    def forget(self, fd: int) -> None:
        """No more events for `fd`; call before closing it (closing takes it out of the epoll itself)."""
        self.handlers.pop(fd, None)

    def _ready(self) -> None:
        handlers = self.handlers
        for fd, events in self.epoll.poll(0, MAX_EVENTS):
            handler = handlers.get(fd)
            if handler is not None:
                handler(events)
