"""The reconcile loop: informers feed keys into a work queue; workers call `reconcile(key)` until it succeeds."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from .client import ApiClient
from .informer import Informer, object_key
from .workqueue import WorkQueue

log = logging.getLogger("mini-kube.controller")


class Controller:
    """Base class: subclasses create informers in `setup` and implement `reconcile`."""

    name = "controller"
    workers = 2

    def __init__(self, client: ApiClient) -> None:
        self.client = client
        self.queue = WorkQueue()
        self.informers: list[Informer] = []
        self._tasks: list[asyncio.Task[None]] = []

    def informer(self, informer: Informer, *, enqueue: bool = True) -> Informer:
        if enqueue:
            informer.add_handler(lambda _event, old, new: self.queue.add(object_key(new or old or {})))
        self.informers.append(informer)
        return informer

    def setup(self) -> None:
        """Create informers (with `self.informer(...)`)."""

    async def reconcile(self, key: Any) -> None:
        raise NotImplementedError

    async def start(self) -> None:
        self.setup()
        for informer in self.informers:
            informer.start()
        await asyncio.gather(*(i.synced.wait() for i in self.informers))
        self._tasks = [asyncio.create_task(self._worker(), name=f"{self.name}-worker") for _ in range(self.workers)]

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        for informer in self.informers:
            await informer.stop()
        self.queue.shutdown()

    async def _worker(self) -> None:
        while True:
            key = await self.queue.get()
            try:
                await self.reconcile(key)
                self.queue.forget(key)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.debug("%s: reconcile %s failed: %s", self.name, key, exc)
                self.queue.retry(key)
            finally:
                self.queue.done(key)
