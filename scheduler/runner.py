"""Running the scheduler as a component: on its own client and informers, optionally only while holding the
`kube-system/kube-scheduler` Lease (so of several schedulers exactly one acts)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
from typing import Any

from mini_kube.client import ApiClient
from mini_kube.client.leaderelection import LeaderElector

from .scheduler import Scheduler

LEASE_NAME = "kube-scheduler"


class SchedulerRunner:
    """Starts and stops one Scheduler (a fresh one for each term of leadership)."""

    def __init__(self, client: ApiClient, *, leader_elect: bool = False, identity: str = "",
                 lease_duration: float = 15.0, renew_deadline: float = 10.0, retry_period: float = 2.0,
                 **options: Any) -> None:
        self.client = client
        self.options = options
        self.scheduler: Scheduler | None = None
        self.elector = LeaderElector(client, LEASE_NAME, identity or f"{socket.gethostname()}_{os.getpid()}",
                                     lease_duration=lease_duration, renew_deadline=renew_deadline,
                                     retry_period=retry_period) if leader_elect else None
        self._election: asyncio.Task[None] | None = None

    async def _run(self) -> None:
        self.scheduler = Scheduler(self.client, **self.options)
        await self.scheduler.start()

    async def _stop_scheduler(self) -> None:
        if self.scheduler is not None:
            scheduler, self.scheduler = self.scheduler, None
            await scheduler.stop()
            await scheduler.factory.stop()

    async def start(self) -> None:
        """Start scheduling (with leader election: start campaigning and return)."""
        if self.elector is None:
            await self._run()
            return
        self._election = self.elector.campaign(self._run, self._stop_scheduler, "scheduler-leader-election")

    async def stop(self) -> None:
        if self._election is not None:
            self._election.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._election
        await self._stop_scheduler()
        await self.client.close()
