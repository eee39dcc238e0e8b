"""How the Job controller records finished Pods (upstream's trackJobStatusAndRemoveFinalizers): a finished Pod
is first written to `status.uncountedTerminatedPods`, then loses its tracking finalizer, then is counted in
`succeeded`/`failed`, so none is lost or counted twice; the Job gets Complete or Failed once every Pod is
counted and none is terminating."""

from __future__ import annotations

import asyncio
import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from mini_kube.client import ApiError, NotFound
from mini_kube.client.events import EventRecorder
from mini_kube.machinery.meta import meta
from mini_kube.machinery.refs import JOBS, PODS

from .jobutil import (
    TRACKING_FINALIZER,
    Backoff,
    OwnWrites,
    completion_index,
    condition,
    ensure_condition,
    format_indexes,
    has_finalizer,
    is_pod_failed,
    match_failure_policy,
    new_condition,
    phase,
)

MAX_PER_SYNC = 500  # Pods created or deleted, and Pods counted, in one sync (upstream's limits)
STRATEGIC = "application/strategic-merge-patch+json"
REMOVE_FINALIZER = {"metadata": {"$deleteFromPrimitiveList/finalizers": [TRACKING_FINALIZER]}}


@dataclass
class SyncContext:
    """What one sync of one Job has computed so far (upstream's syncJobCtx)."""

    job: dict[str, Any]
    status: dict[str, Any]
    pods: list[dict[str, Any]]
    active: list[dict[str, Any]]
    expected_removals: set[str]
    uncounted_succeeded: list[str]
    uncounted_failed: list[str]
    terminating: int = 0
    ready: int = 0
    succeeded: int = 0
    failed: int = 0
    finished: dict[str, Any] | None = None
    prev_succeeded_indexes: set[int] = field(default_factory=set)
    succeeded_indexes: set[int] = field(default_factory=set)
    failed_indexes: set[int] | None = None  # with backoffLimitPerIndex only
    delayed: dict[int, dict[str, Any]] = field(default_factory=dict)  # index -> failed Pod awaiting its successor
    backoff: Backoff = field(default_factory=Backoff)

    @property
    def spec(self) -> dict[str, Any]:
        return self.job.get("spec") or {}

    @property
    def indexed(self) -> bool:
        return self.spec.get("completionMode") == "Indexed"

    @property
    def completions(self) -> int | None:
        value = self.spec.get("completions")
        return None if value is None else int(value)


def valid_index(ctx: SyncContext, pod: dict[str, Any]) -> bool:
    index = completion_index(pod)
    return index >= 0 and index < (ctx.completions or 0)


class StatusTracking:
    """The status half of the Job controller (a mixin over its client, events and bookkeeping)."""

    client: Any
    events: EventRecorder
    written: OwnWrites
    finalizer_removals: dict[str, set[str]]
    backoffs: dict[str, Backoff]

    async def _track(self, key: str, ctx: SyncContext, now: dt.datetime) -> None:
        """Record finished Pods as uncounted, remove their finalizers, count them; then finish the Job."""
        status, job = ctx.status, ctx.job
        with_finalizer = {meta(p).get("uid", "") for p in ctx.pods
                          if has_finalizer(p) and meta(p).get("uid", "") not in ctx.expected_removals}
        flush = self._count_uncounted(ctx, with_finalizer)
        to_free: list[dict[str, Any]] = []
        new_indexes: list[int] = []
        full = False
        for pod in ctx.pods:
            uid = meta(pod).get("uid", "")
            if uid not in with_finalizer:
                continue
            failed = is_pod_failed(pod, job)
            if not (meta(job).get("deletionTimestamp") or ctx.finished is not None or phase(pod) == "Succeeded"
                    or failed) or self._delayed(ctx, pod):
                continue
            to_free.append(pod)
            if phase(pod) == "Succeeded" and uid not in ctx.uncounted_failed:
                if ctx.indexed:
                    index = completion_index(pod)
                    if valid_index(ctx, pod) and index not in ctx.prev_succeeded_indexes:
                        new_indexes.append(index)
                        flush = True
                elif uid not in ctx.uncounted_succeeded:
                    ctx.uncounted_succeeded.append(uid)
                    flush = True
            elif (failed or (ctx.finished is not None and ctx.finished["type"] != "SuccessCriteriaMet")) and \
                    uid not in ctx.uncounted_failed and (not ctx.indexed or valid_index(ctx, pod)) and \
                    match_failure_policy(job, pod)[1]:
                ctx.uncounted_failed.append(uid)
                flush = True
            if len(new_indexes) + len(ctx.uncounted_succeeded) + len(ctx.uncounted_failed) >= MAX_PER_SYNC:
                full = True
                break
        if ctx.indexed:
            ctx.succeeded_indexes |= set(new_indexes)
            text = format_indexes(ctx.succeeded_indexes)
            flush |= text != (status.get("completedIndexes") or "")
            status["completedIndexes"] = text
            status["succeeded"] = len(ctx.succeeded_indexes)
            failed_text = None if ctx.failed_indexes is None else format_indexes(ctx.failed_indexes)
            flush |= failed_text != status.get("failedIndexes")
            status["failedIndexes"] = failed_text
        if ctx.finished is not None and ctx.finished["type"] in ("FailureTarget", "SuccessCriteriaMet"):
            interim = ctx.finished
            if condition(status, interim["type"]) is None:
                status.setdefault("conditions", []).append(interim)
                flush = True
            final = "Failed" if interim["type"] == "FailureTarget" else "Complete"
            ctx.finished = new_condition(final, "True", interim["reason"], interim["message"], now)
        self._set_uncounted(ctx)
        if flush:  # first record them as uncounted, so that no finished Pod is lost once its finalizer goes
            job = ctx.job = await self._write(job, status)
            self.backoffs[key] = ctx.backoff
        if to_free:
            freed = await self._free(key, to_free)
            with_finalizer -= freed
            self._count_uncounted(ctx, with_finalizer)
            self._set_uncounted(ctx)
        finished = not full and self._enact_finished(ctx, now)
        if self._changed(job, status) or finished:
            await self._write(job, status)
            if finished and ctx.finished is not None:
                self._record_finished(job, status, ctx.finished)

    @staticmethod
    def _delayed(ctx: SyncContext, pod: dict[str, Any]) -> bool:
        """A failed Pod whose finalizer stays until its index has a replacement (canRemoveFinalizer)."""
        if meta(ctx.job).get("deletionTimestamp") or ctx.finished is not None or phase(pod) == "Succeeded":
            return False
        waiting = ctx.delayed.get(completion_index(pod))
        return waiting is not None and meta(waiting).get("uid") == meta(pod).get("uid")

    @staticmethod
    def _count_uncounted(ctx: SyncContext, with_finalizer: set[str]) -> bool:
        """Uncounted Pods whose finalizer is gone move into the counters."""
        changed = False
        for attr, counter in (("uncounted_succeeded", "succeeded"), ("uncounted_failed", "failed")):
            uids: list[str] = getattr(ctx, attr)
            keep = [u for u in uids if u in with_finalizer]
            if len(keep) != len(uids):
                changed = True
                if not (ctx.indexed and counter == "succeeded"):
                    ctx.status[counter] = int(ctx.status.get(counter) or 0) + len(uids) - len(keep)
                setattr(ctx, attr, keep)
        return changed

    @staticmethod
    def _set_uncounted(ctx: SyncContext) -> None:
        uncounted: dict[str, Any] = {}
        if ctx.uncounted_succeeded:
            uncounted["succeeded"] = list(ctx.uncounted_succeeded)
        if ctx.uncounted_failed:
            uncounted["failed"] = list(ctx.uncounted_failed)
        ctx.status["uncountedTerminatedPods"] = uncounted

    async def _free(self, key: str, pods: list[dict[str, Any]]) -> set[str]:
        """Remove the tracking finalizer; returns the uids freed (or gone)."""
        expected = self.finalizer_removals.setdefault(key, set())
        expected.update(meta(p).get("uid", "") for p in pods)

        async def one(pod: dict[str, Any]) -> str | None:
            uid = meta(pod).get("uid", "")
            try:
                await self.client.patch(PODS, meta(pod)["name"], REMOVE_FINALIZER, meta(pod)["namespace"],
                                        patch_type=STRATEGIC)
            except NotFound:
                expected.discard(uid)
                return uid
            except ApiError:
                expected.discard(uid)
                return None
            return uid

        return {uid for uid in await asyncio.gather(*(one(p) for p in pods)) if uid}

    def _enact_finished(self, ctx: SyncContext, now: dt.datetime) -> bool:
        """Add Complete or Failed once every Pod is counted and none is terminating."""
        final = ctx.finished
        if final is None or ctx.uncounted_succeeded or ctx.uncounted_failed or ctx.terminating > 0:
            return False
        ensure_condition(ctx.status, final["type"], "True", final["reason"], final["message"], now)
        if final["type"] == "Complete":
            ctx.status["completionTime"] = condition(ctx.status, "Complete")["lastTransitionTime"]  # type: ignore[index]
        return True

    def _record_finished(self, job: dict[str, Any], status: dict[str, Any], final: dict[str, Any]) -> None:
        if final["type"] == "Complete":
            completions = (job.get("spec") or {}).get("completions")
            if completions is not None and int(status.get("succeeded") or 0) > int(completions):
                self.events.event(job, "Warning", "TooManySucceededPods",
                                  "Too many succeeded pods running after completion count reached")
            self.events.event(job, "Normal", "Completed", "Job completed")
        else:
            self.events.event(job, "Warning", final["reason"], final["message"])

    @staticmethod
    def _clean(status: dict[str, Any]) -> dict[str, Any]:
        """The status as upstream serializes it: zero counters and empty fields left out (but an empty
        failedIndexes, a pointer upstream, is kept)."""
        body = {k: v for k, v in status.items() if v not in (None, "", []) or (k == "failedIndexes" and v == "")}
        for counter in ("active", "succeeded", "failed"):
            if not body.get(counter):
                body.pop(counter, None)
        return body

    def _changed(self, job: dict[str, Any], status: dict[str, Any]) -> bool:
        return self._clean(status) != (job.get("status") or {})

    async def _write(self, job: dict[str, Any], status: dict[str, Any]) -> dict[str, Any]:
        """Write the status (a conflict raises: the sync is retried from a fresh cache)."""
        written = await self.client.replace_status(JOBS, {**job, "status": self._clean(status)},
                                                   meta(job)["namespace"])
        self.written.remember(f"{meta(job)['namespace']}/{meta(job)['name']}", written)
        return written
