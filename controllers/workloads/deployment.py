"""The Deployment controller: ReplicaSets per Pod template, rolled as kube-controller-manager rolls them.

- The new ReplicaSet is the one whose template (less `pod-template-hash`) equals the Deployment's; it is created
  as `<deployment>-<hash>` with the next `deployment.kubernetes.io/revision`.
- RollingUpdate, one step a pass (deploymentscale.py): the new ReplicaSet grows while the total stays within
  replicas + maxSurge, else old ones shrink, their unavailable Pods first, while availability stays at least
  replicas - maxUnavailable. Recreate: old ReplicaSets go to 0 and their Pods go before the new one grows.
  Each size is written conditionally on the ReplicaSet's version, so a stale cache never scales twice.
- A changed size mid-rollout (or any size while paused) is shared in proportion among the active ReplicaSets;
  old ReplicaSets beyond revisionHistoryLimit are deleted.
- Status: replicas, updatedReplicas, readyReplicas, availableReplicas, unavailableReplicas,
  observedGeneration and the Available and Progressing conditions (ProgressDeadlineExceeded after
  progressDeadlineSeconds without progress), so `kubectl rollout status` works as on a real cluster.
"""

from __future__ import annotations

import contextlib
import copy
import time
from typing import Any

from mini_kube.client import AlreadyExists, Conflict, NotFound
from mini_kube.client.informer import object_key
from mini_kube.machinery.meta import controller_ref, meta
from mini_kube.machinery.refs import DEPLOYMENTS, REPLICASETS
from mini_kube.machinery.times import now_rfc3339, parse_time

from ..reconciler import Controller, Result
from .common import controller_of, selector_matches, template_hash
from .deploymentscale import (
    DESIRED,
    MAX_REPLICAS,
    is_scaling_event,
    new_replicaset_size,
    old_replicaset_sizes,
    proportional_sizes,
    surge_and_unavailable,
)

REVISION = "deployment.kubernetes.io/revision"
REVISION_HISTORY = "deployment.kubernetes.io/revision-history"
HASH = "pod-template-hash"
# Deployment annotations never copied to its ReplicaSets (upstream's annotationsToSkip)
NOT_COPIED = frozenset({"kubectl.kubernetes.io/last-applied-configuration", REVISION, REVISION_HISTORY, DESIRED,
                        MAX_REPLICAS, "deprecated.deployment.rollback.to"})
MAX_HISTORY_CHARS = 2000  # upstream's maxRevHistoryLengthInChars


def plain_template(template: dict[str, Any]) -> dict[str, Any]:
    """A Pod template without the `pod-template-hash` label (to compare a ReplicaSet's with the Deployment's)."""
    result = copy.deepcopy(template)
    labels = (result.get("metadata") or {}).get("labels")
    if labels:
        labels.pop(HASH, None)
    return result


def revision(rs: dict[str, Any]) -> int:
    return int((meta(rs).get("annotations") or {}).get(REVISION, 0) or 0)


def new_replicaset_annotations(d: dict[str, Any], rs: dict[str, Any], next_revision: int) -> dict[str, str]:
    """The annotations the new ReplicaSet should carry (upstream's SetNewReplicaSetAnnotations): the Deployment's
    own (change-cause included) copied over, and the revision raised to `next_revision` when it is lower (a
    rollback to this template), the revision it had then appended to `revision-history`."""
    annotations = dict(meta(rs).get("annotations") or {})
    for key, value in (meta(d).get("annotations") or {}).items():
        if key not in NOT_COPIED:
            annotations[key] = value
    had = annotations.get(REVISION)
    old = int(had) if had and had.isdigit() else 0
    if old < next_revision:
        annotations[REVISION] = str(next_revision)
        if had:
            history = [r for r in annotations.get(REVISION_HISTORY, "").split(",") if r]
            while history and len(",".join([*history, had])) > MAX_HISTORY_CHARS:
                history.pop(0)
            annotations[REVISION_HISTORY] = ",".join([*history, had])
    return annotations


def _condition(kind: str, status: str, reason: str, message: str, old: dict[str, Any] | None) -> dict[str, Any]:
    stamp = now_rfc3339()
    transition = old.get("lastTransitionTime") if old and old.get("status") == status else stamp
    update = old.get("lastUpdateTime") if old and old.get("reason") == reason and old.get("message") == message \
        else stamp
    return {"type": kind, "status": status, "lastUpdateTime": update, "lastTransitionTime": transition,
            "reason": reason, "message": message}


class DeploymentController(Controller):
    name = "deployment"
    workers = 4

    def setup(self) -> None:
        # key -> (uid, the Progressing condition's lastUpdateTime as written, the exact moment it was written):
        # a metav1.Time keeps whole seconds only, so a deadline counted from it alone may end up to a second
        # early (a 1 s deadline timed out 0.2 s after the last progress)
        self.progress_written: dict[str, tuple[str, str, float]] = {}
        self.deployments = self.watch(DEPLOYMENTS)
        self.replicasets = self.watch(REPLICASETS, enqueue=self.enqueue_owner("Deployment"))

    def _owned(self, d: dict[str, Any]) -> list[dict[str, Any]]:
        uid = meta(d)["uid"]
        return [rs for rs in self.replicasets.by_index("owner-uid", uid)
                if (controller_of(rs) or {}).get("uid") == uid]

    async def reconcile(self, key: Any) -> Result | None:
        d = self.deployments.get(key)
        if d is None or meta(d).get("deletionTimestamp"):
            self.progress_written.pop(key, None)
            return None
        await self._adopt(d)
        owned = self._owned(d)
        new = next((rs for rs in owned if plain_template((rs.get("spec") or {}).get("template") or {})
                    == plain_template((d.get("spec") or {}).get("template") or {})), None)
        spec = d.get("spec") or {}
        if new is not None:
            new = await self._sync_new(d, new, max((revision(rs) for rs in owned if rs is not new), default=0) + 1)
            if new is None:
                return Result(requeue=True)  # changed meanwhile: the next round sees the newer one
        try:
            if spec.get("paused") or is_scaling_event(d, owned):  # sync: only scale, to the new size
                for rs, replicas in proportional_sizes(d, new, [rs for rs in owned if rs is not new]):
                    await self._scale(d, rs, replicas, annotate=True)
                if spec.get("paused"):
                    await self._clean_history(d, [rs for rs in owned if rs is not new])
                    return await self._status(d, self._owned(d), new, paused=True)
                return await self._status(d, self._owned(d), new)
            if new is None:
                new = await self._create_new(d, owned)
                if new is None:
                    return Result(requeue=True)
            old = [rs for rs in owned if meta(rs)["uid"] != meta(new)["uid"]]
            if ((spec.get("strategy") or {}).get("type") or "RollingUpdate") == "Recreate":
                await self._recreate(d, new, old)
            elif not await self._roll(d, new, old):
                await self._clean_history(d, old)
        except Conflict:  # a ReplicaSet changed since the cache saw it: decide again on the newer one
            return Result(requeue=True)
        return await self._status(d, self._owned(d), new)

    async def _adopt(self, d: dict[str, Any]) -> None:
        selector = (d.get("spec") or {}).get("selector")
        for rs in self.replicasets.list(meta(d)["namespace"]):
            if controller_of(rs) is None and selector_matches(selector, meta(rs).get("labels")):
                refs = list(meta(rs).get("ownerReferences") or ()) + [controller_ref(d)]
                with contextlib.suppress(NotFound, Conflict):
                    await self.client.patch(REPLICASETS, meta(rs)["name"], {"metadata": {
                        "ownerReferences": refs, "resourceVersion": meta(rs)["resourceVersion"]}}, meta(rs)["namespace"])

    async def _sync_new(self, d: dict[str, Any], new: dict[str, Any], next_revision: int) -> dict[str, Any] | None:
        """Bring the existing new ReplicaSet's annotations (revision, change-cause) and minReadySeconds up to date
        (None: it changed or went meanwhile)."""
        annotations = new_replicaset_annotations(d, new, next_revision)
        min_ready = (d.get("spec") or {}).get("minReadySeconds", 0)
        if annotations == (meta(new).get("annotations") or {}) and \
                (new.get("spec") or {}).get("minReadySeconds", 0) == min_ready:
            return new
        try:
            return await self.client.patch(REPLICASETS, meta(new)["name"], {
                "metadata": {"annotations": annotations, "resourceVersion": meta(new)["resourceVersion"]},
                "spec": {"minReadySeconds": min_ready}}, meta(new)["namespace"])
        except (NotFound, Conflict):
            return None

    async def _create_new(self, d: dict[str, Any], owned: list[dict[str, Any]]) -> dict[str, Any] | None:
        spec = d.get("spec") or {}
        template = copy.deepcopy(spec.get("template") or {})
        collisions = int((d.get("status") or {}).get("collisionCount") or 0)
        digest = template_hash(template, collisions)
        template.setdefault("metadata", {}).setdefault("labels", {})[HASH] = digest
        selector = copy.deepcopy(spec.get("selector") or {})
        selector.setdefault("matchLabels", {})[HASH] = digest
        next_revision = max((revision(rs) for rs in owned), default=0) + 1
        replicas = int(spec.get("replicas", 1))
        surge, _ = surge_and_unavailable(d)
        strategy = (spec.get("strategy") or {}).get("type") or "RollingUpdate"
        total = sum((rs.get("spec") or {}).get("replicas", 0) for rs in owned)
        start = replicas if not owned else (0 if strategy == "Recreate" else max(0, min(replicas,
                                                                                          replicas + surge - total)))
        annotations = {**new_replicaset_annotations(d, {}, next_revision),
                       DESIRED: str(replicas), MAX_REPLICAS: str(replicas + surge)}
        body = {"metadata": {"name": f"{meta(d)['name']}-{digest}", "labels": template["metadata"]["labels"],
                             "annotations": annotations,
                             "ownerReferences": [controller_ref(d)]},
                "spec": {"replicas": start, "minReadySeconds": spec.get("minReadySeconds", 0),
                         "selector": selector, "template": template}}
        try:
            created = await self.client.create(REPLICASETS, body, meta(d)["namespace"])
        except AlreadyExists:
            return None  # a hash collision or a stale cache: look again
        self.events.event(d, "Normal", "ScalingReplicaSet",
                          f"Scaled up replica set {meta(created)['name']} from 0 to {start}")
        return created

    async def _scale(self, d: dict[str, Any], rs: dict[str, Any], replicas: int, annotate: bool = False) -> bool:
        """Set a ReplicaSet's size, with the Deployment's desired and maximum sizes in its annotations
        (SetReplicasAnnotations), conditional on the version decided on (Conflict: it changed meanwhile). With
        `annotate`, stale annotations are written even at the same size (upstream's scaleReplicaSet). Whether the
        size changed."""
        replicas = max(replicas, 0)
        current = int((rs.get("spec") or {}).get("replicas", 0))
        wanted = int((d.get("spec") or {}).get("replicas", 1))
        annotations = {DESIRED: str(wanted), MAX_REPLICAS: str(wanted + surge_and_unavailable(d)[0])}
        stale = any((meta(rs).get("annotations") or {}).get(k) != v for k, v in annotations.items())
        if replicas == current and not (annotate and stale):
            return False
        body: dict[str, Any] = {"metadata": {"resourceVersion": meta(rs)["resourceVersion"]},
                                "spec": {"replicas": replicas}}
        if stale:
            body["metadata"]["annotations"] = annotations
        try:
            await self.client.patch(REPLICASETS, meta(rs)["name"], body, meta(rs)["namespace"])
        except NotFound:
            return False
        if replicas != current:
            word = "up" if replicas > current else "down"
            self.events.event(d, "Normal", "ScalingReplicaSet",
                              f"Scaled {word} replica set {meta(rs)['name']} from {current} to {replicas}")
        return replicas != current

    async def _recreate(self, d: dict[str, Any], new: dict[str, Any], old: list[dict[str, Any]]) -> None:
        for rs in old:
            await self._scale(d, rs, 0)
        if all(not (rs.get("status") or {}).get("replicas") for rs in old):
            await self._scale(d, new, int((d.get("spec") or {}).get("replicas", 1)))

    async def _roll(self, d: dict[str, Any], new: dict[str, Any], old: list[dict[str, Any]]) -> bool:
        """One step of a rolling update, as rolloutRolling takes it: grow the new ReplicaSet if it may, else shrink
        old ones if they may. Whether anything was scaled."""
        if await self._scale(d, new, new_replicaset_size(d, [new, *old], new)):
            return True
        scaled = False
        for rs, replicas in old_replicaset_sizes(d, new, old):
            scaled = await self._scale(d, rs, replicas) or scaled
        return scaled

    async def _clean_history(self, d: dict[str, Any], old: list[dict[str, Any]]) -> None:
        limit = int((d.get("spec") or {}).get("revisionHistoryLimit", 10))
        idle = sorted((rs for rs in old if not (rs.get("spec") or {}).get("replicas")
                       and not (rs.get("status") or {}).get("replicas")), key=revision)
        for rs in idle[:max(len(idle) - limit, 0)]:
            with contextlib.suppress(NotFound):
                await self.client.delete(REPLICASETS, meta(rs)["name"], meta(rs)["namespace"])

    def _last_progress(self, d: dict[str, Any], condition: dict[str, Any]) -> float | None:
        """When the Progressing condition was last renewed (epoch seconds): the exact moment this controller wrote
        it, else its lastUpdateTime (to the second, as upstream reads it)."""
        uid, stamp, exact = self.progress_written.get(object_key(d), ("", "", 0.0))
        if uid == meta(d)["uid"] and stamp == condition.get("lastUpdateTime"):
            return exact
        since = parse_time(condition.get("lastUpdateTime"))
        return since.timestamp() if since else None

    def _progressing(self, d: dict[str, Any], status: dict[str, Any], new: dict[str, Any],
                     current: dict[str, Any] | None) -> tuple[dict[str, Any], float | None, bool]:
        """The Progressing condition as upstream's syncRolloutStatus sets it, and when to look again: complete
        once every replica is updated and available; progressing (lastUpdateTime renewed) while updated, ready or
        available replicas grow or old ones go; ProgressDeadlineExceeded once nothing has moved for
        progressDeadlineSeconds since the last progress. The third value: whether progress was seen now."""
        spec = d.get("spec") or {}
        replicas = int(spec.get("replicas", 1))
        name = meta(new)["name"]
        deadline = spec.get("progressDeadlineSeconds", 600)
        if deadline is None or int(deadline) == 2**31 - 1:  # no deadline: progress is not estimated
            return current or _condition("Progressing", "True", "ReplicaSetUpdated",
                                         f'ReplicaSet "{name}" is progressing.', None), None, False
        if current and current.get("reason") == "NewReplicaSetAvailable" and \
                status["replicas"] == status["updatedReplicas"]:
            return current, None, False  # a finished rollout: nothing to estimate
        before = d.get("status") or {}
        was = lambda key: int(before.get(key) or 0)  # noqa: E731
        if status["updatedReplicas"] == status["replicas"] == status["availableReplicas"] == replicas:
            return _condition("Progressing", "True", "NewReplicaSetAvailable",
                              f'ReplicaSet "{name}" has successfully progressed.', current), None, False
        resumed = current is not None and current.get("reason") == "DeploymentResumed"
        progressed = (not resumed and f'"{name}"' not in (current or {}).get("message", "")  # a new rollout
                      or status["updatedReplicas"] > was("updatedReplicas")
                      or status["replicas"] - status["updatedReplicas"] < was("replicas") - was("updatedReplicas")
                      or status["readyReplicas"] > was("readyReplicas")
                      or status["availableReplicas"] > was("availableReplicas"))
        if progressed or current is None or (current.get("status") != "True" and not resumed
                                             and current.get("reason") != "ProgressDeadlineExceeded"):
            stamp = now_rfc3339()
            transition = current.get("lastTransitionTime") if current and current.get("status") == "True" else stamp
            return {"type": "Progressing", "status": "True", "lastUpdateTime": stamp,
                    "lastTransitionTime": transition, "reason": "ReplicaSetUpdated",
                    "message": f'ReplicaSet "{name}" is progressing.'}, float(deadline), True
        if current.get("reason") == "ProgressDeadlineExceeded":
            return current, None, False
        since = self._last_progress(d, current)
        left = float(deadline) - (time.time() - since if since is not None else 0.0)
        if left < 0:
            return _condition("Progressing", "False", "ProgressDeadlineExceeded",
                              f'ReplicaSet "{name}" has timed out progressing.', current), None, False
        return current, left + 0.5, False

    async def _status(self, d: dict[str, Any], owned: list[dict[str, Any]], new: dict[str, Any] | None,
                      paused: bool = False) -> Result | None:
        spec = d.get("spec") or {}
        replicas = int(spec.get("replicas", 1))
        _, unavailable = surge_and_unavailable(d)
        count = lambda field, rss: sum(int((rs.get("status") or {}).get(field) or 0) for rs in rss)  # noqa: E731
        status: dict[str, Any] = {
            "observedGeneration": meta(d).get("generation", 1),
            "replicas": count("replicas", owned),
            "updatedReplicas": count("replicas", [new] if new else []),
            "readyReplicas": count("readyReplicas", owned),
            "availableReplicas": count("availableReplicas", owned),
        }
        status["unavailableReplicas"] = max(replicas - status["availableReplicas"], 0)
        old_conditions = {c.get("type"): c for c in (d.get("status") or {}).get("conditions") or ()}
        available = status["availableReplicas"] >= replicas - unavailable
        conditions = [_condition("Available", "True" if available else "False",
                                 "MinimumReplicasAvailable" if available else "MinimumReplicasUnavailable",
                                 "Deployment has minimum availability." if available else
                                 "Deployment does not have minimum availability.", old_conditions.get("Available"))]
        progressing = old_conditions.get("Progressing")
        requeue: float | None = None
        renewed = False
        if paused:  # checkPausedConditions: a reported lack of progress is not overwritten
            if progressing is not None and progressing.get("reason") == "ProgressDeadlineExceeded":
                conditions.append(progressing)
            else:
                conditions.append(_condition("Progressing", "Unknown", "DeploymentPaused", "Deployment is paused",
                                             progressing))
        elif new is not None:
            resumed = progressing is not None and progressing.get("reason") == "DeploymentPaused"
            if resumed:
                progressing = _condition("Progressing", "Unknown", "DeploymentResumed", "Deployment is resumed",
                                         progressing)  # progress is then estimated from the resumption
            condition, requeue, renewed = self._progressing(d, status, new, progressing)
            renewed = renewed or (resumed and condition is progressing)
            conditions.append(condition)
        status["conditions"] = conditions
        current = d.get("status") or {}
        comparable = {k: v for k, v in status.items() if k != "conditions"}
        annotations = dict(meta(d).get("annotations") or {})
        new_revision = revision(new) if new is not None else 0
        revised = bool(new_revision) and annotations.get(REVISION) != str(new_revision)
        if revised:  # the Deployment carries its new ReplicaSet's revision (SetDeploymentRevision)
            annotations[REVISION] = str(new_revision)
        if revised or any(current.get(k) != v for k, v in comparable.items()) or [
                (c["type"], c["status"], c["reason"], c["message"]) for c in conditions] != [
                (c.get("type"), c.get("status"), c.get("reason"), c.get("message"))
                for c in current.get("conditions") or ()]:
            body = {k: v for k, v in status.items() if v or k in ("observedGeneration", "replicas", "conditions")}
            body["collisionCount"] = current.get("collisionCount")
            body = {k: v for k, v in body.items() if v is not None}
            written = {**d, "metadata": {**meta(d), "annotations": annotations}, "status": body}
            with contextlib.suppress(NotFound, Conflict):
                await self.client.replace_status(DEPLOYMENTS, written, meta(d)["namespace"])
                if renewed:  # the exact moment of this progress, which lastUpdateTime keeps to the second
                    self.progress_written[object_key(d)] = (meta(d)["uid"], conditions[-1]["lastUpdateTime"],
                                                            time.time())
        return Result(requeue_after=requeue) if requeue else None
