"""The store's health for /livez, /readyz and /healthz (upstream's `etcd` and `etcd-readiness` checks).

A probe (etcd: a read of `<prefix>/health`; SQLite: the writer takes the database's write lock) must answer
within TIMEOUT seconds. Probes are shared: callers within MAX_AGE of the last answer reuse it and concurrent
callers wait for the same probe, so a load balancer polling every server costs the store one probe a second.
A failure is logged (the endpoints withhold the reason, as upstream's), at most once per LOG_INTERVAL.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

from .ratelog import RATE_LIMITED

log = logging.getLogger("mini-kube.apiserver")

TIMEOUT = 2.0  # upstream's --etcd-healthcheck-timeout and --etcd-readycheck-timeout
MAX_AGE = 1.0


class StoreHealth:
    """`await check()`: None when the store is healthy, else why not."""

    def __init__(self, store: Callable[[], Any], timeout: float = TIMEOUT, max_age: float = MAX_AGE) -> None:
        self.store = store
        self.timeout = timeout
        self.max_age = max_age
        self._answer: tuple[float, str | None] | None = None
        self._probe: asyncio.Task[str | None] | None = None

    async def check(self) -> str | None:
        if self._answer is not None and time.monotonic() - self._answer[0] < self.max_age:
            return self._answer[1]
        if self._probe is None or self._probe.done():
            self._probe = asyncio.get_running_loop().create_task(self._run(), name="store-health")
        return await asyncio.shield(self._probe)

    async def _run(self) -> str | None:
        store = self.store()
        try:
            if store is None:
                raise RuntimeError("the store is not open")
            await asyncio.wait_for(store.health(), self.timeout)
            problem = None
        except TimeoutError:
            problem = f"the store did not answer within {self.timeout:g} s"
        except Exception as exc:  # noqa: BLE001 - any failure is the answer
            problem = str(exc) or type(exc).__name__
        if problem is not None:
            RATE_LIMITED.warning("store-health", "store health check failed: %s", problem)
        self._answer = (time.monotonic(), problem)
        return problem
