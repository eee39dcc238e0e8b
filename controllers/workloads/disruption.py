"""The disruption controller: PodDisruptionBudget status, as kube-controller-manager's.

For each budget: the Pods its selector picks, how many should be healthy (`minAvailable` as a number, or
`minAvailable` / `maxUnavailable` as numbers or percentages of the summed scale of the Pods' controllers:
ReplicationController, Deployment, ReplicaSet, StatefulSet, else any kind through its scale subresource), how
many are (Ready, not terminating, not just evicted), and so `disruptionsAllowed`, the DisruptionAllowed
condition (SufficientPods / InsufficientPods, SyncFailed on errors) and `disruptedPods` (evictions the API
server approved, dropped once the Pod is gone or after DELETION_TIMEOUT). The eviction subresource spends the
budget this controller computes. A `DisruptionTarget` condition left on a Pod that was never deleted is set back
to False after STALE_DISRUPTION_TIMEOUT.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import math
from typing import Any

from mini_kube.client import ApiClient, ApiError, Conflict, NotFound, ResourceRef
from mini_kube.client.discovery import group_version_resources
from mini_kube.client.events import EventRecorder
from mini_kube.client.informer import SharedInformerFactory
from mini_kube.machinery import labels as labelselector
from mini_kube.machinery.meta import meta
from mini_kube.machinery.refs import (
    DEPLOYMENTS,
    PODDISRUPTIONBUDGETS,
    PODS,
    REPLICASETS,
    REPLICATIONCONTROLLERS,
    STATEFULSETS,
)
from mini_kube.machinery.times import now_rfc3339, parse_time

from ..reconciler import Controller, Result
from .common import controller_of, is_ready

DELETION_TIMEOUT = 120.0  # seconds an approved eviction may take before the Pod counts again (upstream: 2 min)
STATUS_ORDER = ("observedGeneration", "disruptedPods", "disruptionsAllowed", "currentHealthy", "desiredHealthy",
                "expectedPods", "conditions")
APPS_GROUPS = ("apps", "extensions")


POD_KEY = "pod:"  # queue keys of Pods whose DisruptionTarget condition may be stale (the others are budgets)
STALE_DISRUPTION_TIMEOUT = 120.0  # upstream's DefaultStalePodDisruptionTimeout
STALE_FIELD_MANAGER = "DisruptionController"


def stale_disruption_in(pod: dict[str, Any]) -> float | None:
    """Seconds until the Pod's DisruptionTarget=True condition counts as stale (0: it does now); None when it
    has none that can go stale (terminating or terminal Pods, conditions the kubelet set)."""
    if meta(pod).get("deletionTimestamp") or (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
        return None
    cond = next((c for c in (pod.get("status") or {}).get("conditions") or ()
                 if c.get("type") == "DisruptionTarget"), None)
    if cond is None or cond.get("status") != "True" or cond.get("reason") == "TerminationByKubelet":
        return None
    since = parse_time(cond.get("lastTransitionTime")) or dt.datetime.now(dt.UTC)
    return max(STALE_DISRUPTION_TIMEOUT - (dt.datetime.now(dt.UTC) - since).total_seconds(), 0.0)


class SyncError(Exception):
    """A budget whose expected Pod count cannot be worked out (reported as the SyncFailed condition)."""


def pdb_selects(pdb: dict[str, Any], labels: dict[str, str] | None) -> bool:
    """policy/v1 semantics: a missing selector selects nothing, an empty one every Pod of the namespace."""
    return labelselector.matches((pdb.get("spec") or {}).get("selector"), labels)


def scaled_value(value: int | str, total: int, round_up: bool = True) -> int:
    """intstr.GetScaledValueFromIntOrPercent."""
    if isinstance(value, int):
        return value
    if not value.endswith("%"):
        raise SyncError("invalid value for IntOrString: invalid type: string is not a percentage")
    try:
        percent = int(value[:-1])
    except ValueError:
        raise SyncError(f'invalid value "{value}": strconv.Atoi: parsing "{value[:-1]}": invalid syntax') from None
    scaled = percent * total / 100
    return math.ceil(scaled) if round_up else math.floor(scaled)


def set_condition(conditions: list[dict[str, Any]], condition: dict[str, Any]) -> None:
    """apimachinery's SetStatusCondition: the transition time moves only when the status changes."""
    for existing in conditions:
        if existing.get("type") == condition["type"]:
            if existing.get("status") != condition["status"] or not existing.get("lastTransitionTime"):
                existing["lastTransitionTime"] = now_rfc3339()
            existing.update({k: condition.get(k, "") for k in ("status", "reason", "message")})
            existing["observedGeneration"] = condition.get("observedGeneration", 0)
            return
    conditions.append({"type": condition["type"], "status": condition["status"],
                       "observedGeneration": condition.get("observedGeneration", 0), "lastTransitionTime": now_rfc3339(),
                       "reason": condition.get("reason", ""), "message": condition.get("message", "")})


def allowed_condition(status: dict[str, Any]) -> dict[str, Any]:
    allowed = status.get("disruptionsAllowed", 0) > 0
    return {"type": "DisruptionAllowed", "status": "True" if allowed else "False",
            "reason": "SufficientPods" if allowed else "InsufficientPods",
            "observedGeneration": status.get("observedGeneration", 0)}


def conditions_up_to_date(pdb: dict[str, Any]) -> bool:
    """component-helpers' ConditionsAreUpToDate."""
    status = pdb.get("status") or {}
    cond = next((c for c in status.get("conditions") or () if c.get("type") == "DisruptionAllowed"), None)
    if cond is None or status.get("observedGeneration", 0) != meta(pdb).get("generation", 0):
        return False
    want = allowed_condition(status)
    return cond.get("status") == want["status"] and cond.get("reason") == want["reason"]


def ordered_status(status: dict[str, Any]) -> dict[str, Any]:
    """PodDisruptionBudgetStatus in Go's field order, empty omitempty fields left out."""
    out = {k: status[k] for k in STATUS_ORDER if k in status}
    for key in ("observedGeneration", "disruptedPods", "conditions"):
        if not out.get(key):
            out.pop(key, None)
    return out


class DisruptionController(Controller):
    name = "disruption"
    workers = 2

    def __init__(self, client: ApiClient, informers: SharedInformerFactory | None = None,
                 events: EventRecorder | None = None, **kwargs: Any) -> None:
        super().__init__(client, informers, events or EventRecorder(client, "controllermanager"), **kwargs)
        self._scale_kinds: dict[str, dict[str, str]] = {}  # apiVersion -> kind -> plural (scale subresource)

    def setup(self) -> None:
        self.pdbs = self.watch(PODDISRUPTIONBUDGETS)
        self.pods = self.watch(PODS, enqueue=False)
        self.pods.add_handler(self._pod_changed)
        self.replicasets = self.watch(REPLICASETS, enqueue=False)
        self.deployments = self.watch(DEPLOYMENTS, enqueue=False)
        self.statefulsets = self.watch(STATEFULSETS, enqueue=False)
        self.rcs = self.watch(REPLICATIONCONTROLLERS, enqueue=False)

    def _pod_changed(self, event: str, old: dict[str, Any] | None, new: dict[str, Any] | None) -> None:
        for pod in (new, old) if event == "update" else (new or old,):
            if not pod:
                continue
            namespace = meta(pod).get("namespace")
            for pdb in self.pdbs.list(namespace):
                if pdb_selects(pdb, meta(pod).get("labels")):
                    self.queue.add(f"{namespace}/{meta(pdb)['name']}")
        if new is not None and event != "delete" and stale_disruption_in(new) is not None:
            self.queue.add(f"{POD_KEY}{meta(new)['namespace']}/{meta(new)['name']}")

    # -- reconcile ----------------------------------------------------------------------------------
    async def reconcile(self, key: Any) -> Result | None:
        if key.startswith(POD_KEY):
            return await self._reset_stale_disruption(key.removeprefix(POD_KEY))
        pdb = self.pdbs.get(key)
        if pdb is None:
            return None
        try:
            return await self._sync(pdb)
        except Conflict:
            raise  # retried with back-off, without the fail-safe
        except (SyncError, ApiError) as exc:
            await self._fail_safe(pdb, str(exc))
            raise

    async def _reset_stale_disruption(self, key: str) -> Result | None:
        """A DisruptionTarget condition left on a Pod that was not deleted goes back to False after a while."""
        pod = self.pods.get(key)
        wait = stale_disruption_in(pod) if pod is not None else None
        if pod is None or wait is None:
            return None
        if wait > 0:
            return Result(requeue_after=wait)
        await self.client.apply(PODS, {"apiVersion": "v1", "kind": "Pod", "metadata": {
            "name": meta(pod)["name"], "namespace": meta(pod)["namespace"]}, "status": {"conditions": [{
                "type": "DisruptionTarget", "status": "False", "lastTransitionTime": now_rfc3339()}]}},
            meta(pod)["namespace"], field_manager=STALE_FIELD_MANAGER, force=True, subresource="status")
        return None

    async def _sync(self, pdb: dict[str, Any]) -> Result | None:
        namespace = meta(pdb)["namespace"]
        pods = [p for p in self.pods.list(namespace) if pdb_selects(pdb, meta(p).get("labels"))]
        if not pods:
            self.events.event(pdb, "Normal", "NoPods", "No matching pods found")
        try:
            expected, desired, unmanaged = await self._expected_count(pdb, pods)
        except (SyncError, ApiError) as exc:
            self.events.event(pdb, "Warning", "CalculateExpectedPodCountFailed",
                              f"Failed to calculate the number of expected pods: {exc}")
            raise
        if unmanaged:
            self.events.event(pdb, "Warning", "UnmanagedPods",
                              f"Pods selected by this PodDisruptionBudget (selector: {_go_selector(pdb)}) were found "
                              "to be unmanaged. As a result, the status of the PDB cannot be calculated correctly, "
                              "which may result in undefined behavior. To account for these pods please set "
                              '".spec.minAvailable" field of the PDB to an integer value.')
        current = dt.datetime.now(dt.UTC)
        disrupted, recheck = self._disrupted_pods(pdb, pods, current)
        healthy = sum(1 for p in pods if not meta(p).get("deletionTimestamp") and meta(p)["name"] not in disrupted
                      and is_ready(p))
        await self._write_status(pdb, healthy, desired, expected, disrupted)
        if recheck is not None:
            return Result(requeue_after=max((recheck - current).total_seconds(), 0.01))
        return None

    async def _expected_count(self, pdb: dict[str, Any], pods: list[dict[str, Any]]) -> tuple[int, int, list[str]]:
        """(expected Pods, desired healthy Pods, names of Pods without a controller), as upstream computes them."""
        spec = pdb.get("spec") or {}
        unmanaged: list[str] = []
        if spec.get("maxUnavailable") is not None:
            expected, unmanaged = await self._expected_scale(pods)
            desired = max(expected - scaled_value(spec["maxUnavailable"], expected), 0)
            return expected, desired, unmanaged
        low = spec.get("minAvailable")
        if isinstance(low, int):
            return len(pods), low, unmanaged
        if isinstance(low, str):
            expected, unmanaged = await self._expected_scale(pods)
            return expected, scaled_value(low, expected), unmanaged
        return 0, 0, unmanaged

    async def _expected_scale(self, pods: list[dict[str, Any]]) -> tuple[int, list[str]]:
        """The summed scale of the controllers of `pods` (each counted once)."""
        scales: dict[str, int] = {}
        unmanaged: list[str] = []
        for pod in pods:
            ref = controller_of(pod)
            if ref is None:
                unmanaged.append(meta(pod)["name"])
                continue
            if ref.get("uid") in scales:
                continue
            found = await self._find_scale(ref, meta(pod)["namespace"])
            if found is None:
                raise SyncError(f'found no controllers for pod "{meta(pod)["name"]}"')
            scales[found[0]] = found[1]
        return sum(scales.values()), unmanaged

    async def _find_scale(self, ref: dict[str, Any], namespace: str) -> tuple[str, int] | None:
        """(uid, replicas) of a Pod's controller: the finders upstream tries, in its order."""
        for finder in (self._rc, self._deployment, self._replicaset, self._statefulset):
            found = finder(ref, namespace)
            if found is not None:
                return found
        return await self._scale_subresource(ref, namespace)

    @staticmethod
    def _is(ref: dict[str, Any], kind: str, groups: tuple[str, ...]) -> bool:
        return ref.get("kind") == kind and str(ref.get("apiVersion", "")).rpartition("/")[0] in groups

    @staticmethod
    def _owned(obj: dict[str, Any] | None, ref: dict[str, Any]) -> dict[str, Any] | None:
        return obj if obj is not None and meta(obj).get("uid") == ref.get("uid") else None

    def _rc(self, ref: dict[str, Any], namespace: str) -> tuple[str, int] | None:
        rc = self._owned(self.rcs.get(f"{namespace}/{ref['name']}"), ref) if self._is(
            ref, "ReplicationController", ("",)) else None
        return (meta(rc)["uid"], int((rc.get("spec") or {}).get("replicas", 1))) if rc else None

    def _replicaset(self, ref: dict[str, Any], namespace: str) -> tuple[str, int] | None:
        if not self._is(ref, "ReplicaSet", APPS_GROUPS):
            return None
        rs = self._owned(self.replicasets.get(f"{namespace}/{ref['name']}"), ref)
        if rs is None:
            return None
        owner = controller_of(rs)
        if owner is not None and owner.get("kind") == "Deployment":
            return None  # the Deployment's scale counts (see _deployment)
        return meta(rs)["uid"], int((rs.get("spec") or {}).get("replicas", 1))

    def _deployment(self, ref: dict[str, Any], namespace: str) -> tuple[str, int] | None:
        if not self._is(ref, "ReplicaSet", APPS_GROUPS):
            return None
        rs = self._owned(self.replicasets.get(f"{namespace}/{ref['name']}"), ref)
        owner = controller_of(rs) if rs is not None else None
        if owner is None or not self._is(owner, "Deployment", APPS_GROUPS):
            return None
        deployment = self._owned(self.deployments.get(f"{namespace}/{owner['name']}"), owner)
        return (meta(deployment)["uid"], int((deployment.get("spec") or {}).get("replicas", 1))) \
            if deployment else None

    def _statefulset(self, ref: dict[str, Any], namespace: str) -> tuple[str, int] | None:
        sts = self._owned(self.statefulsets.get(f"{namespace}/{ref['name']}"), ref) if self._is(
            ref, "StatefulSet", APPS_GROUPS) else None
        return (meta(sts)["uid"], int((sts.get("spec") or {}).get("replicas", 1))) if sts else None

    async def _scale_subresource(self, ref: dict[str, Any], namespace: str) -> tuple[str, int] | None:
        """Any other controller kind through its scale subresource (custom resources with `scale`)."""
        api_version, kind = str(ref.get("apiVersion", "")), str(ref.get("kind", ""))
        group, _, version = api_version.rpartition("/")
        kinds = await self._kinds(api_version)
        plural = kinds.get(kind)
        if plural is None:
            raise SyncError(f'no matches for kind "{kind}" in version "{api_version}"')
        scalable = kinds.get(f"{kind}/scale") is not None
        try:
            scale = await self.client.get(ResourceRef(group, version, plural), ref["name"], namespace, "scale")
        except NotFound:
            if not scalable:
                resource = f"{plural}.{group}" if group else plural
                raise SyncError(f"{resource} does not implement the scale subresource") from None
            return None
        if meta(scale).get("uid") != ref.get("uid"):
            return None
        return meta(scale)["uid"], int((scale.get("spec") or {}).get("replicas", 0))

    async def _kinds(self, api_version: str) -> dict[str, str]:
        """kind -> plural served in `api_version` (and "Kind/scale" for those with a scale subresource)."""
        known = self._scale_kinds.get(api_version)
        if known is None:
            served = await group_version_resources(self.client, api_version)
            known = {}
            by_plural = {}
            for res in served:
                name = res.get("name", "")
                if "/" not in name:
                    known[res.get("kind", "")] = name
                    by_plural[name] = res.get("kind", "")
            for res in served:
                base, _, sub = res.get("name", "").partition("/")
                if sub == "scale" and base in by_plural:
                    known[f"{by_plural[base]}/scale"] = base
            self._scale_kinds[api_version] = known
        return known

    def _disrupted_pods(self, pdb: dict[str, Any], pods: list[dict[str, Any]],
                        current: dt.datetime) -> tuple[dict[str, str], dt.datetime | None]:
        """The approved evictions still expected to happen, and when the soonest of them times out."""
        recorded = (pdb.get("status") or {}).get("disruptedPods") or {}
        result: dict[str, str] = {}
        recheck: dt.datetime | None = None
        for pod in pods:
            name = meta(pod)["name"]
            if meta(pod).get("deletionTimestamp") or name not in recorded:
                continue
            since = parse_time(recorded[name])
            if since is None:
                continue
            expected = since + dt.timedelta(seconds=DELETION_TIMEOUT)
            if expected < current:
                self.events.event(pod, "Warning", "NotDeleted", f"Pod was expected by PDB {meta(pdb)['namespace']}/"
                                  f"{meta(pdb)['name']} to be deleted but it wasn't")
            else:
                recheck = expected if recheck is None or expected < recheck else recheck
                result[name] = recorded[name]
        return result, recheck

    async def _write_status(self, pdb: dict[str, Any], healthy: int, desired: int, expected: int,
                            disrupted: dict[str, str]) -> None:
        allowed = healthy - desired
        if expected <= 0 or allowed <= 0:
            allowed = 0
        current = pdb.get("status") or {}
        generation = meta(pdb).get("generation", 0)
        if (current.get("currentHealthy", 0), current.get("desiredHealthy", 0), current.get("expectedPods", 0),
                current.get("disruptionsAllowed", 0), current.get("disruptedPods") or {},
                current.get("observedGeneration", 0)) == (healthy, desired, expected, allowed, disrupted,
                                                           generation) and conditions_up_to_date(pdb):
            return
        status = {"observedGeneration": generation, "disruptedPods": disrupted, "disruptionsAllowed": allowed,
                  "currentHealthy": healthy, "desiredHealthy": desired, "expectedPods": expected,
                  "conditions": [dict(c) for c in current.get("conditions") or ()]}
        set_condition(status["conditions"], allowed_condition(status))
        await self.client.replace_status(PODDISRUPTIONBUDGETS, {**pdb, "status": ordered_status(status)}, meta(pdb)["namespace"])

    async def _fail_safe(self, pdb: dict[str, Any], message: str) -> None:
        """No disruptions while the budget cannot be computed: disruptionsAllowed 0, condition SyncFailed."""
        status = dict(pdb.get("status") or {})
        status["disruptionsAllowed"] = 0
        status["conditions"] = [dict(c) for c in status.get("conditions") or ()]
        set_condition(status["conditions"], {"type": "DisruptionAllowed", "status": "False", "reason": "SyncFailed",
                                             "message": message,
                                             "observedGeneration": status.get("observedGeneration", 0)})
        with contextlib.suppress(NotFound, Conflict):
            await self.client.replace_status(PODDISRUPTIONBUDGETS, {**pdb, "status": ordered_status(status)}, meta(pdb)["namespace"])


def _go_selector(pdb: dict[str, Any]) -> str:
    """The selector as Go's %v prints a *metav1.LabelSelector (close enough for an event message)."""
    selector = (pdb.get("spec") or {}).get("selector") or {}
    labels = " ".join(f"{k}:{v}" for k, v in sorted((selector.get("matchLabels") or {}).items()))
    return f"&LabelSelector{{MatchLabels:map[string]string{{{labels}}},MatchExpressions:[]LabelSelectorRequirement{{}},}}"
