"""The DaemonSet controller, as kube-controller-manager's.

- One Pod per eligible node: the node name (if the template sets one), nodeSelector, required node affinity
  and the node's taints against the Pod's tolerations, to which the controller adds the standard daemon
  tolerations (not-ready and unreachable NoExecute; disk-, memory-, pid-pressure and unschedulable
  NoSchedule; network-unavailable for host-network Pods). Each Pod gets a required node affinity on
  `metadata.name` (matchFields) naming its node, so the scheduler places it there.
- Pods on nodes that no longer fit are deleted (NoExecute-tolerating ones may stay, as upstream); so are Pods
  for nodes that are gone (upstream leaves bound ones to the pod garbage collector; none runs here), failed
  Pods (with a per-node back-off) and duplicates.
- Revisions are ControllerRevisions (`<ds>-<hash>`, label `controller-revision-hash`); Pods carry that hash
  and `pod-template-generation`. RollingUpdate within maxUnavailable, or maxSurge (a new Pod next to the old
  one until it is available); OnDelete replaces Pods only when someone deletes them.
- Status: desiredNumberScheduled, currentNumberScheduled, numberReady, numberAvailable, numberUnavailable,
  numberMisscheduled, updatedNumberScheduled, observedGeneration (so `kubectl rollout status ds` works).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import math
import time
from typing import Any

from mini_kube.client import AlreadyExists, ApiClient, Conflict, NotFound
from mini_kube.client.informer import SharedInformerFactory
from mini_kube.machinery.meta import controller_ref, meta
from mini_kube.machinery.refs import CONTROLLERREVISIONS, DAEMONSETS, NODES, PODS

from ..reconciler import Controller, Result
from . import history
from .claims import claim
from .common import Expectations, controller_of, is_available, is_ready, selector_matches, template_hash
from .nodes import should_run

GENERATION_ANNOTATION = "deprecated.daemonset.template.generation"
GENERATION_LABEL = "pod-template-generation"
BURST = 250
BACKOFF_START, BACKOFF_MAX = 1.0, 900.0
DAEMON_TOLERATIONS = [("node.kubernetes.io/not-ready", "NoExecute"), ("node.kubernetes.io/unreachable", "NoExecute"),
                      ("node.kubernetes.io/disk-pressure", "NoSchedule"),
                      ("node.kubernetes.io/memory-pressure", "NoSchedule"),
                      ("node.kubernetes.io/pid-pressure", "NoSchedule"),
                      ("node.kubernetes.io/unschedulable", "NoSchedule")]


def with_daemon_tolerations(spec: dict[str, Any]) -> dict[str, Any]:
    """AddOrUpdateDaemonPodTolerations: a copy of the Pod spec with the standard daemon tolerations."""
    spec = copy.deepcopy(spec)
    tolerations = list(spec.get("tolerations") or ())
    wanted = DAEMON_TOLERATIONS + ([("node.kubernetes.io/network-unavailable", "NoSchedule")]
                                   if spec.get("hostNetwork") else [])
    for key, effect in wanted:
        toleration = {"key": key, "operator": "Exists", "effect": effect}
        same = [i for i, t in enumerate(tolerations) if t.get("key") == key and t.get("effect") == effect
                and (t.get("operator") or "Equal") == "Exists" and not t.get("value")]
        if same:
            for i in same:
                tolerations[i] = toleration
        else:
            tolerations.append(toleration)
    spec["tolerations"] = tolerations
    return spec


def pin_to_node(spec: dict[str, Any], node: str) -> None:
    """ReplaceDaemonSetPodNodeNameNodeAffinity: the required node affinity becomes `metadata.name In [node]`."""
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
    affinity = spec.setdefault("affinity", {}) or {}
    spec["affinity"] = affinity
    node_affinity = affinity.setdefault("nodeAffinity", {}) or {}
    affinity["nodeAffinity"] = node_affinity
    node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": [term]}


def target_node(pod: dict[str, Any]) -> str | None:
    """GetTargetNodeName: the bound node, else the one its `metadata.name` affinity names."""
    spec = pod.get("spec") or {}
    if spec.get("nodeName"):
        return spec["nodeName"]
    required = (((spec.get("affinity") or {}).get("nodeAffinity") or {})
                .get("requiredDuringSchedulingIgnoredDuringExecution") or {})
    for term in required.get("nodeSelectorTerms") or ():
        for field in term.get("matchFields") or ():
            if field.get("key") == "metadata.name" and field.get("operator") == "In" and \
                    len(field.get("values") or ()) == 1:
                return field["values"][0]
    return None


def by_age(pod: dict[str, Any]) -> tuple[Any, ...]:
    """podByCreationTimestampAndPhase: bound Pods first, then the oldest."""
    return (not (pod.get("spec") or {}).get("nodeName"), meta(pod).get("creationTimestamp") or "", meta(pod)["name"])


def resolve(value: Any, total: int) -> int:
    """An int-or-percent of `total`, rounded up (as the DaemonSet controller rounds both)."""
    if isinstance(value, str) and value.endswith("%"):
        return math.ceil(int(value[:-1]) * total / 100)
    return int(value or 0)


def generation(ds: dict[str, Any]) -> str | None:
    value = (meta(ds).get("annotations") or {}).get(GENERATION_ANNOTATION)
    return value if value and value.isdigit() else None


def is_updated(pod: dict[str, Any], digest: str, gen: str | None) -> bool:
    labels = meta(pod).get("labels") or {}
    return bool(digest and labels.get(history.REVISION_HASH) == digest) or (
        gen is not None and labels.get(GENERATION_LABEL) == gen)


def _deleting(pod: dict[str, Any]) -> bool:
    return bool(meta(pod).get("deletionTimestamp"))


def _phase(pod: dict[str, Any]) -> str:
    return (pod.get("status") or {}).get("phase") or ""


class DaemonSetController(Controller):
    name = "daemonset"
    workers = 4

    def __init__(self, client: ApiClient, informers: SharedInformerFactory | None = None, **kwargs: Any) -> None:
        super().__init__(client, informers, **kwargs)
        self.expectations = Expectations()
        self.backoff: dict[tuple[str, str], tuple[float, float]] = {}  # (ds key, node) -> (delay, until)

    def setup(self) -> None:
        self.sets = self.watch(DAEMONSETS)
        self.pods = self.watch(PODS, enqueue=False)
        self.pods.add_handler(self._pod_changed)
        self.nodes = self.watch(NODES, enqueue=False)
        self.nodes.add_handler(self._node_changed)
        self.revisions = self.watch(CONTROLLERREVISIONS, enqueue=self.enqueue_owner("DaemonSet"))

    def _pod_changed(self, event: str, old: dict[str, Any] | None, new: dict[str, Any] | None) -> None:
        pod = new if event != "delete" else old
        if not pod:
            return
        owner = controller_of(pod)
        namespace = meta(pod).get("namespace")
        if owner is not None:
            if owner.get("kind") == "DaemonSet":
                key = f"{namespace}/{owner['name']}"
                if event == "add":
                    self.expectations.lower(key, adds=1)
                elif event == "delete":
                    self.expectations.lower(key, deletes=1)
                self.queue.add(key)
            return
        for ds in self.sets.list(namespace):
            if selector_matches((ds.get("spec") or {}).get("selector"), meta(pod).get("labels")):
                self.queue.add(f"{namespace}/{meta(ds)['name']}")

    def _node_changed(self, event: str, old: dict[str, Any] | None, new: dict[str, Any] | None) -> None:
        if event == "update" and old and new and meta(old).get("labels") == meta(new).get("labels") and \
                (old.get("spec") or {}) == (new.get("spec") or {}):
            return  # status only (heartbeats): no DaemonSet decides differently
        for ds in self.sets.list():
            self.queue.add(f"{meta(ds)['namespace']}/{meta(ds)['name']}")

    # -- claiming ------------------------------------------------------------------------------------
    async def _claim_pods(self, ds: dict[str, Any]) -> list[dict[str, Any]]:
        selector = (ds.get("spec") or {}).get("selector")
        return await claim(self.client, PODS, ds, self.pods.list(meta(ds)["namespace"]),
                           selects=lambda pod: selector_matches(selector, meta(pod).get("labels")),
                           adoptable=lambda pod: not _deleting(pod))

    # -- history -------------------------------------------------------------------------------------
    async def _history(self, ds: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
        """(current revision, old ones): constructHistory; None when a hash collision was just recorded."""
        revisions = await history.claim_revisions(self.client, ds, self.revisions.list(meta(ds)["namespace"]))
        data = history.template_patch(ds)
        current = [r for r in revisions if history.same_data(r, data)]
        old = [r for r in revisions if not history.same_data(r, data)]
        number = max((history.revision_number(r) for r in old), default=0) + 1
        if not current:
            cur = await self._snapshot(ds, data, number)
            if cur is None:
                return None
        else:
            current = history.sort_revisions(current)
            cur = current[-1]
            if current[:-1]:  # dedupCurHistories: keep the newest, point the Pods at it, then drop the others
                await self._relabel_pods(ds, (meta(cur).get("labels") or {}).get(history.REVISION_HASH))
            for duplicate in current[:-1]:
                await history.delete_revision(self.client, duplicate)
            if history.revision_number(cur) < number:
                cur = await history.set_revision_number(self.client, cur, number)
        if history.REVISION_HASH not in (meta(cur).get("labels") or {}):
            cur = await self.client.patch(CONTROLLERREVISIONS, meta(cur)["name"], {"metadata": {"labels": {
                history.REVISION_HASH: meta(cur)["name"]}}}, meta(cur)["namespace"])
        return cur, old

    async def _relabel_pods(self, ds: dict[str, Any], digest: str | None) -> None:
        """The DaemonSet's Pods carry `digest` as their revision hash (they are of that revision's template: a
        duplicate revision going away must not make them look out of date, which would restart them)."""
        if not digest:
            return
        uid = meta(ds)["uid"]
        for pod in self.pods.list(meta(ds)["namespace"]):
            if (controller_of(pod) or {}).get("uid") == uid and \
                    (meta(pod).get("labels") or {}).get(history.REVISION_HASH) != digest:
                with contextlib.suppress(NotFound):
                    await self.client.patch(PODS, meta(pod)["name"], {"metadata": {"labels": {
                        history.REVISION_HASH: digest}}}, meta(pod)["namespace"])

    async def _snapshot(self, ds: dict[str, Any], data: dict[str, Any], number: int) -> dict[str, Any] | None:
        template = (ds.get("spec") or {}).get("template") or {}
        collisions = int((ds.get("status") or {}).get("collisionCount") or 0)
        digest = template_hash(template, collisions)
        name = history.revision_name(meta(ds)["name"], digest)
        labels = {**((template.get("metadata") or {}).get("labels") or {}), history.REVISION_HASH: digest}
        body = history.new_revision(ds, name, labels, data, number)
        namespace = meta(ds)["namespace"]
        try:
            return await self.client.create(CONTROLLERREVISIONS, body, namespace)
        except AlreadyExists:
            existing = await self.client.get(CONTROLLERREVISIONS, name, namespace)
            if history.same_data(existing, data):
                return existing
            latest = await self.client.get(DAEMONSETS, meta(ds)["name"], namespace)
            status = latest.get("status") or {}
            if int(status.get("collisionCount") or 0) == collisions:
                status["collisionCount"] = collisions + 1
                with contextlib.suppress(NotFound, Conflict):
                    await self.client.replace_status(DAEMONSETS, {**latest, "status": status}, namespace)
            return None

    # -- the sync ------------------------------------------------------------------------------------
    async def reconcile(self, key: Any) -> Result | None:
        ds = self.sets.get(key)
        if ds is None:
            self.expectations.forget(key)
            return None
        if _deleting(ds):
            return None
        nodes = self.nodes.list()
        built = await self._history(ds)
        if built is None:
            return Result(requeue=True)
        cur, old = built
        digest = (meta(cur).get("labels") or {}).get(history.REVISION_HASH, "")
        pods = await self._claim_pods(ds)
        requeue: float | None = None
        observe = self.expectations.satisfied(key)
        if observe:
            requeue = await self._manage(key, ds, nodes, pods, digest)
            if self.expectations.satisfied(key) and ((ds.get("spec") or {}).get("updateStrategy") or {}).get(
                    "type", "RollingUpdate") == "RollingUpdate":
                await self._rolling_update(key, ds, nodes, self._by_node(pods), digest)
            await self._cleanup_history(ds, pods, old)
        wait = await self._write_status(ds, nodes, self._by_node(pods), digest, observe)
        delays = [d for d in (requeue, wait) if d]
        return Result(requeue_after=min(delays)) if delays else None

    @staticmethod
    def _by_node(pods: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
        result: dict[str, list[dict[str, Any]]] = {}
        for pod in pods:
            node = target_node(pod)
            if node:
                result.setdefault(node, []).append(pod)
        return result

    def _check_spec(self, ds: dict[str, Any]) -> dict[str, Any]:
        return with_daemon_tolerations(((ds.get("spec") or {}).get("template") or {}).get("spec") or {})

    async def _manage(self, key: str, ds: dict[str, Any], nodes: list[dict[str, Any]],
                      pods: list[dict[str, Any]], digest: str) -> float | None:
        """Create the missing daemon Pods and delete the ones that should not run (manage)."""
        by_node = self._by_node(pods)
        check = self._check_spec(ds)
        surge = self._allows_surge(ds)
        create: list[str] = []
        delete: list[dict[str, Any]] = []
        requeue: float | None = None
        names = set()
        for node in nodes:
            name = meta(node)["name"]
            names.add(name)
            run, keep = should_run(check, node)
            on_node = by_node.get(name, [])
            if run and not on_node:
                create.append(name)
            elif keep:
                running = []
                for pod in on_node:
                    if _deleting(pod):
                        continue
                    if _phase(pod) == "Failed":
                        wait = self._failed_backoff(key, name)
                        if wait > 0:
                            requeue = min(requeue or wait, wait)
                            continue
                        self.events.event(ds, "Warning", "FailedDaemonPod", f"Found failed daemon pod "
                                          f"{meta(pod)['namespace']}/{meta(pod)['name']} on node {name}, will try to kill it")
                        delete.append(pod)
                    elif _phase(pod) == "Succeeded":
                        delete.append(pod)
                    else:
                        running.append(pod)
                running.sort(key=by_age)
                if not surge:
                    delete += running[1:]
                    continue
                if not running:
                    if run:
                        create.append(name)
                    continue
                oldest_new = oldest_old = None  # with surge: at most one of each, the old one until the new is up
                for pod in running:
                    fresh = (meta(pod).get("labels") or {}).get(history.REVISION_HASH) == digest
                    if fresh and oldest_new is None:
                        oldest_new = pod
                    elif not fresh and oldest_old is None:
                        oldest_old = pod
                    else:
                        delete.append(pod)
                if oldest_new is not None and oldest_old is not None and (
                        not is_ready(oldest_old) or is_available(oldest_new, self._min_ready(ds))):
                    delete.append(oldest_old)
            elif on_node:
                delete += [p for p in on_node if not _deleting(p)]
        for node_name, on_node in by_node.items():  # nodes that are gone
            if node_name not in names:
                delete += [p for p in on_node if not _deleting(p)]
        await self._sync_nodes(key, ds, delete, create, digest)
        return requeue

    def _failed_backoff(self, key: str, node: str) -> float:
        """Seconds to wait before killing another failed Pod on this node (0: now; the back-off grows)."""
        now = time.monotonic()
        delay, until = self.backoff.get((key, node), (0.0, 0.0))
        if now < until:
            return until - now
        delay = min(max(delay * 2, BACKOFF_START), BACKOFF_MAX)
        self.backoff[(key, node)] = (delay, now + delay)
        return 0.0

    @staticmethod
    def _min_ready(ds: dict[str, Any]) -> float:
        return float((ds.get("spec") or {}).get("minReadySeconds") or 0)

    @staticmethod
    def _allows_surge(ds: dict[str, Any]) -> bool:
        strategy = (ds.get("spec") or {}).get("updateStrategy") or {}
        if (strategy.get("type") or "RollingUpdate") != "RollingUpdate":
            return False
        return resolve((strategy.get("rollingUpdate") or {}).get("maxSurge"), 1) > 0

    def _new_pod(self, ds: dict[str, Any], node: str, digest: str) -> dict[str, Any]:
        template = (ds.get("spec") or {}).get("template") or {}
        tmeta = template.get("metadata") or {}
        labels = dict(tmeta.get("labels") or {})
        gen = generation(ds)
        if gen is not None:
            labels[GENERATION_LABEL] = gen
        if digest:
            labels[history.REVISION_HASH] = digest
        spec = with_daemon_tolerations(template.get("spec") or {})
        pin_to_node(spec, node)
        return {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"generateName": f"{meta(ds)['name']}-", "labels": labels,
                             "annotations": dict(tmeta.get("annotations") or {}) or None,
                             "ownerReferences": [controller_ref(ds)]},
                "spec": spec}

    async def _sync_nodes(self, key: str, ds: dict[str, Any], delete: list[dict[str, Any]], create: list[str],
                          digest: str) -> None:
        create, delete = create[:BURST], delete[:BURST]
        if not create and not delete:
            return
        self.expectations.expect(key, adds=len(create), deletes=len(delete))
        namespace = meta(ds)["namespace"]

        async def make(node: str) -> None:
            try:
                pod = await self.client.create(PODS, self._new_pod(ds, node, digest), namespace)
            except Exception as exc:  # noqa: BLE001  (reported, then retried by the next sync)
                self.expectations.lower(key, adds=1)
                self.events.event(ds, "Warning", "FailedCreate", f"Error creating: {exc}")
                return
            self.events.event(ds, "Normal", "SuccessfulCreate", f"Created pod: {meta(pod)['name']}")

        async def remove(pod: dict[str, Any]) -> None:
            try:
                await self.client.delete(PODS, meta(pod)["name"], namespace,
                                         body={"preconditions": {"uid": meta(pod)["uid"]}})
            except (NotFound, Conflict):
                self.expectations.lower(key, deletes=1)
                return
            self.events.event(ds, "Normal", "SuccessfulDelete", f"Deleted pod: {meta(pod)['name']}")

        await asyncio.gather(*(make(n) for n in create), *(remove(p) for p in delete))

    def _budget(self, ds: dict[str, Any], desired: int) -> tuple[int, int]:
        rolling = ((ds.get("spec") or {}).get("updateStrategy") or {}).get("rollingUpdate") or {}
        surge = resolve(rolling.get("maxSurge"), desired)
        unavailable = resolve(rolling.get("maxUnavailable", 1), desired)
        if surge == 0 and unavailable == 0:
            unavailable = 1
        return surge, unavailable

    @staticmethod
    def _on_node(pods: list[dict[str, Any]], digest: str, gen: str | None
                 ) -> tuple[dict[str, Any] | None, dict[str, Any] | None, bool]:
        """findUpdatedPodsOnNode: (new Pod, old Pod, whether there is at most one of each)."""
        new = old = None
        for pod in pods:
            if _deleting(pod):
                continue
            if is_updated(pod, digest, gen):
                if new is not None:
                    return None, None, False
                new = pod
            else:
                if old is not None:
                    return None, None, False
                old = pod
        return new, old, True

    async def _rolling_update(self, key: str, ds: dict[str, Any], nodes: list[dict[str, Any]],
                              by_node: dict[str, list[dict[str, Any]]], digest: str) -> None:
        check = self._check_spec(ds)
        node_map = {meta(n)["name"]: n for n in nodes}
        desired = sum(should_run(check, n)[0] for n in nodes)
        surge, unavailable = self._budget(ds, desired)
        min_ready = self._min_ready(ds)
        gen = generation(ds)
        delete: list[dict[str, Any]] = []
        create: list[str] = []
        if surge == 0:
            down = 0
            replace: list[dict[str, Any]] = []
            candidates: list[dict[str, Any]] = []
            for pods in by_node.values():
                new, old, ok = self._on_node(pods, digest, gen)
                if not ok or (new is None) == (old is None):
                    down += 1
                elif new is not None:
                    down += not is_available(new, min_ready)
                elif old is not None:  # only an old Pod on the node
                    if not is_available(old, min_ready):
                        replace.append(old)
                    elif down < unavailable:
                        candidates.append(old)
            budget = min(max(unavailable - down, 0), len(candidates))
            delete = replace + candidates[:budget]
        else:
            surged = 0
            for name, pods in by_node.items():
                new, old, ok = self._on_node(pods, digest, gen)
                if not ok or old is None:
                    continue
                if new is None:
                    if not is_available(old, min_ready):
                        node = node_map.get(name)
                        if node is None or not should_run(check, node)[0]:
                            delete.append(old)
                        else:
                            create.append(name)
                    elif surged < surge:
                        surged += 1
                        create.append(name)
                elif not is_available(new, min_ready):
                    surged += 1
                else:
                    delete.append(old)
        await self._sync_nodes(key, ds, delete, create, digest)

    async def _cleanup_history(self, ds: dict[str, Any], pods: list[dict[str, Any]],
                               old: list[dict[str, Any]]) -> None:
        limit = int((ds.get("spec") or {}).get("revisionHistoryLimit", 10))
        excess = len(old) - limit
        if excess <= 0:
            return
        live = {(meta(p).get("labels") or {}).get(history.REVISION_HASH) for p in pods}
        for revision in history.sort_revisions(old):
            if excess <= 0:
                break
            if (meta(revision).get("labels") or {}).get(history.REVISION_HASH) in live:
                continue
            await history.delete_revision(self.client, revision)
            excess -= 1

    async def _write_status(self, ds: dict[str, Any], nodes: list[dict[str, Any]],
                            by_node: dict[str, list[dict[str, Any]]], digest: str, observe: bool) -> float | None:
        check = self._check_spec(ds)
        min_ready = self._min_ready(ds)
        gen = generation(ds)
        desired = current = misscheduled = ready = available = updated = 0
        for node in nodes:
            run, _ = should_run(check, node)
            on_node = by_node.get(meta(node)["name"], [])
            if not run:
                misscheduled += bool(on_node)
                continue
            desired += 1
            if not on_node:
                continue
            current += 1
            pod = sorted(on_node, key=by_age)[0]
            if is_ready(pod):
                ready += 1
                available += is_available(pod, min_ready)
            updated += is_updated(pod, digest, gen)
        old = ds.get("status") or {}
        status = {"currentNumberScheduled": current, "numberMisscheduled": misscheduled,
                  "desiredNumberScheduled": desired, "numberReady": ready,
                  "observedGeneration": meta(ds).get("generation", 1) if observe else old.get("observedGeneration"),
                  "updatedNumberScheduled": updated, "numberAvailable": available,
                  "numberUnavailable": desired - available}
        if any((old.get(k) or 0) != (v or 0) for k, v in status.items()) or "currentNumberScheduled" not in old:
            body = {k: v for k, v in status.items() if v or k in ("currentNumberScheduled", "numberMisscheduled",
                                                                   "desiredNumberScheduled", "numberReady")}
            for extra in ("collisionCount", "conditions"):
                if old.get(extra) is not None:
                    body[extra] = old[extra]
            with contextlib.suppress(NotFound, Conflict):
                await self.client.replace_status(DAEMONSETS, {**ds, "status": body}, meta(ds)["namespace"])
        if min_ready > 0 and ready != available:
            return min_ready
        return None
