"""The ReplicaSet controller: Pods to match `replicas`, as kube-controller-manager's.

Creates Pods from the template (named `<rs>-<random>`, owned by the ReplicaSet) or deletes the surplus ranked
as upstream ranks them (unscheduled, pending, not ready, newest first); adopts matching orphans and releases
owned Pods that no longer match; waits for its own creations and deletions to show in the cache (expectations)
before acting again; reports replicas, fullyLabeledReplicas, readyReplicas, availableReplicas (minReadySeconds)
and observedGeneration through the status subresource, with a ReplicaFailure condition while Pods cannot be
created. The kind is a class attribute: the ReplicationController controller (replicationcontroller.py) is this one
run over ReplicationControllers, as upstream's.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from mini_kube.client import ApiClient, Conflict, NotFound
from mini_kube.client.informer import SharedInformerFactory
from mini_kube.machinery.meta import controller_ref, meta
from mini_kube.machinery.refs import PODS, REPLICASETS
from mini_kube.machinery.times import now_rfc3339

from ..reconciler import Controller, Result
from .claims import claim
from .common import EXPECTATIONS_TIMEOUT, Expectations, controller_of, is_active, selector_matches
from .podsummary import ORPHANS_INDEX, SUMMARY_VIEW, PodSummary, orphan_namespace, summarize

BURST = 100  # creations or deletions started at once (upstream's burstReplicas is 500, in growing batches)


def pod_from_template(owner: dict[str, Any], template: dict[str, Any]) -> dict[str, Any]:
    tmeta = template.get("metadata") or {}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"generateName": f"{meta(owner)['name']}-", "labels": dict(tmeta.get("labels") or {}),
                         "annotations": dict(tmeta.get("annotations") or {}) or None,
                         "ownerReferences": [controller_ref(owner)]},
            "spec": template.get("spec") or {}}


class ReplicasFailed(Exception):
    """A sync could not create or delete the Pods it wanted (the reconcile is retried with back-off)."""


def failure_conditions(conditions: list[dict[str, Any]], failure: dict[str, str] | None) -> list[dict[str, Any]]:
    """The status conditions after a sync, as upstream's calculateStatus: a ReplicaFailure condition is added when a
    create or delete failed and there is none yet, and removed after a sync that wrote without failing."""
    has_failure = any(c.get("type") == "ReplicaFailure" for c in conditions)
    if failure is not None and not has_failure:
        return [*conditions, {"type": "ReplicaFailure", "status": "True", "lastTransitionTime": now_rfc3339(),
                              **failure}]
    if failure is None and has_failure:
        return [c for c in conditions if c.get("type") != "ReplicaFailure"]
    return conditions


class ReplicaSetController(Controller):
    name = "replicaset"
    workers = 4
    resource = REPLICASETS
    kind = "ReplicaSet"

    @staticmethod
    def selector_of(owner: dict[str, Any]) -> dict[str, Any] | None:
        """The owner's selector as a metav1.LabelSelector."""
        return (owner.get("spec") or {}).get("selector")

    def __init__(self, client: ApiClient, informers: SharedInformerFactory | None = None, *,
                 expectations_timeout: float = EXPECTATIONS_TIMEOUT, **kwargs: Any) -> None:
        super().__init__(client, informers, **kwargs)
        self.expectations = Expectations(expectations_timeout)

    def setup(self) -> None:
        self.owners = self.watch(self.resource)
        self.pods = self.watch(PODS, enqueue=False)
        self.pods.add_index(ORPHANS_INDEX, orphan_namespace)
        self.pods.add_view(SUMMARY_VIEW, summarize)
        self.pods.add_handler(self._pod_changed)

    def _pod_changed(self, event: str, old: dict[str, Any] | None, new: dict[str, Any] | None) -> None:
        pod = new if event != "delete" else old
        if not pod:
            return
        owner = controller_of(pod)
        namespace = meta(pod).get("namespace")
        if owner is not None and owner.get("kind") == self.kind:
            key = f"{namespace}/{owner['name']}"
            # a deletion is seen when the Pod starts terminating (it is no longer active), as upstream's updatePod:
            # a Pod with a long grace period does not hold the ReplicaSet back until it is gone
            was_terminating = bool(old and meta(old).get("deletionTimestamp"))
            if event == "add":
                self.expectations.lower(key, **({"deletes": 1} if meta(pod).get("deletionTimestamp") else {"adds": 1}))
            elif (event == "update" and meta(pod).get("deletionTimestamp") and not was_terminating) or (
                    event == "delete" and not was_terminating):
                self.expectations.lower(key, deletes=1)
            self.queue.add(key)
            return
        for rs in self.owners.list(namespace):  # an orphan: the owners that could adopt it
            if selector_matches(self.selector_of(rs), meta(pod).get("labels")):
                self.queue.add(f"{namespace}/{meta(rs)['name']}")

    async def reconcile(self, key: Any) -> Result | None:
        rs = self.owners.get(key)
        if rs is None:
            self.expectations.forget(key)
            return None
        pods = await self._claim(rs)
        active = [p for p in pods if p.active]
        satisfied = self.expectations.satisfied(key)
        failure = None
        if satisfied and not meta(rs).get("deletionTimestamp"):
            failure = await self._scale(key, rs, active)
        result = await self._write_status(rs, active, failure)
        if failure is not None:  # retried with growing back-off, as upstream returns manageReplicas' error
            raise ReplicasFailed(failure["message"])
        waiting = 0.0 if satisfied else self.expectations.remaining(key)
        if waiting:  # expectations that are never met lapse: sync again then, even if no event comes
            return Result(requeue_after=min(waiting, result.requeue_after if result else waiting))
        return result

    async def _claim(self, rs: dict[str, Any]) -> list[PodSummary]:
        """The ReplicaSet's Pods: owned ones that still match, plus matching active orphans it adopts (retrying
        an adoption that a concurrent write, such as the scheduler's status update, made stale). Read from the
        Pods' summaries; only the Pods to release or adopt are decoded."""
        selector = self.selector_of(rs)
        uid, namespace = meta(rs)["uid"], meta(rs)["namespace"]
        prefix = f"{namespace}/"
        kept, to_claim = [], []
        for key in self.pods.index_keys("owner-uid", uid):
            summary: PodSummary | None = self.pods.view(SUMMARY_VIEW, key)
            if summary is None or summary.controller_uid != uid or not key.startswith(prefix):
                continue
            if selector_matches(selector, summary.label_map()):
                kept.append(summary)
            else:
                to_claim.append(key)  # to release
        if not meta(rs).get("deletionTimestamp"):
            for key in self.pods.index_keys(ORPHANS_INDEX, namespace):
                summary = self.pods.view(SUMMARY_VIEW, key)
                if summary is not None and summary.active and selector_matches(selector, summary.label_map()):
                    to_claim.append(key)  # to adopt
        if to_claim:
            objects = [p for p in (self.pods.get(k) for k in to_claim) if p is not None]
            claimed = await claim(self.client, PODS, rs, objects, adoptable=is_active, adopt_retries=3,
                                  selects=lambda pod: selector_matches(selector, meta(pod).get("labels")))
            kept.extend(summarize(p) for p in claimed)
        return kept

    async def _scale(self, key: str, rs: dict[str, Any], active: list[PodSummary]) -> dict[str, str] | None:
        """Create or delete Pods towards `replicas`; the ReplicaFailure reason and message when a write failed."""
        wanted = int((rs.get("spec") or {}).get("replicas", 1))
        diff = wanted - len(active)
        namespace = meta(rs)["namespace"]
        if diff > 0:
            count = min(diff, BURST)
            self.expectations.expect(key, adds=count)
            template = (rs.get("spec") or {}).get("template") or {}
            body = pod_from_template(rs, template)
            results = await asyncio.gather(*(self.client.create(PODS, body, namespace) for _ in range(count)),
                                           return_exceptions=True)
            failed = sum(isinstance(r, BaseException) for r in results)
            created = [r for r in results if isinstance(r, dict)]
            for pod in created:
                self.events.event(rs, "Normal", "SuccessfulCreate", f"Created pod: {meta(pod)['name']}")
            if failed:
                self.expectations.lower(key, adds=failed)
                error = str(next(r for r in results if isinstance(r, BaseException)))
                self.events.event(rs, "Warning", "FailedCreate", f"Error creating: {error}")
                return {"reason": "FailedCreate", "message": error}
        elif diff < 0:
            victims = sorted(active, key=lambda p: p.rank)[:min(-diff, BURST)]
            self.expectations.expect(key, deletes=len(victims))
            # at once, as upstream's ReplicaSet controller deletes a batch: one by one, a scale-down of 1,000
            # took as long as 1,000 round trips
            results = await asyncio.gather(*(self.client.delete(PODS, v.name, namespace) for v in victims),
                                           return_exceptions=True)
            failure: BaseException | None = None
            for victim, result in zip(victims, results, strict=True):
                if not isinstance(result, BaseException):
                    self.events.event(rs, "Normal", "SuccessfulDelete", f"Deleted pod: {victim.name}")
                    continue
                self.expectations.lower(key, deletes=1)
                if not isinstance(result, NotFound):
                    self.events.event(rs, "Warning", "FailedDelete", f"Error deleting: {result}")
                    failure = failure or result
            if failure is not None:
                return {"reason": "FailedDelete", "message": str(failure)}
        return None

    async def _write_status(self, rs: dict[str, Any], active: list[PodSummary],
                            failure: dict[str, str] | None) -> Result | None:
        spec = rs.get("spec") or {}
        min_ready = float(spec.get("minReadySeconds") or 0)
        template_labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
        status = {
            "replicas": len(active),
            "fullyLabeledReplicas": sum(all(p.label_map().get(k) == v for k, v in template_labels.items())
                                        for p in active),
            "readyReplicas": sum(p.ready for p in active),
            "availableReplicas": sum(p.available(min_ready) for p in active),
            "observedGeneration": meta(rs).get("generation", 1),
        }
        current = rs.get("status") or {}
        conditions = failure_conditions(current.get("conditions") or [], failure)
        if any(current.get(k, 0) != v for k, v in status.items()) or conditions != (current.get("conditions") or []):
            body = {**{k: v for k, v in current.items() if k not in status}, **status, "conditions": conditions}
            for k in ("readyReplicas", "availableReplicas", "fullyLabeledReplicas", "conditions"):
                if not body.get(k):
                    body.pop(k, None)  # omitempty, as upstream writes them
            with contextlib.suppress(NotFound, Conflict):
                await self.client.replace_status(self.resource, {**rs, "status": body}, meta(rs)["namespace"])
        if min_ready > 0 and status["readyReplicas"] > status["availableReplicas"]:
            return Result(requeue_after=min_ready)  # become available later without another event
        return None
