"""The StatefulSet controller, as kube-controller-manager's.

- Pods have stable names `<set>-<ordinal>` (from `spec.ordinals.start`), labels
  `statefulset.kubernetes.io/pod-name`, `apps.kubernetes.io/pod-index` and `controller-revision-hash`, hostname
  and subdomain (the governing Service), and a volume per `volumeClaimTemplates` entry bound to the claim
  `<claim>-<set>-<ordinal>`, created before the Pod (owned per `persistentVolumeClaimRetentionPolicy`).
- OrderedReady: one Pod at a time, each Running and Ready (and available) before the next; scale down from
  the highest ordinal, one at a time. Parallel: all at once.
- Revisions are ControllerRevisions (`<set>-<hash>`); RollingUpdate replaces Pods from the highest ordinal
  down to `partition`, one at a time, each healthy before the next; OnDelete waits for Pods to be deleted.
- Status: replicas, readyReplicas, currentReplicas, updatedReplicas, availableReplicas, currentRevision,
  updateRevision, collisionCount, observedGeneration (so `kubectl rollout status|history|undo sts` work).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import re
from typing import Any

from mini_kube.client import AlreadyExists, Conflict, NotFound, ResourceRef
from mini_kube.machinery.meta import controller_ref, meta
from mini_kube.machinery.refs import CONTROLLERREVISIONS, PERSISTENTVOLUMECLAIMS, PODS, STATEFULSETS

from ..reconciler import Controller, Result
from . import history
from .claims import claim
from .common import controller_of, is_available, is_ready, selector_matches

POD_NAME = "statefulset.kubernetes.io/pod-name"
POD_INDEX = "apps.kubernetes.io/pod-index"
ORDINAL = re.compile(r"^(.*)-([0-9]+)$")
BURST = 100  # Parallel: Pods created or deleted at once per sync (the next sync goes on)


def parent_and_ordinal(name: str) -> tuple[str, int]:
    match = ORDINAL.match(name)
    if not match or len(match.group(2)) > 10:
        return "", -1
    return match.group(1), int(match.group(2))


def phase(pod: dict[str, Any]) -> str:
    return (pod.get("status") or {}).get("phase") or ""


def terminating(pod: dict[str, Any]) -> bool:
    return bool(meta(pod).get("deletionTimestamp"))


def running_and_ready(pod: dict[str, Any]) -> bool:
    return phase(pod) == "Running" and is_ready(pod)


def running_and_available(pod: dict[str, Any], min_ready: float) -> bool:
    return phase(pod) == "Running" and is_available(pod, min_ready)


def healthy(pod: dict[str, Any] | None) -> bool:
    return pod is not None and running_and_ready(pod) and not terminating(pod)


def pod_revision(pod: dict[str, Any] | None) -> str:
    return ((meta(pod).get("labels") or {}).get(history.REVISION_HASH, "")) if pod else ""


def claim_name(template: dict[str, Any], set_name: str, ordinal: int) -> str:
    return f"{meta(template).get('name', '')}-{set_name}-{ordinal}"


def _retention(sts: dict[str, Any]) -> tuple[str, str]:
    policy = (sts.get("spec") or {}).get("persistentVolumeClaimRetentionPolicy") or {}
    return policy.get("whenDeleted") or "Retain", policy.get("whenScaled") or "Retain"


class StatefulSetController(Controller):
    name = "statefulset"
    workers = 4

    def setup(self) -> None:
        self.sets = self.watch(STATEFULSETS)
        self.pods = self.watch(PODS, enqueue=False)
        self.pods.add_handler(self._pod_changed)
        self.revisions = self.watch(CONTROLLERREVISIONS, enqueue=self.enqueue_owner("StatefulSet"))
        self.claims = self.watch(PERSISTENTVOLUMECLAIMS, enqueue=False)

    def _pod_changed(self, event: str, old: dict[str, Any] | None, new: dict[str, Any] | None) -> None:
        for pod in (new, old) if event == "update" else (new or old,):
            if not pod:
                continue
            owner = controller_of(pod)
            namespace = meta(pod).get("namespace")
            if owner is not None:
                if owner.get("kind") == "StatefulSet":
                    self.queue.add(f"{namespace}/{owner['name']}")
                continue
            parent, _ = parent_and_ordinal(meta(pod).get("name", ""))
            sts = self.sets.get(f"{namespace}/{parent}")
            if sts is not None and selector_matches((sts.get("spec") or {}).get("selector"),
                                                    meta(pod).get("labels")):
                self.queue.add(f"{namespace}/{parent}")

    # -- claiming ------------------------------------------------------------------------------------
    async def _claim_pods(self, sts: dict[str, Any]) -> list[dict[str, Any]]:
        """Owned Pods that still match (others are released) and matching orphans named like members."""
        name = meta(sts)["name"]
        selector = (sts.get("spec") or {}).get("selector")
        return await claim(self.client, PODS, sts, self.pods.list(meta(sts)["namespace"]),
                           selects=lambda pod: selector_matches(selector, meta(pod).get("labels"))
                           and parent_and_ordinal(meta(pod)["name"])[0] == name)

    async def _patch_meta(self, ref: ResourceRef, obj: dict[str, Any], changes: dict[str, Any]) -> Any:
        with contextlib.suppress(NotFound, Conflict):
            return await self.client.patch(ref, meta(obj)["name"], {"metadata": {
                **changes, "resourceVersion": meta(obj)["resourceVersion"]}}, meta(obj)["namespace"])
        return None

    # -- revisions -----------------------------------------------------------------------------------
    async def _revisions(self, sts: dict[str, Any], revisions: list[dict[str, Any]]
                         ) -> tuple[dict[str, Any], dict[str, Any], int]:
        """(current revision, update revision, collision count): getStatefulSetRevisions."""
        status = sts.get("status") or {}
        collisions = int(status.get("collisionCount") or 0)
        data = history.template_patch(sts)
        number = max((history.revision_number(r) for r in revisions), default=0) + 1
        equal = [r for r in revisions if history.same_data(r, data)]
        if equal and revisions[-1] is equal[-1]:
            update = revisions[-1]
        elif equal:
            update = await history.set_revision_number(self.client, equal[-1], number)
        else:
            update, collisions = await self._create_revision(sts, data, number, collisions)
        current = next((r for r in revisions if meta(r)["name"] == status.get("currentRevision")), update)
        return current, update, collisions

    async def _create_revision(self, sts: dict[str, Any], data: dict[str, Any], number: int,
                               collisions: int) -> tuple[dict[str, Any], int]:
        namespace = meta(sts)["namespace"]
        labels = dict(((((sts.get("spec") or {}).get("template") or {}).get("metadata") or {})
                       .get("labels")) or {})
        while True:
            digest = history.revision_hash(data, collisions)
            name = history.revision_name(meta(sts)["name"], digest)
            body = history.new_revision(sts, name, {**labels, history.HASH_LABEL: digest}, data, number)
            try:
                return await self.client.create(CONTROLLERREVISIONS, body, namespace), collisions
            except AlreadyExists:
                existing = await self.client.get(CONTROLLERREVISIONS, name, namespace)
                if history.same_data(existing, data):
                    return existing, collisions
                collisions += 1

    # -- Pods and claims -----------------------------------------------------------------------------
    def _new_pod(self, sts: dict[str, Any], template: dict[str, Any], ordinal: int, revision: str
                 ) -> dict[str, Any]:
        name = f"{meta(sts)['name']}-{ordinal}"
        tmeta = template.get("metadata") or {}
        spec = copy.deepcopy(template.get("spec") or {})
        spec["hostname"] = name
        if (sts.get("spec") or {}).get("serviceName"):
            spec["subdomain"] = sts["spec"]["serviceName"]
        claims = (sts.get("spec") or {}).get("volumeClaimTemplates") or []
        if claims:
            names = {meta(c).get("name") for c in claims}
            spec["volumes"] = [{"name": meta(c)["name"], "persistentVolumeClaim": {
                "claimName": claim_name(c, meta(sts)["name"], ordinal)}} for c in claims] + [
                v for v in spec.get("volumes") or () if v.get("name") not in names]
        labels = {**(tmeta.get("labels") or {}), POD_NAME: name, POD_INDEX: str(ordinal),
                  history.REVISION_HASH: revision}
        return {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "labels": labels, "annotations": dict(tmeta.get("annotations") or {})
                             or None, "ownerReferences": [controller_ref(sts)]},
                "spec": spec}

    def _claim_refs(self, sts: dict[str, Any], claim: dict[str, Any], pod: dict[str, Any] | None,
                    scaled_down: bool) -> list[dict[str, Any]]:
        """The claim's owner references as the retention policy wants them (updateClaimOwnerRefForSetAndPod)."""
        when_deleted, when_scaled = _retention(sts)
        set_uid, pod_uid = meta(sts)["uid"], meta(pod).get("uid") if pod else None
        refs = [r for r in meta(claim).get("ownerReferences") or () if r.get("uid") not in (set_uid, pod_uid)]
        if when_scaled == "Delete" and scaled_down and pod is not None and pod_uid:
            refs.append({"apiVersion": "v1", "kind": "Pod", "name": meta(pod)["name"], "uid": pod_uid})
        elif when_deleted == "Delete":
            refs.append({"apiVersion": "apps/v1", "kind": "StatefulSet", "name": meta(sts)["name"], "uid": set_uid})
        return refs

    async def _create_claims(self, sts: dict[str, Any], pod_name: str, ordinal: int) -> bool:
        """Create the Pod's missing claims; False when one cannot be used yet (being deleted, or failed)."""
        namespace = meta(sts)["namespace"]
        ok = True
        for template in (sts.get("spec") or {}).get("volumeClaimTemplates") or ():
            name = claim_name(template, meta(sts)["name"], ordinal)
            existing = self.claims.get(f"{namespace}/{name}")
            if existing is not None:
                ok = ok and not terminating(existing)
                continue
            selector_labels = ((sts.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
            body = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {
                "name": name, "labels": {**(meta(template).get("labels") or {}), **selector_labels} or None,
                "annotations": meta(template).get("annotations"),
                "ownerReferences": self._claim_refs(sts, {}, None, False) or None},
                "spec": copy.deepcopy(template.get("spec") or {})}
            try:
                await self.client.create(PERSISTENTVOLUMECLAIMS, body, namespace)
                self.events.event(sts, "Normal", "SuccessfulCreate",
                                  f"create Claim {name} Pod {pod_name} in StatefulSet {meta(sts)['name']} success")
            except AlreadyExists:
                pass
            except Exception as exc:  # noqa: BLE001  (reported as upstream reports it, then retried)
                self.events.event(sts, "Warning", "FailedCreate", f"create Claim {name} for Pod {pod_name} in "
                                  f"StatefulSet {meta(sts)['name']} failed error: {exc}")
                ok = False
        return ok

    async def _fix_claim_owners(self, sts: dict[str, Any], pod: dict[str, Any], scaled_down: bool) -> None:
        _, ordinal = parent_and_ordinal(meta(pod)["name"])
        for template in (sts.get("spec") or {}).get("volumeClaimTemplates") or ():
            claim = self.claims.get(f"{meta(sts)['namespace']}/{claim_name(template, meta(sts)['name'], ordinal)}")
            if claim is None or terminating(claim):
                continue
            refs = self._claim_refs(sts, claim, pod, scaled_down)
            if refs != list(meta(claim).get("ownerReferences") or ()):
                await self._patch_meta(PERSISTENTVOLUMECLAIMS, claim, {"ownerReferences": refs or None})

    async def _fix_identity(self, sts: dict[str, Any], pod: dict[str, Any], ordinal: int) -> None:
        """Restore the identity labels of a member that lost them (identityMatches / UpdateStatefulPod)."""
        labels = meta(pod).get("labels") or {}
        wanted = {POD_NAME: meta(pod)["name"], POD_INDEX: str(ordinal)}
        if all(labels.get(k) == v for k, v in wanted.items()):
            return
        if await self._patch_meta(PODS, pod, {"labels": wanted}) is not None:
            self.events.event(sts, "Normal", "SuccessfulUpdate",
                              f"update Pod {meta(pod)['name']} in StatefulSet {meta(sts)['name']} successful")

    async def _create_pod(self, sts: dict[str, Any], pod: dict[str, Any]) -> bool:
        """Claims, then the Pod; True when it was created."""
        name, set_name = meta(pod)["name"], meta(sts)["name"]
        if not await self._create_claims(sts, name, parent_and_ordinal(name)[1]):
            return False
        try:
            await self.client.create(PODS, pod, meta(sts)["namespace"])
        except AlreadyExists:
            return False  # our cache is behind: the Pod's own event brings us back
        except Exception as exc:  # noqa: BLE001
            self.events.event(sts, "Warning", "FailedCreate",
                              f"create Pod {name} in StatefulSet {set_name} failed error: {exc}")
            raise
        self.events.event(sts, "Normal", "SuccessfulCreate", f"create Pod {name} in StatefulSet {set_name} successful")
        return True

    async def _delete_pod(self, sts: dict[str, Any], pod: dict[str, Any]) -> None:
        name = meta(pod)["name"]
        try:  # the UID precondition: never delete a successor our cache has not seen yet
            await self.client.delete(PODS, name, meta(pod)["namespace"],
                                     body={"preconditions": {"uid": meta(pod)["uid"]}})
        except (NotFound, Conflict):
            return
        self.events.event(sts, "Normal", "SuccessfulDelete",
                          f"delete Pod {name} in StatefulSet {meta(sts)['name']} successful")

    # -- the sync ------------------------------------------------------------------------------------
    async def reconcile(self, key: Any) -> Result | None:
        sts = self.sets.get(key)
        if sts is None:
            return None
        pods = await self._claim_pods(sts)
        owned = await history.claim_revisions(self.client, sts, self.revisions.list(meta(sts)["namespace"]))
        revisions = history.sort_revisions(owned)
        current, update, collisions = await self._revisions(sts, revisions)
        status = await self._update(sts, pods, current, update)
        status.update(observedGeneration=meta(sts).get("generation", 1), currentRevision=meta(current)["name"],
                      updateRevision=meta(update)["name"], collisionCount=collisions)
        spec = sts.get("spec") or {}
        if ((spec.get("updateStrategy") or {}).get("type") or "RollingUpdate") == "RollingUpdate" and \
                status["updatedReplicas"] == status["replicas"] and status["readyReplicas"] == status["replicas"]:
            status["currentReplicas"] = status["updatedReplicas"]
            status["currentRevision"] = status["updateRevision"]
        await self._write_status(sts, status)
        await self._truncate_history(sts, pods, revisions, current, update)
        min_ready = float(spec.get("minReadySeconds") or 0)
        if min_ready > 0 and status["readyReplicas"] != status["availableReplicas"]:
            return Result(requeue_after=min_ready)
        return None

    @staticmethod
    def _count(pods: list[dict[str, Any]], min_ready: float, current: str, update: str) -> dict[str, Any]:
        """computeReplicaStatus over the created Pods."""
        created = [p for p in pods if phase(p)]
        live = [p for p in created if not terminating(p)]
        return {"replicas": len(created),
                "readyReplicas": sum(running_and_ready(p) for p in pods),
                "availableReplicas": sum(running_and_ready(p) and running_and_available(p, min_ready) for p in pods),
                "currentReplicas": sum(pod_revision(p) == current for p in live),
                "updatedReplicas": sum(pod_revision(p) == update for p in live)}

    async def _update(self, sts: dict[str, Any], pods: list[dict[str, Any]], current: dict[str, Any],
                      update: dict[str, Any]) -> dict[str, Any]:
        """Create, delete and replace Pods one step further (updateStatefulSet); returns the replica status."""
        spec = sts.get("spec") or {}
        size = int(spec.get("replicas", 1))
        start = int((spec.get("ordinals") or {}).get("start") or 0)
        min_ready = float(spec.get("minReadySeconds") or 0)
        cur_name, upd_name = meta(current)["name"], meta(update)["name"]
        slots: list[dict[str, Any] | None] = [None] * size
        condemned = []
        pod: dict[str, Any] | None
        for pod in pods:
            _, ordinal = parent_and_ordinal(meta(pod)["name"])
            if start <= ordinal < start + size:
                slots[ordinal - start] = pod
            elif ordinal >= 0:
                condemned.append(pod)
        condemned.sort(key=lambda p: parent_and_ordinal(meta(p)["name"])[1], reverse=True)

        def status() -> dict[str, Any]:
            return self._count([p for p in slots if p is not None] + condemned, min_ready, cur_name, upd_name)

        if terminating(sts):
            return status()
        monotonic = spec.get("podManagementPolicy") != "Parallel"
        strategy = spec.get("updateStrategy") or {}
        rolling = (strategy.get("type") or "RollingUpdate") == "RollingUpdate"
        partition = int((strategy.get("rollingUpdate") or {}).get("partition") or 0) if rolling else 0
        current_template, update_template = history.template_of(current), history.template_of(update)

        def versioned(ordinal: int) -> dict[str, Any]:
            use_current = rolling and ordinal < partition
            return self._new_pod(sts, current_template if use_current else update_template, ordinal,
                                 cur_name if use_current else upd_name)

        unhealthy = [p for p in slots if not healthy(p)] + [p for p in reversed(condemned) if not healthy(p)]
        first_unhealthy = unhealthy[0] if unhealthy else None
        to_create: list[dict[str, Any]] = []
        for i, pod in enumerate(slots):
            ordinal = start + i
            if pod is not None and phase(pod) in ("Failed", "Succeeded"):
                reason, word = ("RecreatingFailedPod", "failed") if phase(pod) == "Failed" else (
                    "RecreatingTerminatedPod", "terminated")
                self.events.event(sts, "Warning" if word == "failed" else "Normal", reason,
                                  f"StatefulSet {meta(sts)['namespace']}/{meta(sts)['name']} is recreating "
                                  f"{word} Pod {meta(pod)['name']}")
                await self._delete_pod(sts, pod)
                slots[i] = pod = None
            if pod is None:
                if monotonic:
                    await self._create_pod(sts, versioned(ordinal))
                    return status()
                to_create.append(versioned(ordinal))
                continue
            if phase(pod) == "Pending":
                await self._create_claims(sts, meta(pod)["name"], ordinal)
            if monotonic and (terminating(pod) or not running_and_ready(pod)
                              or not running_and_available(pod, min_ready)):
                return status()
            if spec.get("volumeClaimTemplates"):
                await self._fix_claim_owners(sts, pod, False)
            await self._fix_identity(sts, pod, ordinal)
        if to_create:
            await asyncio.gather(*(self._create_pod(sts, p) for p in to_create[:BURST]))
        for pod in condemned:
            if spec.get("volumeClaimTemplates"):
                await self._fix_claim_owners(sts, pod, True)
        deletions = []
        for pod in condemned:
            if terminating(pod):
                if monotonic:
                    return status()
                continue
            if monotonic and pod is not first_unhealthy and (
                    not running_and_ready(pod) or not running_and_available(pod, min_ready)):
                return status()
            if monotonic:
                await self._delete_pod(sts, pod)
                return status()
            deletions.append(pod)
        if deletions:
            await asyncio.gather(*(self._delete_pod(sts, p) for p in deletions[:BURST]))
            return status()
        result = status()
        if not rolling:
            return result  # OnDelete: Pods are replaced when someone deletes them
        for target in range(size - 1, partition - 1, -1):
            pod = slots[target]
            if pod is not None and pod_revision(pod) != upd_name and not terminating(pod):
                await self._delete_pod(sts, pod)
                result["currentReplicas"] -= 1
                return result
            if not healthy(pod):
                return result
        return result

    async def _write_status(self, sts: dict[str, Any], status: dict[str, Any]) -> None:
        current = sts.get("status") or {}
        compared = ("observedGeneration", "replicas", "currentReplicas", "readyReplicas", "updatedReplicas",
                    "currentRevision", "availableReplicas", "updateRevision")
        if all((current.get(k) or 0) == (status.get(k) or 0) for k in compared) and \
                current.get("collisionCount") is not None:
            return
        order = ("observedGeneration", "replicas", "readyReplicas", "currentReplicas", "updatedReplicas",
                 "currentRevision", "updateRevision", "collisionCount", "conditions", "availableReplicas")
        status = {**status, "conditions": current.get("conditions")}
        body = {k: status[k] for k in order if status.get(k) or (
            k in ("replicas", "availableReplicas", "collisionCount") and status.get(k) is not None)}
        with contextlib.suppress(NotFound, Conflict):
            await self.client.replace_status(STATEFULSETS, {**sts, "status": body}, meta(sts)["namespace"])

    async def _truncate_history(self, sts: dict[str, Any], pods: list[dict[str, Any]],
                                revisions: list[dict[str, Any]], current: dict[str, Any],
                                update: dict[str, Any]) -> None:
        live = {meta(current)["name"], meta(update)["name"], *(pod_revision(p) for p in pods)}
        old = [r for r in revisions if meta(r)["name"] not in live]
        limit = int((sts.get("spec") or {}).get("revisionHistoryLimit", 10))
        for revision in old[:max(len(old) - limit, 0)]:
            await history.delete_revision(self.client, revision)
