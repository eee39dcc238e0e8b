"""The CronJob controller: Jobs on a schedule, as kube-controller-manager's (cronjob v2) creates them.

Each sync reconciles `status.active` with the CronJob's Jobs (SawCompletedJob, MissingJob, UnexpectedJob,
`lastSuccessfulTime`), then, unless suspended, looks for the most recent schedule time since the last one
(or creation, or `now - startingDeadlineSeconds`): a Job `<cronjob>-<minutes since the epoch>` with the
`batch.kubernetes.io/cronjob-scheduled-timestamp` annotation is created unless it ran already, the
concurrency policy forbids it (JobAlreadyActive) or replaces the running ones first; finished Jobs beyond
successfulJobsHistoryLimit / failedJobsHistoryLimit are deleted (oldest start first). The clock is `now`
(injectable, so tests need not wait for the minute); the next sync is queued for the next schedule time.
"""

from __future__ import annotations

import copy
import datetime as dt
import json
from collections.abc import Callable
from typing import Any

from mini_kube.client import AlreadyExists, NotFound
from mini_kube.client.informer import SharedInformerFactory
from mini_kube.machinery.meta import meta
from mini_kube.machinery.refs import CRONJOBS, JOBS
from mini_kube.machinery.times import format_time, parse_time

from ..reconciler import Controller, Result
from .common import controller_of
from .cronschedule import Schedule, ScheduleError, zone
from .jobutil import OwnWrites, finished_condition, is_finished, is_true

SCHEDULED_ANNOTATION = "batch.kubernetes.io/cronjob-scheduled-timestamp"
TOO_MANY_MISSED = 100
BACKGROUND = {"propagationPolicy": "Background"}


def job_name(cronjob: dict[str, Any], scheduled: dt.datetime) -> str:
    """Deterministic per schedule time, so one time never makes two Jobs."""
    return f"{meta(cronjob)['name']}-{int(scheduled.timestamp()) // 60}"


def rfc3339(when: dt.datetime) -> str:
    """Go's time.RFC3339 ("Z" for a zero offset)."""
    offset = when.utcoffset() or dt.timedelta(0)
    if not offset:
        return when.strftime("%Y-%m-%dT%H:%M:%SZ")
    text = when.strftime("%Y-%m-%dT%H:%M:%S%z")
    return f"{text[:-2]}:{text[-2:]}"


def rfc1123z(when: dt.datetime) -> str:
    return when.astimezone(dt.UTC).strftime("%a, %d %b %Y %H:%M:%S +0000")


def job_reference(job: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "Job", "namespace": meta(job)["namespace"], "name": meta(job)["name"],
            "uid": meta(job)["uid"], "apiVersion": "batch/v1", "resourceVersion": meta(job).get("resourceVersion")}


class CronJobController(Controller):
    name = "cronjob"
    workers = 2

    def __init__(self, client: Any, informers: SharedInformerFactory | None = None, events: Any = None, *,
                 now: Callable[[], dt.datetime] | None = None, max_requeue: float | None = None) -> None:
        super().__init__(client, informers, events)
        self.now = now or (lambda: dt.datetime.now(dt.UTC))
        self.max_requeue = max_requeue
        self.written = OwnWrites()

    def setup(self) -> None:
        self.cronjobs = self.watch(CRONJOBS)
        self.jobs = self.watch(JOBS, enqueue=self.enqueue_owner("CronJob"))

    def _children(self, cronjob: dict[str, Any]) -> list[dict[str, Any]]:
        uid = meta(cronjob)["uid"]
        return [j for j in self.jobs.by_index("owner-uid", uid) if (controller_of(j) or {}).get("uid") == uid]

    async def reconcile(self, key: Any) -> Result | None:
        cronjob = self.written.fresh(key, self.cronjobs.get(key))
        if cronjob is None:
            return None
        children = self._children(cronjob)
        status = copy.deepcopy(cronjob.get("status") or {})
        changed = await self._reconcile_active(cronjob, status, children)
        requeue: float | None = None
        if not meta(cronjob).get("deletionTimestamp"):
            scheduled_changed, requeue = await self._schedule(cronjob, status)
            changed |= scheduled_changed
            changed |= await self._clean_history(cronjob, status, children)
        if changed:
            body = {k: v for k, v in status.items() if v not in (None, [])}
            self.written.remember(key, await self.client.replace_status(
                CRONJOBS, {**cronjob, "status": body}, meta(cronjob)["namespace"]))
        if requeue is None:
            return None
        if self.max_requeue is not None:
            requeue = min(requeue, self.max_requeue)
        return Result(requeue_after=max(requeue, 0.001))

    async def _reconcile_active(self, cronjob: dict[str, Any], status: dict[str, Any],
                                children: list[dict[str, Any]]) -> bool:
        changed = False
        active = status.setdefault("active", [])
        fresh_active: list[dict[str, Any]] | None = None
        for job in children:
            uid = meta(job)["uid"]
            found = any(ref.get("uid") == uid for ref in active)
            finished = is_finished(job)
            if not found and not finished:
                if fresh_active is None:  # the cache may lag behind our own status write: ask the server
                    try:
                        fresh = await self.client.get(CRONJOBS, meta(cronjob)["name"], meta(cronjob)["namespace"])
                        fresh_active = (fresh.get("status") or {}).get("active") or []
                    except NotFound:
                        fresh_active = []
                known = next((r for r in fresh_active if r.get("uid") == uid), None)
                if known is not None:
                    active.append(known)
                    continue
                self.events.event(cronjob, "Warning", "UnexpectedJob",
                                  f"Saw a job that the controller did not create or forgot: {meta(job)['name']}")
            elif found and finished:
                active[:] = [r for r in active if r.get("uid") != uid]
                kind = (finished_condition(job) or {}).get("type")
                self.events.event(cronjob, "Normal", "SawCompletedJob",
                                  f"Saw completed job: {meta(job)['name']}, condition: {kind}")
                changed = True
            if is_true(job.get("status") or {}, "Complete"):
                done = parse_time((job.get("status") or {}).get("completionTime"))
                last = parse_time(status.get("lastSuccessfulTime"))
                if done is not None and (last is None or done > last):
                    status["lastSuccessfulTime"] = format_time(done)
                    changed = True
        uids = {meta(j)["uid"] for j in children}
        for ref in list(active):
            if ref.get("uid") in uids:
                continue
            try:
                await self.client.get(JOBS, ref["name"], ref.get("namespace") or meta(cronjob)["namespace"])
            except NotFound:
                self.events.event(cronjob, "Normal", "MissingJob", f"Active job went missing: {ref['name']}")
                active.remove(ref)
                changed = True
        return changed

    async def _schedule(self, cronjob: dict[str, Any], status: dict[str, Any]) -> tuple[bool, float | None]:
        """Start the Job of the most recent schedule time if due; returns (status changed, seconds to wait)."""
        spec = cronjob.get("spec") or {}
        if spec.get("suspend"):
            return False, None
        try:
            tz = zone(spec.get("timeZone"))
        except ScheduleError as exc:
            self.events.event(cronjob, "Warning", "UnknownTimeZone",
                              f"invalid timeZone: {json.dumps(spec.get('timeZone'))}: {exc}")
            return False, None
        try:
            schedule = Schedule(spec.get("schedule") or "", tz)
        except ScheduleError as exc:
            self.events.event(cronjob, "Warning", "UnparseableSchedule",
                              f"unparseable schedule: {json.dumps(spec.get('schedule'))} : {exc}")
            return False, None
        now = self.now()
        earliest = parse_time(status.get("lastScheduleTime")) or parse_time(
            meta(cronjob).get("creationTimestamp")) or now
        deadline = spec.get("startingDeadlineSeconds")
        if deadline is not None:
            earliest = max(earliest, now - dt.timedelta(seconds=int(deadline)))
        try:
            scheduled, missed = schedule.most_recent(earliest, now)
        except ScheduleError as exc:
            self.events.event(cronjob, "Warning", "InvalidSchedule", f"invalid schedule: {spec.get('schedule')} : {exc}")
            return False, None
        if missed > TOO_MANY_MISSED:
            self.events.event(cronjob, "Warning", "TooManyMissedTimes",
                              f"too many missed start times: {missed}. Set or decrease .spec.startingDeadlineSeconds "
                              "or check clock skew")
        wait = (schedule.next_after(scheduled or earliest) - now).total_seconds() + 0.1
        if scheduled is None:
            return False, wait
        wait = (schedule.next_after(now) - now).total_seconds() + 0.1
        if deadline is not None and scheduled + dt.timedelta(seconds=int(deadline)) < now:
            self.events.event(cronjob, "Warning", "MissSchedule",
                              f"Missed scheduled time to start a job: {rfc1123z(scheduled)}")
            return False, wait
        name = job_name(cronjob, scheduled)
        active = status.setdefault("active", [])
        if any(r.get("name") == name for r in active) or parse_time(status.get("lastScheduleTime")) == scheduled:
            return False, wait
        policy = spec.get("concurrencyPolicy") or "Allow"
        if policy == "Forbid" and active:
            self.events.event(cronjob, "Normal", "JobAlreadyActive",
                              "Not starting job because prior execution is running and concurrency policy is Forbid")
            return False, wait
        if policy == "Replace":
            for ref in list(active):
                await self._delete_job(cronjob, ref.get("namespace") or meta(cronjob)["namespace"], ref["name"])
                active.remove(ref)
        body = self._job_from_template(cronjob, scheduled, tz)
        try:
            job = await self.client.create(JOBS, body, meta(cronjob)["namespace"])
        except AlreadyExists:  # made in a sync whose status write was lost: adopt it into the status
            job = await self.client.get(JOBS, name, meta(cronjob)["namespace"])
            if (controller_of(job) or {}).get("uid") != meta(cronjob)["uid"]:
                return False, wait
        except Exception as exc:
            self.events.event(cronjob, "Warning", "FailedCreate", f"Error creating job: {exc}")
            raise
        else:
            self.events.event(cronjob, "Normal", "SuccessfulCreate", f"Created job {name}")
        if not any(r.get("uid") == meta(job)["uid"] for r in active):
            active.append(job_reference(job))
        status["lastScheduleTime"] = format_time(scheduled)
        return True, wait

    @staticmethod
    def _job_from_template(cronjob: dict[str, Any], scheduled: dt.datetime, tz: dt.tzinfo) -> dict[str, Any]:
        template = (cronjob.get("spec") or {}).get("jobTemplate") or {}
        tmeta = template.get("metadata") or {}
        annotations = dict(tmeta.get("annotations") or {})
        annotations[SCHEDULED_ANNOTATION] = rfc3339(scheduled.astimezone(tz))
        body_meta: dict[str, Any] = {
            "name": job_name(cronjob, scheduled), "annotations": annotations,
            "ownerReferences": [{"apiVersion": "batch/v1", "kind": "CronJob", "name": meta(cronjob)["name"],
                                 "uid": meta(cronjob)["uid"], "controller": True, "blockOwnerDeletion": True}]}
        if tmeta.get("labels"):
            body_meta["labels"] = dict(tmeta["labels"])
        return {"apiVersion": "batch/v1", "kind": "Job", "metadata": body_meta,
                "spec": copy.deepcopy(template.get("spec") or {})}

    async def _delete_job(self, cronjob: dict[str, Any], namespace: str, name: str) -> None:
        try:
            await self.client.delete(JOBS, name, namespace, body=BACKGROUND)
        except NotFound:
            return
        self.events.event(cronjob, "Normal", "SuccessfulDelete", f"Deleted job {name}")

    async def _clean_history(self, cronjob: dict[str, Any], status: dict[str, Any],
                             children: list[dict[str, Any]]) -> bool:
        """Delete the oldest finished Jobs beyond the history limits."""
        spec = cronjob.get("spec") or {}
        changed = False
        for kind, limit in (("Complete", spec.get("successfulJobsHistoryLimit")),
                            ("Failed", spec.get("failedJobsHistoryLimit"))):
            if limit is None:
                continue
            finished = [j for j in children if is_true(j.get("status") or {}, kind)
                        and not meta(j).get("deletionTimestamp")]
            if len(finished) <= int(limit):
                continue
            finished.sort(key=lambda j: (((j.get("status") or {}).get("startTime") is None),
                                         (j.get("status") or {}).get("startTime") or "", meta(j)["name"]))
            for job in finished[:len(finished) - int(limit)]:
                await self._delete_job(cronjob, meta(job)["namespace"], meta(job)["name"])
                active = status.get("active") or []
                if any(r.get("uid") == meta(job)["uid"] for r in active):
                    status["active"] = [r for r in active if r.get("uid") != meta(job)["uid"]]
                    changed = True
        return changed
