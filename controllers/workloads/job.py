"""The Job controller: Pods run to completion, as kube-controller-manager's (1.32) runs them.

- Pods are created from the template with the `batch.kubernetes.io/job-tracking` finalizer, up to
  `parallelism` and the completions still needed (Indexed Jobs: one Pod per pending index, with the
  completion-index annotation and label, hostname `<job>-<index>` and `JOB_COMPLETION_INDEX` from the
  annotation); failed Pods are replaced after an exponential back-off (`backoff_base` doubled per failure,
  capped at `backoff_max`).
- A finished Pod is first written to `status.uncountedTerminatedPods`, then loses its finalizer, then is
  counted in `succeeded`/`failed`: no Pod is counted twice or lost, even if it is deleted meanwhile.
- The Job fails on `backoffLimit` (BackoffLimitExceeded), `activeDeadlineSeconds` (DeadlineExceeded), a
  FailJob rule of its `podFailurePolicy` (PodFailurePolicy) or, with `backoffLimitPerIndex`, on more failed
  indexes than `maxFailedIndexes` (MaxFailedIndexesExceeded) or once every index succeeded or failed
  (FailedIndexes), through the interim FailureTarget condition; it succeeds through SuccessCriteriaMet then
  Complete, when its completions are reached or a `successPolicy` rule is met (jobindex.py for both Indexed
  features); suspending deletes its Pods (Suspended condition).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import datetime as dt
from collections.abc import Callable
from typing import Any

from mini_kube.client import ApiError, Conflict, NotFound
from mini_kube.client.informer import SharedInformerFactory
from mini_kube.machinery.meta import meta
from mini_kube.machinery.refs import JOBS, PODS
from mini_kube.machinery.times import format_time, parse_time

from ..reconciler import Controller, Result
from .common import Expectations, controller_of, deletion_rank, is_active, is_ready, selector_matches
from .jobindex import (
    delayed_pods,
    failed_indexes,
    has_per_index,
    index_annotations,
    index_backoff,
    match_success_policy,
)
from .jobtracking import MAX_PER_SYNC, REMOVE_FINALIZER, STRATEGIC, StatusTracking, SyncContext, valid_index
from .jobutil import (
    INDEX_ANNOTATION,
    INDEX_ENV,
    INDEX_LABEL,
    JOB_CONTROLLER,
    TRACKING_FINALIZER,
    Backoff,
    OwnWrites,
    completion_index,
    condition,
    ensure_condition,
    has_finalizer,
    is_finished,
    is_pod_failed,
    is_terminating,
    is_true,
    match_failure_policy,
    new_condition,
    only_replace_failed,
    parse_indexes,
    phase,
)

ORPHANS = "job-orphans"
COMPLETIONS_REACHED = ("CompletionsReached", "Reached expected number of succeeded pods")
MAX_FAILED_INDEXES_EXCEEDED = ("MaxFailedIndexesExceeded",
                               "Job has exceeded the specified maximal number of failed indexes")
FAILED_INDEXES = ("FailedIndexes", "Job has failed indexes")


def _orphan_index(pod: dict[str, Any]) -> tuple[str, ...]:
    """Pods without a controller, by namespace: the ones a Job may adopt."""
    return () if controller_of(pod) is not None else (meta(pod).get("namespace") or "",)


class JobController(StatusTracking, Controller):
    name = "job"
    workers = 4

    def __init__(self, client: Any, informers: SharedInformerFactory | None = None, events: Any = None, *,
                 backoff_base: float = 10.0, backoff_max: float = 360.0,
                 now: Callable[[], dt.datetime] | None = None) -> None:
        super().__init__(client, informers, events)
        self.backoff_base, self.backoff_max = backoff_base, backoff_max
        self.now = now or (lambda: dt.datetime.now(dt.UTC))
        self.expectations = Expectations()
        self.finalizer_removals: dict[str, set[str]] = {}  # job key -> Pod uids whose finalizer is going
        self.backoffs: dict[str, Backoff] = {}
        self.written = OwnWrites()

    # -- events -----------------------------------------------------------------------------------------------
    def setup(self) -> None:
        self.jobs = self.watch(JOBS, enqueue=False)
        self.jobs.add_handler(self._job_changed)
        self.pods = self.watch(PODS, enqueue=False)
        self.pods.add_index(ORPHANS, _orphan_index)
        self.pods.add_handler(self._pod_changed)

    def _job_changed(self, event: str, old: dict[str, Any] | None, new: dict[str, Any] | None) -> None:
        job = new if event != "delete" else old
        if not job:
            return
        self.queue.add(f"{meta(job)['namespace']}/{meta(job)['name']}")
        if event == "delete":  # its Pods keep their finalizers: free them
            for pod in self.pods.by_index("owner-uid", meta(job).get("uid", "")):
                if has_finalizer(pod):
                    self.queue.add(("pod", f"{meta(pod)['namespace']}/{meta(pod)['name']}"))

    def _resolve(self, pod: dict[str, Any], ref: dict[str, Any] | None) -> dict[str, Any] | None:
        if ref is None or ref.get("kind") != "Job":
            return None
        job = self.jobs.get(f"{meta(pod)['namespace']}/{ref['name']}")
        return job if job is not None and meta(job).get("uid") == ref.get("uid") else None

    def _pod_changed(self, event: str, old: dict[str, Any] | None, new: dict[str, Any] | None) -> None:
        pod = new if event != "delete" else old
        if not pod:
            return
        namespace, uid = meta(pod)["namespace"], meta(pod).get("uid", "")
        ref = controller_of(pod)
        if event == "update" and old is not None and controller_of(old) != ref:
            previous = self._resolve(old, controller_of(old))
            if previous is not None:
                self.queue.add(f"{namespace}/{meta(previous)['name']}")
        job = self._resolve(pod, ref)
        if job is None:
            if has_finalizer(pod) and event != "delete" and (ref is None or ref.get("kind") == "Job"):
                self.queue.add(("pod", f"{namespace}/{meta(pod)['name']}"))
            if ref is None and event != "delete":
                for candidate in self.jobs.list(namespace):
                    if selector_matches((candidate.get("spec") or {}).get("selector"), meta(pod).get("labels")):
                        self.queue.add(f"{namespace}/{meta(candidate)['name']}")
            return
        key = f"{namespace}/{meta(job)['name']}"
        was_deleting = bool(old and meta(old).get("deletionTimestamp"))
        if event == "add":
            if meta(pod).get("deletionTimestamp"):
                self.expectations.lower(key, deletes=1)
            else:
                self.expectations.lower(key, adds=1)
        elif (event == "update" and meta(pod).get("deletionTimestamp") and not was_deleting) or (
                event == "delete" and not was_deleting and not meta(pod).get("deletionTimestamp")):
            self.expectations.lower(key, deletes=1)
        if event == "delete" or not has_finalizer(pod):
            self.finalizer_removals.get(key, set()).discard(uid)
        if is_finished(job) and has_finalizer(pod) and event != "delete":
            self.queue.add(("pod", f"{namespace}/{meta(pod)['name']}"))
        self.queue.add(key)

    # -- reconcile --------------------------------------------------------------------------------------------
    async def reconcile(self, key: Any) -> Result | None:
        if isinstance(key, tuple):
            await self._free_pod(key[1])
            return None
        job = self.written.fresh(key, self.jobs.get(key))
        if job is None:
            self.expectations.forget(key)
            self.finalizer_removals.pop(key, None)
            self.backoffs.pop(key, None)
            return None
        spec = job.get("spec") or {}
        if is_finished(job):  # none of its Pods will be counted any more: free those still held
            self.backoffs.pop(key, None)
            for pod in self.pods.by_index("owner-uid", meta(job)["uid"]):
                if has_finalizer(pod):
                    await self._free_pod(f"{meta(pod)['namespace']}/{meta(pod)['name']}")
            return None
        if spec.get("managedBy") not in (None, JOB_CONTROLLER):
            return None
        if spec.get("completionMode") not in (None, "NonIndexed", "Indexed"):
            self.events.event(job, "Warning", "UnknownCompletionMode",
                              "Skipped Job sync because completion mode is unknown")
            return None
        return await self._sync(key, job)

    async def _free_pod(self, pod_key: str) -> None:
        """Remove the tracking finalizer of a Pod whose Job is gone or finished (it will not be counted)."""
        pod = self.pods.get(pod_key)
        if pod is None or not has_finalizer(pod):
            return
        ref = controller_of(pod)
        if ref is not None and ref.get("kind") != "Job":
            return
        job = self._resolve(pod, ref)
        if job is not None and not is_finished(job):
            return
        with contextlib.suppress(NotFound):
            await self.client.patch(PODS, meta(pod)["name"], REMOVE_FINALIZER, meta(pod)["namespace"],
                                    patch_type=STRATEGIC)

    async def _sync(self, key: str, job: dict[str, Any]) -> Result | None:
        now = self.now()
        status = copy.deepcopy(job.get("status") or {})
        uncounted = status.setdefault("uncountedTerminatedPods", {})
        satisfied = self.expectations.satisfied(key)
        pods = await self._claim(job)
        active = [p for p in pods if is_active(p)]
        ctx = SyncContext(job, status, pods, active, set(self.finalizer_removals.get(key, ())),
                          list(uncounted.get("succeeded") or ()), list(uncounted.get("failed") or ()))
        ctx.terminating = sum(is_terminating(p) for p in pods)
        ctx.ready = sum(is_ready(p) for p in active)
        new_succeeded, new_failed = self._newly_finished(ctx)
        ctx.succeeded = int(status.get("succeeded") or 0) + len(new_succeeded) + len(ctx.uncounted_succeeded)
        counted = [p for p in new_failed if match_failure_policy(job, p)[1]]
        ctx.failed = int(status.get("failed") or 0) + len(counted) + len(ctx.uncounted_failed)
        suspended = bool(ctx.spec.get("suspend"))
        if not status.get("startTime") and not suspended:
            status["startTime"] = format_time(now)
        ctx.backoff = self.backoffs.get(key, Backoff()).after(new_succeeded, new_failed)
        requeue: list[float] = []

        ctx.finished = copy.deepcopy(condition(status, "SuccessCriteriaMet")) if is_true(
            status, "SuccessCriteriaMet") else None
        if ctx.finished is None:
            target = condition(status, "FailureTarget")
            if target is not None and target.get("status") == "True":
                ctx.finished = new_condition("Failed", "True", target.get("reason", ""), target.get("message", ""),
                                             now)
            elif (message := self._fail_job_message(job, pods)) is not None:
                ctx.finished = new_condition("FailureTarget", "True", "PodFailurePolicy", message, now)
        if ctx.finished is None:
            deadline = ctx.spec.get("activeDeadlineSeconds")
            if ctx.failed > int(ctx.spec.get("backoffLimit", 6)) or self._past_restart_limit(job, pods):
                ctx.finished = new_condition("FailureTarget", "True", "BackoffLimitExceeded",
                                             "Job has reached the specified backoff limit", now)
            elif deadline is not None and not suspended:
                started = parse_time(status.get("startTime")) or now
                left = float(deadline) - (now - started).total_seconds()
                if left <= 0:
                    ctx.finished = new_condition("FailureTarget", "True", "DeadlineExceeded",
                                                 "Job was active longer than specified deadline", now)
                else:
                    requeue.append(left)
        if ctx.indexed:
            ctx.prev_succeeded_indexes = parse_indexes(status.get("completedIndexes"), ctx.completions or 0)
            ctx.succeeded_indexes = ctx.prev_succeeded_indexes | {
                completion_index(p) for p in pods
                if phase(p) == "Succeeded" and valid_index(ctx, p) and has_finalizer(p)}
            ctx.succeeded = len(ctx.succeeded_indexes)
            self._index_outcome(ctx, now)

        active_count = len(active)
        if ctx.finished is not None:
            deleted, deleted_ready = await self._delete_active(job, active)
            if deleted != active_count or not satisfied:
                ctx.finished = None  # not yet: Pods still to go, or not yet seen
            active_count -= deleted
            ctx.terminating += deleted
            ctx.ready -= deleted_ready
        else:
            managed = False
            if satisfied and not meta(job).get("deletionTimestamp"):
                active_count, wait = await self._manage(key, ctx)
                managed = True
                if wait:
                    requeue.append(wait)
            completions = ctx.completions
            done = ctx.succeeded > 0 if completions is None else ctx.succeeded >= completions
            if done and active_count == 0:
                ctx.finished = new_condition("SuccessCriteriaMet", "True", *COMPLETIONS_REACHED, now)
            elif managed:
                if suspended:
                    if ensure_condition(status, "Suspended", "True", "JobSuspended", "Job suspended", now):
                        self.events.event(job, "Normal", "Suspended", "Job suspended")
                elif ensure_condition(status, "Suspended", "False", "JobResumed", "Job resumed", now):
                    self.events.event(job, "Normal", "Resumed", "Job resumed")
                    status["startTime"] = format_time(now)  # the deadline counts from the resume
        status["active"] = active_count
        status["ready"] = ctx.ready
        status["terminating"] = ctx.terminating
        await self._track(key, ctx, now)
        return Result(requeue_after=max(min(requeue), 0.001)) if requeue else None

    @staticmethod
    def _index_outcome(ctx: SyncContext, now: dt.datetime) -> None:
        """Indexed Jobs: failed indexes (backoffLimitPerIndex) may fail the Job; a successPolicy may end it."""
        job, completions = ctx.job, ctx.completions or 0
        if has_per_index(job):
            ctx.failed_indexes = failed_indexes(job, ctx.pods, completions, has_finalizer)
            if ctx.finished is None:
                limit = ctx.spec.get("maxFailedIndexes")
                failed = len(ctx.failed_indexes)
                if limit is not None and failed > int(limit):
                    ctx.finished = new_condition("FailureTarget", "True", *MAX_FAILED_INDEXES_EXCEEDED, now)
                elif failed > 0 and failed + len(ctx.succeeded_indexes) >= completions:
                    ctx.finished = new_condition("FailureTarget", "True", *FAILED_INDEXES, now)
            ctx.delayed = delayed_pods(job, ctx.pods, ctx.active, completions,
                                       ctx.succeeded_indexes | ctx.failed_indexes, has_finalizer)
        if ctx.finished is None and (message := match_success_policy(job, ctx.succeeded_indexes)) is not None:
            ctx.finished = new_condition("SuccessCriteriaMet", "True", "SuccessPolicy", message, now)

    def _newly_finished(self, ctx: SyncContext) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """Finished Pods that still carry the finalizer and are not yet among the uncounted ones."""
        succeeded, failed = [], []
        for pod in ctx.pods:
            uid = meta(pod).get("uid", "")
            if not has_finalizer(pod) or uid in ctx.expected_removals:
                continue
            if ctx.indexed and not valid_index(ctx, pod):
                continue
            if phase(pod) == "Succeeded" and uid not in ctx.uncounted_succeeded:
                succeeded.append(pod)
            elif is_pod_failed(pod, ctx.job) and uid not in ctx.uncounted_failed:
                failed.append(pod)
        return succeeded, failed

    @staticmethod
    def _fail_job_message(job: dict[str, Any], pods: list[dict[str, Any]]) -> str | None:
        if not (job.get("spec") or {}).get("podFailurePolicy"):
            return None
        for pod in pods:
            if is_pod_failed(pod, job):
                message = match_failure_policy(job, pod)[0]
                if message is not None:
                    return message
        return None

    @staticmethod
    def _past_restart_limit(job: dict[str, Any], pods: list[dict[str, Any]]) -> bool:
        """restartPolicy OnFailure: the running Pods' container restarts reach backoffLimit."""
        spec = job.get("spec") or {}
        if (((spec.get("template") or {}).get("spec") or {}).get("restartPolicy")) != "OnFailure":
            return False
        restarts = 0
        for pod in pods:
            if phase(pod) in ("Running", "Pending"):
                status = pod.get("status") or {}
                for c in (status.get("initContainerStatuses") or []) + (status.get("containerStatuses") or []):
                    restarts += int(c.get("restartCount") or 0)
        limit = int(spec.get("backoffLimit", 6))
        return restarts > 0 if limit == 0 else restarts >= limit

    # -- Pods -------------------------------------------------------------------------------------------------
    async def _claim(self, job: dict[str, Any]) -> list[dict[str, Any]]:
        """The Job's Pods: owned ones that still match (others are released) and matching orphans, adopted
        with the tracking finalizer."""
        uid = meta(job)["uid"]
        selector = (job.get("spec") or {}).get("selector")
        mine: list[dict[str, Any]] = []
        candidates = {meta(p)["uid"]: p for p in self.pods.by_index("owner-uid", uid)}
        candidates.update((meta(p)["uid"], p) for p in self.pods.by_index(ORPHANS, meta(job)["namespace"]))
        for pod in candidates.values():
            owner = controller_of(pod)
            matches = selector_matches(selector, meta(pod).get("labels"))
            body: dict[str, Any] | None = None
            if owner is not None and owner.get("uid") == uid:
                if matches or meta(pod).get("deletionTimestamp"):
                    mine.append(pod)
                    continue
                refs = [r for r in meta(pod).get("ownerReferences") or () if r.get("uid") != uid]
                body = {"ownerReferences": refs or None}
            elif owner is None and matches and not meta(pod).get("deletionTimestamp") and \
                    not meta(job).get("deletionTimestamp"):
                refs = list(meta(pod).get("ownerReferences") or ()) + [self._owner_ref(job)]
                finalizers = list(meta(pod).get("finalizers") or ())
                body = {"ownerReferences": refs, "finalizers": finalizers + (
                    [TRACKING_FINALIZER] if TRACKING_FINALIZER not in finalizers else [])}
            if body is None:
                continue
            body["resourceVersion"] = meta(pod)["resourceVersion"]
            with contextlib.suppress(NotFound, Conflict):
                updated = await self.client.patch(PODS, meta(pod)["name"], {"metadata": body}, meta(pod)["namespace"])
                if owner is None:
                    mine.append(updated)
        return mine

    @staticmethod
    def _owner_ref(job: dict[str, Any]) -> dict[str, Any]:
        return {"apiVersion": "batch/v1", "kind": "Job", "name": meta(job)["name"], "uid": meta(job)["uid"],
                "controller": True, "blockOwnerDeletion": True}

    def _pod_body(self, job: dict[str, Any], index: int, replaced: dict[str, Any] | None = None) -> dict[str, Any]:
        template = copy.deepcopy((job.get("spec") or {}).get("template") or {})
        tmeta = template.get("metadata") or {}
        labels = dict(tmeta.get("labels") or {})
        annotations = dict(tmeta.get("annotations") or {})
        spec = template.get("spec") or {}
        name = meta(job)["name"]
        generate = f"{name}-"
        if index >= 0:
            annotations[INDEX_ANNOTATION] = str(index)
            if has_per_index(job):
                annotations.update(index_annotations(job, replaced))
            labels[INDEX_LABEL] = str(index)
            spec["hostname"] = f"{name}-{index}"
            generate = f"{name}-{index}-"
            for container in (spec.get("containers") or []) + (spec.get("initContainers") or []):
                env = container.setdefault("env", [])
                if not any(e.get("name") == INDEX_ENV for e in env):
                    env.append({"name": INDEX_ENV, "valueFrom": {"fieldRef": {
                        "fieldPath": f"metadata.annotations['{INDEX_ANNOTATION}']"}}})
        finalizers = list(tmeta.get("finalizers") or ())
        if TRACKING_FINALIZER not in finalizers:
            finalizers.append(TRACKING_FINALIZER)
        body_meta: dict[str, Any] = {"generateName": generate, "labels": labels, "finalizers": finalizers,
                                     "ownerReferences": [self._owner_ref(job)]}
        if annotations:
            body_meta["annotations"] = annotations
        return {"apiVersion": "v1", "kind": "Pod", "metadata": body_meta, "spec": spec}

    async def _manage(self, key: str, ctx: SyncContext) -> tuple[int, float]:
        """Create or delete Pods towards the wanted number; returns (active Pods, seconds to wait for the
        back-off)."""
        job, spec = ctx.job, ctx.spec
        active = len(ctx.active)
        if spec.get("suspend"):
            victims = sorted(ctx.active, key=deletion_rank)
            return active - await self._delete_pods(key, ctx, victims), 0.0
        parallelism = int(spec.get("parallelism", 1))
        completions = ctx.completions
        if completions is None:
            want = active if ctx.succeeded > 0 else parallelism
        else:
            want = max(min(completions - ctx.succeeded, parallelism), 0)
        victims = self._surplus(ctx, max(active - want, 0))[:MAX_PER_SYNC]
        if victims:
            return active - await self._delete_pods(key, ctx, victims), 0.0
        terminating = ctx.terminating if only_replace_failed(job) else 0
        diff = min(want - terminating - active, MAX_PER_SYNC)
        if diff <= 0:
            return active, 0.0
        per_index = has_per_index(job)
        wait = 0.0 if per_index else ctx.backoff.remaining(self.now(), self.backoff_base, self.backoff_max)
        if wait > 0:
            return active, wait
        indexes = [-1] * diff
        if ctx.indexed:
            indexes = self._pending_indexes(ctx, diff)
            if per_index:
                indexes, wait = self._indexes_past_backoff(ctx, indexes)
            diff = len(indexes)
            if not diff:
                return active, wait
        self.expectations.expect(key, adds=diff)
        created = 0
        batch = 1
        while indexes:
            chunk, indexes = indexes[:batch], indexes[batch:]
            results = await asyncio.gather(*(self.client.create(PODS, self._pod_body(job, i, ctx.delayed.get(i)),
                                                                meta(job)["namespace"])
                                             for i in chunk), return_exceptions=True)
            errors = [r for r in results if isinstance(r, BaseException)]
            for pod in results:
                if isinstance(pod, dict):
                    created += 1
                    self.events.event(job, "Normal", "SuccessfulCreate", f"Created pod: {meta(pod)['name']}")
            if errors:
                self.expectations.lower(key, adds=len(errors) + len(indexes))  # skipped ones are not expected
                self.events.event(job, "Warning", "FailedCreate", f"Error creating: {errors[0]}")
                break
            batch *= 2
        return active + created, wait

    def _surplus(self, ctx: SyncContext, at_least: int) -> list[dict[str, Any]]:
        """Active Pods to remove: (Indexed) those with a bad or repeated index, then the lowest ranked."""
        remove: list[dict[str, Any]] = []
        left = ctx.active
        if ctx.indexed:
            left = []
            by_index: dict[int, list[dict[str, Any]]] = {}
            for pod in ctx.active:
                if valid_index(ctx, pod):
                    by_index.setdefault(completion_index(pod), []).append(pod)
                else:
                    remove.append(pod)
            for group in by_index.values():
                ranked = sorted(group, key=deletion_rank)
                remove += ranked[:-1]
                left.append(ranked[-1])
        if len(remove) < at_least:
            remove += sorted(left, key=deletion_rank)[:at_least - len(remove)]
        return remove

    @staticmethod
    def _pending_indexes(ctx: SyncContext, count: int) -> list[int]:
        """The lowest indexes neither succeeded, failed nor running (nor terminating, when only failed Pods are
        replaced)."""
        taken = set(ctx.succeeded_indexes) | set(ctx.failed_indexes or ()) | {
            completion_index(p) for p in ctx.active if valid_index(ctx, p)}
        if only_replace_failed(ctx.job):
            taken |= {completion_index(p) for p in ctx.pods if is_terminating(p)}
        return [i for i in range(ctx.completions or 0) if i not in taken][:count]

    def _indexes_past_backoff(self, ctx: SyncContext, indexes: list[int]) -> tuple[list[int], float]:
        """The indexes whose own back-off is over, and the shortest wait of the others."""
        now, ready, waits = self.now(), [], []
        for index in indexes:
            wait = index_backoff(ctx.delayed.get(index), now, self.backoff_base, self.backoff_max)
            if wait > 0:
                waits.append(wait)
            else:
                ready.append(index)
        return ready, min(waits, default=0.0)

    async def _delete_pods(self, key: str, ctx: SyncContext, pods: list[dict[str, Any]]) -> int:
        """Remove the finalizer, then delete (Pods the Job no longer wants are not counted)."""
        if not pods:
            return 0
        self.expectations.expect(key, deletes=len(pods))

        async def one(pod: dict[str, Any]) -> bool:
            try:
                if has_finalizer(pod):
                    await self.client.patch(PODS, meta(pod)["name"], REMOVE_FINALIZER, meta(pod)["namespace"],
                                            patch_type=STRATEGIC)
                await self.client.delete(PODS, meta(pod)["name"], meta(pod)["namespace"])
            except NotFound:
                self.expectations.lower(key, deletes=1)
                return True
            except ApiError:
                self.expectations.lower(key, deletes=1)
                return False
            self.events.event(ctx.job, "Normal", "SuccessfulDelete", f"Deleted pod: {meta(pod)['name']}")
            if is_ready(pod):
                ctx.ready -= 1
            ctx.terminating += 1
            return True

        return sum(await asyncio.gather(*(one(p) for p in pods)))

    async def _delete_active(self, job: dict[str, Any], pods: list[dict[str, Any]]) -> tuple[int, int]:
        """Delete the active Pods of a failing Job, keeping their finalizers (they are counted as failed)."""
        async def one(pod: dict[str, Any]) -> bool:
            try:
                await self.client.delete(PODS, meta(pod)["name"], meta(pod)["namespace"])
            except NotFound:
                return True
            except ApiError:
                return False
            self.events.event(job, "Normal", "SuccessfulDelete", f"Deleted pod: {meta(pod)['name']}")
            return True

        done = await asyncio.gather(*(one(p) for p in pods))
        return sum(done), sum(ok and is_ready(p) for ok, p in zip(done, pods, strict=True))

    # -- status -----------------------------------------------------------------------------------------------
