"""Leader election on a coordination.k8s.io Lease, as client-go's: acquire when the lease is free or expired,
renew every `retry_period`, stop acting when a renewal has not succeeded within `renew_deadline`, and release
on exit (an empty holder), so two processes never both act and a successor need not wait out the lease."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from mini_kube.machinery import times
from mini_kube.machinery.refs import LEASES
from mini_kube.machinery.times import format_micro, parse_time

from .rest import AlreadyExists, ApiClient, ApiError, Conflict, NotFound

log = logging.getLogger("mini-kube.leaderelection")


class LeaderElector:
    """Runs `lead()` while holding the lease `namespace/name`; `lead` is cancelled if leadership is lost."""

    def __init__(self, client: ApiClient, name: str, identity: str, *, namespace: str = "kube-system",
                 lease_duration: float = 15.0, renew_deadline: float = 10.0, retry_period: float = 2.0) -> None:
        self.client = client
        self.name, self.namespace, self.identity = name, namespace, identity
        self.lease_duration, self.renew_deadline, self.retry_period = lease_duration, renew_deadline, retry_period
        self.leading = asyncio.Event()
        self.transitions = 0

    def _spec(self, lease: dict[str, Any] | None) -> dict[str, Any]:
        now = format_micro(times.now())
        spec = dict((lease or {}).get("spec") or {})
        if spec.get("holderIdentity") != self.identity:
            spec["acquireTime"] = now
            spec["leaseTransitions"] = int(spec.get("leaseTransitions", 0)) + (1 if lease else 0)
        spec.update(holderIdentity=self.identity, leaseDurationSeconds=int(self.lease_duration), renewTime=now)
        return spec

    async def try_acquire_or_renew(self) -> bool:
        """One attempt: True if this process holds the lease afterwards."""
        try:
            lease = await self.client.get(LEASES, self.name, self.namespace)
        except NotFound:
            try:
                await self.client.create(LEASES, {"metadata": {"name": self.name}, "spec": self._spec(None)},
                                         self.namespace)
                return True
            except AlreadyExists:
                return False
        spec = lease.get("spec") or {}
        holder = spec.get("holderIdentity")
        renewed = parse_time(spec.get("renewTime")) or parse_time(spec.get("acquireTime"))
        duration = float(spec.get("leaseDurationSeconds") or self.lease_duration)
        expired = renewed is None or (times.now() - renewed).total_seconds() > duration
        if holder and holder != self.identity and not expired:
            return False
        lease["spec"] = self._spec(lease)
        try:
            await self.client.replace(LEASES, lease, self.namespace)  # compare-and-swap on resourceVersion
            return True
        except Conflict:
            return False

    async def release(self) -> None:
        """Give the lease up (only if still ours), so another process takes over at once."""
        with contextlib.suppress(ApiError, OSError):
            lease = await self.client.get(LEASES, self.name, self.namespace)
            if (lease.get("spec") or {}).get("holderIdentity") == self.identity:
                lease["spec"]["holderIdentity"] = ""
                lease["spec"]["leaseDurationSeconds"] = 1
                await self.client.replace(LEASES, lease, self.namespace)

    async def run(self, lead: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """Acquire, then run `lead` while renewing; returns after losing the lease (or when cancelled). `lead` is
        cancelled and awaited before the lease is released, so what it stops in a `finally` has stopped before a
        successor can take over."""
        await self._acquire()
        self.transitions += 1
        self.leading.set()
        log.info("%s became the leader of %s/%s", self.identity, self.namespace, self.name)
        task = asyncio.create_task(lead(), name=f"leader-{self.name}")
        try:
            await self._renew_until_lost(task)
        finally:
            self.leading.clear()
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            await self.release()

    def campaign(self, start: Callable[[], Awaitable[None]], stop: Callable[[], Awaitable[None]],
                 name: str) -> asyncio.Task[None]:
        """A task that campaigns for ever: each term it wins, `start`, act until the lease is lost (or the task is
        cancelled), then `stop`, before the lease is released, so a successor never acts beside us."""

        async def lead() -> None:
            try:
                await start()
                await asyncio.Event().wait()
            finally:
                await stop()

        async def forever() -> None:
            while True:
                await self.run(lead)  # returns once the lease is lost and `stop` has run

        return asyncio.create_task(forever(), name=name)

    async def _attempt(self) -> bool:
        try:
            return await self.try_acquire_or_renew()
        except (ApiError, OSError, asyncio.TimeoutError) as exc:  # noqa: UP041
            log.debug("lease %s: %s", self.name, exc)
            return False

    async def _acquire(self) -> None:
        """Try every `retry_period` until the lease is ours (client-go's acquire loop)."""
        while True:
            if await self._attempt():
                return
            await asyncio.sleep(self.retry_period)

    async def _renew_until_lost(self, task: asyncio.Task[None]) -> None:
        """Renew every `retry_period` until `lead` ends (noticed at once) or no renewal succeeded within
        `renew_deadline`."""
        last = asyncio.get_running_loop().time()
        while not task.done():
            await asyncio.wait({task}, timeout=self.retry_period)
            if task.done():
                return
            if await self._attempt():
                last = asyncio.get_running_loop().time()
            elif asyncio.get_running_loop().time() - last > self.renew_deadline:
                log.warning("%s lost the lease %s/%s", self.identity, self.namespace, self.name)
                return
