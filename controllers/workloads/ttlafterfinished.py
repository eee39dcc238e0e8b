"""The TTL-after-finished controller: a finished Job with `ttlSecondsAfterFinished` is deleted that many
seconds after its Complete or Failed condition, with its Pods (cascading deletion, as upstream: foreground,
with the Job's uid as a precondition). The TTL is checked again on a fresh read before deleting."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

from mini_kube.client import Conflict, NotFound
from mini_kube.client.informer import SharedInformerFactory
from mini_kube.machinery.meta import meta
from mini_kube.machinery.refs import JOBS
from mini_kube.machinery.times import parse_time

from ..reconciler import Controller, Result
from .jobutil import finished_condition


def expires_in(job: dict[str, Any], now: dt.datetime) -> float | None:
    """Seconds until the Job's TTL runs out (<= 0: expired), or None when it has none or is not finished."""
    ttl = (job.get("spec") or {}).get("ttlSecondsAfterFinished")
    if ttl is None or meta(job).get("deletionTimestamp"):
        return None
    finished = finished_condition(job)
    if finished is None:
        return None
    at = parse_time(finished.get("lastTransitionTime")) or now
    return (at + dt.timedelta(seconds=int(ttl)) - now).total_seconds()


class TTLAfterFinishedController(Controller):
    name = "ttl-after-finished"
    workers = 2

    def __init__(self, client: Any, informers: SharedInformerFactory | None = None, events: Any = None, *,
                 now: Callable[[], dt.datetime] | None = None) -> None:
        super().__init__(client, informers, events)
        self.now = now or (lambda: dt.datetime.now(dt.UTC))

    def setup(self) -> None:
        self.jobs = self.watch(JOBS)

    async def reconcile(self, key: Any) -> Result | None:
        job = self.jobs.get(key)
        if job is None:
            return None
        left = expires_in(job, self.now())
        if left is None:
            return None
        if left > 0:
            return Result(requeue_after=left)
        namespace, name = meta(job)["namespace"], meta(job)["name"]
        try:
            fresh = await self.client.get(JOBS, name, namespace)
        except NotFound:
            return None
        left = expires_in(fresh, self.now())
        if left is None:
            return None
        if left > 0:
            return Result(requeue_after=left)
        try:
            await self.client.delete(JOBS, name, namespace, body={
                "propagationPolicy": "Foreground", "preconditions": {"uid": meta(fresh)["uid"]}})
        except (NotFound, Conflict):
            return None
        return None
