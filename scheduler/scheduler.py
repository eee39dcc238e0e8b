"""The scheduler: informers for Pods and Nodes keep the cache; a work queue holds the keys of unscheduled Pods
whose `schedulerName` is ours ("default-scheduler", or empty); each is filtered against every node, the
feasible ones scored, the best chosen, the Pod assumed in the cache and bound through `pods/binding` in the
background (so the next Pod is placed while the binding is in flight).

A Pod that fits nowhere gets a FailedScheduling event and PodScheduled=False (reason Unschedulable) with
upstream's message, and waits, parked, for a change that could make room (see `queue.py`); when evicting
lower-priority Pods would make room, they are evicted and the Pod nominated to that node."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from typing import Any

from mini_kube.client import ApiClient, ApiError, NotFound
from mini_kube.client.events import EventRecorder
from mini_kube.client.informer import SharedInformerFactory
from mini_kube.controllers.reconciler import Controller, Result
from mini_kube.machinery.refs import NODES, PODS

from . import binder, preemption
from .cache import Cache, pod_key
from .diagnosis import NO_NODES, TERMINATING, fit_error, truncate
from .filters import Candidate, Failure, run_filters
from .queue import INITIAL_BACKOFF, MAX_BACKOFF, PriorityWorkQueue, SchedulingQueue
from .scores import select_host

log = logging.getLogger("mini-kube.scheduler")
HOUSEKEEPING = 5.0  # seconds between flushing long-parked Pods and expiring unconfirmed assumed ones
MIN_FEASIBLE = 100  # upstream's minFeasibleNodesToFind


def _spec(obj: dict[str, Any] | None) -> dict[str, Any]:
    return (obj or {}).get("spec") or {}


def _terminal(pod: dict[str, Any]) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def _counted_meta(pod: dict[str, Any]) -> tuple[Any, bool]:
    """What of a placed Pod's metadata the cache keeps: its labels, and whether it is terminating (no longer a
    preemption victim)."""
    meta = pod.get("metadata") or {}
    return meta.get("labels"), bool(meta.get("deletionTimestamp"))


def _has_pod_affinity(pod: dict[str, Any]) -> bool:
    affinity = _spec(pod).get("affinity") or {}
    return bool(affinity.get("podAffinity") or affinity.get("podAntiAffinity"))


def _node_facts(node: dict[str, Any] | None) -> tuple[Any, ...]:
    """What about a node can change where Pods fit."""
    if node is None:
        return ()
    spec, status = _spec(node), node.get("status") or {}
    ready = [c.get("status") for c in status.get("conditions") or () if c.get("type") == "Ready"]
    return ((node.get("metadata") or {}).get("labels"), spec.get("taints"), spec.get("unschedulable"),
            status.get("allocatable"), ready)


def _pod_facts(pod: dict[str, Any] | None) -> tuple[Any, ...]:
    """What about an unscheduled Pod can change where it fits (not its status, which we write)."""
    if pod is None:
        return ()
    meta = pod.get("metadata") or {}
    return (pod.get("spec"), meta.get("labels"), meta.get("annotations"))


def feasible_to_find(total: int, percentage: int = 0) -> int:
    """How many feasible nodes to look for (upstream's numFeasibleNodesToFind, adaptive percentage)."""
    if total < MIN_FEASIBLE:
        return total
    if percentage <= 0:
        percentage = max(5, 50 - total // 125)
    return max(MIN_FEASIBLE, total * percentage // 100)


class Scheduler(Controller):
    """kube-scheduler's default profile on the controller runtime."""

    name = "scheduler"
    workers = 1  # placing is one Pod at a time (bindings run concurrently), so decisions never race

    def __init__(self, client: ApiClient, informers: SharedInformerFactory | None = None, *,
                 scheduler_name: str = binder.SCHEDULER_NAME, bind_concurrency: int = 64,
                 seed: int | None = None, initial_backoff: float = INITIAL_BACKOFF,
                 max_backoff: float = MAX_BACKOFF, **kwargs: Any) -> None:
        """`initial_backoff`/`max_backoff`: an unschedulable Pod's retry back-off, in seconds (upstream's
        podInitialBackoffSeconds and podMaxBackoffSeconds, 1 and 10)."""
        kwargs.setdefault("events", EventRecorder(client, scheduler_name))
        super().__init__(client, informers, **kwargs)
        self.queue = PriorityWorkQueue(self._priority)
        self.scheduler_name = scheduler_name
        self.cache = Cache()
        self.scheduling = SchedulingQueue(self.queue, initial_backoff, max_backoff)
        self.rng = random.Random(seed)
        self._binds = asyncio.Semaphore(bind_concurrency)
        self._inflight: set[asyncio.Task[None]] = set()
        self._housekeeping: asyncio.Task[None] | None = None
        self._next_start = 0
        self._priorities: dict[str, int] = {}  # unscheduled Pods' spec.priority, for the queue's order
        self.scheduled = 0
        self.failures = 0

    def _priority(self, key: Any) -> int:
        return self._priorities.get(key, 0)

    # -- watching ------------------------------------------------------------------------------------
    def setup(self) -> None:
        self.pods = self.watch(PODS, enqueue=False)
        self.nodes = self.watch(NODES, enqueue=False)
        self.nodes.add_handler(self._node_event)
        self.pods.add_handler(self._pod_event)

    def responsible_for(self, pod: dict[str, Any]) -> bool:
        """An unscheduled, live, ungated Pod for this scheduler."""
        spec = _spec(pod)
        return (spec.get("schedulerName") or binder.SCHEDULER_NAME) == self.scheduler_name and \
            not spec.get("nodeName") and not spec.get("schedulingGates") and not _terminal(pod) and \
            not (pod.get("metadata") or {}).get("deletionTimestamp")

    def _node_event(self, event: str, old: dict[str, Any] | None, new: dict[str, Any] | None) -> None:
        if event == "delete":
            self.cache.remove_node(((old or new or {}).get("metadata") or {}).get("name", ""))
            return
        assert new is not None
        self.cache.set_node(new)
        if event == "add" or _node_facts(old) != _node_facts(new):
            self.scheduling.move_all()

    def _pod_event(self, event: str, old: dict[str, Any] | None, new: dict[str, Any] | None) -> None:
        pod = new if event != "delete" else (old or new)
        if not pod:
            return
        key = pod_key(pod)
        if event == "delete":
            self.scheduling.done(key)
            self._priorities.pop(key, None)
            if key in self.cache.pods:
                self.cache.remove_pod(key)
                self.scheduling.move_all()
            return
        if _spec(pod).get("nodeName"):
            if _terminal(pod):
                if key in self.cache.pods:
                    self.cache.remove_pod(key)
                    self.scheduling.move_all()
                return
            self._priorities.pop(key, None)
            if key in self.cache.pods and not self.cache.is_assumed(key) and old is not None and \
                    _spec(old) == _spec(pod) and _counted_meta(old) == _counted_meta(pod):
                return  # a status update (the kubelet's): nothing the scheduler counts changed
            newly = key not in self.cache.pods or self.cache.is_assumed(key)
            labels_changed = old is not None and (old.get("metadata") or {}).get("labels") != (
                pod.get("metadata") or {}).get("labels")
            self.cache.set_pod(pod)
            self.scheduling.done(key)
            if newly or labels_changed:  # only Pods with pod (anti-)affinity can care about a new neighbour
                self.scheduling.move_all(lambda _key, affinity: affinity)
            return
        if not self.responsible_for(pod) or self.cache.is_assumed(key):
            self._priorities.pop(key, None)
            self.cache.nominated.pop(key, None)
            return
        self._priorities[key] = int(_spec(pod).get("priority") or 0)
        nominated = (pod.get("status") or {}).get("nominatedNodeName")
        if nominated or key in self.cache.nominated:
            self.cache.nominate(pod, nominated)
        if event == "add":
            self.scheduling.add(key)
        elif _pod_facts(old) != _pod_facts(new):
            self.scheduling.activate(key)

    # -- scheduling one Pod ------------------------------------------------------------------------------
    async def reconcile(self, key: Any) -> Result | None:
        try:
            return self._schedule(key)
        except Exception:
            log.exception("scheduling %s failed", key)
            raise

    def _schedule(self, key: str) -> Result | None:
        """One scheduling cycle (synchronous: nothing changes the cache between reading and assuming)."""
        pod = self.pods.get(key)
        if pod is None or not self.responsible_for(pod) or self.cache.is_assumed(key) or key in self.cache.pods:
            return None
        nodes = self.cache.schedulable_nodes()
        if not nodes:
            self._unschedulable(pod, NO_NODES)
            return None
        candidate = Candidate.of(pod, self.cache)
        feasible, failures = self._find_feasible(candidate, nodes)
        if not feasible:
            message, plan = preemption.evaluate(candidate, failures, self.cache)
            self._unschedulable(pod, fit_error(len(nodes), failures.values(), message), plan)
            return None
        chosen = select_host(candidate, feasible, self.rng)
        self.cache.assume(pod, chosen.name)  # (drops a nomination too)
        self._spawn(self._bind(pod, chosen.name))
        return None

    def _find_feasible(self, candidate: Candidate, nodes: list[Any]) -> tuple[list[Any], dict[str, Failure]]:
        """Filter nodes from a rotating start until enough feasible ones are found (all, below 100 nodes)."""
        wanted = feasible_to_find(len(nodes))
        feasible, failures = [], {}
        start = self._next_start % len(nodes)
        checked = 0
        for i in range(len(nodes)):
            node = nodes[(start + i) % len(nodes)]
            checked += 1
            failure = run_filters(candidate, node)
            if failure is None:
                feasible.append(node)
                if len(feasible) >= wanted:
                    break
            else:
                failures[node.name] = failure
        self._next_start = start + checked
        return feasible, failures

    def _unschedulable(self, pod: dict[str, Any], message: str, plan: preemption.Plan | None = None) -> None:
        key = pod_key(pod)
        self.failures += 1
        self.scheduling.park(key, _has_pod_affinity(pod))
        self.events.event(_as_pod(pod), "Warning", "FailedScheduling", truncate(message))
        nominated = None
        if plan is not None:
            nominated = plan.node
            self.cache.nominate(pod, plan.node)
            for victim in plan.victims:
                self._spawn(self._preempt(pod, victim.key, plan.node))
        elif (pod.get("status") or {}).get("nominatedNodeName") and not message.endswith(TERMINATING):
            nominated = ""  # preemption found no room: the nomination is cleared, as upstream's
            self.cache.nominate(pod, None)
        self._spawn(binder.mark_unschedulable(self.client, pod, "Unschedulable", message, nominated))

    async def _preempt(self, preemptor: dict[str, Any], victim_key: str, node: str) -> None:
        namespace, _, name = victim_key.partition("/")
        victim = self.pods.get(victim_key)
        if victim is not None:
            uid = (preemptor.get("metadata") or {}).get("uid", "")
            self.events.event(_as_pod(victim), "Normal", "Preempted", f"Preempted by pod {uid} on node {node}")
        await binder.evict_victim(self.client, namespace, name)

    async def _bind(self, pod: dict[str, Any], node: str) -> None:
        key = pod_key(pod)
        meta = pod.get("metadata") or {}
        async with self._binds:
            try:
                await binder.bind(self.client, pod, node)
            except NotFound:
                self.cache.forget(key)
                self.scheduling.done(key)
                return
            except (ApiError, OSError, asyncio.TimeoutError) as exc:  # noqa: UP041
                self.cache.forget(key)
                detail = exc.body.get("message", str(exc)) if isinstance(exc, ApiError) else str(exc)
                message = f'binding rejected: running Bind plugin "DefaultBinder": {detail}'
                self.events.event(_as_pod(pod), "Warning", "FailedScheduling", truncate(message))
                self.scheduling.retry_later(key)
                await binder.mark_unschedulable(self.client, pod, "SchedulerError", message)
                return
        self.cache.finish_binding(key)
        self.scheduled += 1
        self.events.event(_as_pod(pod), "Normal", "Scheduled",
                          f"Successfully assigned {meta.get('namespace')}/{meta.get('name')} to {node}")

    def _spawn(self, coro: Any) -> None:
        task = asyncio.create_task(coro)
        self._inflight.add(task)
        task.add_done_callback(self._finished)

    def _finished(self, task: asyncio.Task[None]) -> None:
        self._inflight.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.debug("scheduler write failed: %s", task.exception())

    # -- lifecycle -----------------------------------------------------------------------------------
    async def start(self) -> None:
        await super().start()
        self._housekeeping = asyncio.create_task(self._housekeep(), name="scheduler-housekeeping")

    async def _housekeep(self) -> None:
        while True:
            await asyncio.sleep(HOUSEKEEPING)
            self.scheduling.flush_leftovers()
            for key in self.cache.expire():
                pod = self.pods.get(key)
                if pod is not None and self.responsible_for(pod):
                    self.scheduling.add(key)

    async def stop(self) -> None:
        if self._housekeeping is not None:
            self._housekeeping.cancel()
            await asyncio.gather(self._housekeeping, return_exceptions=True)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.gather(*self._inflight, return_exceptions=True), 5)
        await super().stop()


def _as_pod(pod: dict[str, Any]) -> dict[str, Any]:
    return {**pod, "kind": "Pod", "apiVersion": "v1"}
