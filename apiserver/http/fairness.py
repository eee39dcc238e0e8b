"""Two priority levels, as much of upstream's API Priority and Fairness as one event loop needs: the in-process
components (controllers, scheduler, nodes, on the loopback socket: auth/loopback.py) share `COMPONENT_SEATS`
seats, and their requests past that wait in line, in arrival order, before any work is done for them; every other
client (kubectl, operators, the Python clients) is served at once, as upstream's exempt and workload levels are
never queued behind its controllers' own.

Why: the server's handlers, the components and their nodes share one event loop, which runs whatever is ready in
turn. When thousands of Pods start, the components have hundreds of requests in flight, and a human's `kubectl get
nodes` waited for every one of them at each of its steps (accept, TLS, read, answer): 1.3 s median at 10,000 Pods.
With the components' requests held to a few seats, each of its steps waits behind a few; the components lose
nothing, since the loop has the same work to do either way. Long-running requests (watches, exec, proxy, followed
logs) hold no seat: they wait for events, not for the loop.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from typing import Any

from .inflight import long_running

# Off (0: no component ever waits) until their cost is understood: measured on a quiet machine (bench/scale_bench.py,
# 1,000 replicas on 20 nodes, 2026-11-28) 16 seats cost 6-14% more CPU up and 10-35% more down, for a third off
# `kubectl get nodes`'s median at 3,000 Pods (docs/benchmarks.md). A server may turn them on with a count.
COMPONENT_SEATS = 0
# the longest a component's request waits in line: past it, it is served without a seat. Seats held that long wait
# on something other than the loop (an admission or conversion webhook's timeout, an unreachable tunnel), and
# letting every component stall behind them (a conformance run saw controllers idle for minutes) costs the loop
# nothing it would otherwise get
MAX_WAIT = 5.0


class ComponentSeats:
    """The in-process components' seats; `enter` waits for one (or returns None for a request that takes none)
    and returns the function that gives it back."""

    def __init__(self, seats: int = COMPONENT_SEATS, max_wait: float = MAX_WAIT) -> None:
        self.seats = seats
        self.max_wait = max_wait
        self.overflowed = 0  # requests served without a seat after waiting `max_wait`
        self.taken = 0
        self.waiting: deque[asyncio.Future[None]] = deque()

    async def enter(self, component: bool, info: Any, query: Any) -> Callable[[], None] | None:
        """`component`: the request came from an in-process component (on the loopback socket)."""
        if not component or self.seats <= 0 or long_running(info, query):
            return None
        if self.taken < self.seats and not self.waiting:
            self.taken += 1
        else:
            turn = asyncio.get_running_loop().create_future()
            self.waiting.append(turn)
            try:  # the seat is handed over by `leave`: `taken` already counts it
                await asyncio.wait_for(asyncio.shield(turn), self.max_wait)
            except TimeoutError:
                if turn.done():  # handed a seat just as the wait ended
                    return self._leave
                self.waiting.remove(turn)
                turn.cancel()
                self.overflowed += 1
                return None
            except asyncio.CancelledError:
                if turn.done() and not turn.cancelled():
                    self._leave()  # handed a seat as the client went away: pass it on
                else:
                    self.waiting.remove(turn)
                raise
        return self._leave

    def _leave(self) -> None:
        while self.waiting:
            turn = self.waiting.popleft()
            if not turn.done():
                turn.set_result(None)  # the seat goes straight to the next in line
                return
        self.taken -= 1
