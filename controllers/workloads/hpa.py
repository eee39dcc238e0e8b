"""The HorizontalPodAutoscaler controller, as kube-controller-manager runs it on a cluster with no metrics APIs
(mini-kube serves none: `kubectl top` says "Metrics API not available").

Every `SYNC_PERIOD` seconds, and whenever an HPA changes: the target's scale subresource is read (AbleToScale;
FailedGetScale when it cannot be), a target outside [minReplicas, maxReplicas] is rescaled to the nearest bound
(SuccessfulRescale, lastScaleTime), and otherwise each metric fails as upstream's does without a metrics API
(ScalingActive=False with the first metric's reason, FailedGetResourceMetric and FailedComputeMetricsReplicas
events, `currentMetrics` of empty entries). The status carries currentReplicas and desiredReplicas, so `kubectl
get|describe hpa` read as they do on such a real cluster.
"""

from __future__ import annotations

import contextlib
from typing import Any

from mini_kube.client import ApiClient, ApiError, Conflict, NotFound, ResourceRef
from mini_kube.client.discovery import group_version_resources
from mini_kube.client.events import EventRecorder
from mini_kube.client.informer import SharedInformerFactory
from mini_kube.machinery.meta import meta
from mini_kube.machinery.refs import HORIZONTALPODAUTOSCALERS
from mini_kube.machinery.times import now_rfc3339

from ..reconciler import Controller, Result, generation_changed

SYNC_PERIOD = 15.0  # --horizontal-pod-autoscaler-sync-period
RESOURCE_API = "the server could not find the requested resource (get pods.metrics.k8s.io)"
CUSTOM_API = "no custom metrics API (custom.metrics.k8s.io) registered"
EXTERNAL_API = "no external metrics API (external.metrics.k8s.io) registered"
Obj = dict[str, Any]


def set_condition(conditions: list[Obj], kind: str, status: str, reason: str, message: str) -> None:
    """setConditionInList: update the condition of `kind` (its transition time only when its status changes)."""
    current = next((c for c in conditions if c.get("type") == kind), None)
    if current is None:
        current = {"type": kind}
        conditions.append(current)
    if current.get("status") != status:
        current["lastTransitionTime"] = now_rfc3339()
    current.update(status=status, reason=reason, message=message)
    conditions[conditions.index(current)] = {k: current[k] for k in (
        "type", "status", "lastTransitionTime", "reason", "message") if k in current}


def metric_failure(metric: Obj) -> tuple[str, str, str]:
    """(condition reason, the metric's own error, the error as computeReplicasForMetric wraps it) for one metric
    when no metrics API is served."""
    kind = metric.get("type", "")
    if kind in ("Resource", "ContainerResource"):
        source = metric.get("resource" if kind == "Resource" else "containerResource") or {}
        name = source.get("name", "")
        how = "usage" if (source.get("target") or {}).get("averageValue") is not None else "utilization"
        error = (f"failed to get {name} {how}: unable to get metrics for resource {name}: unable to fetch metrics "
                 f"from resource metrics API: {RESOURCE_API}")
        if kind == "Resource":
            return "FailedGetResourceMetric", error, f"failed to get {name} resource metric value: {error}"
        return ("FailedGetContainerResourceMetric", error,
                f"failed to get {name} container metric value: {error}")
    if kind in ("Pods", "Object"):
        source = metric.get(kind.lower()) or {}
        name = (source.get("metric") or {}).get("name", "")
        error = f"unable to get metric {name}: unable to fetch metrics from custom metrics API: {CUSTOM_API}"
        return f"FailedGet{kind}Metric", error, f"failed to get {kind.lower()} metric value: {error}"
    if kind == "External":
        name = ((metric.get("external") or {}).get("metric") or {}).get("name", "")
        error = f"unable to get external metric {name}: unable to fetch metrics from external metrics API: " \
                f"{EXTERNAL_API}"
        return "FailedGetExternalMetric", error, f"failed to get external metric value: {error}"
    error = f"unknown metric source type {kind!r}"
    return "InvalidMetricSourceType", error, error


class HorizontalPodAutoscalerController(Controller):
    name = "horizontalpodautoscaling"
    workers = 2

    def __init__(self, client: ApiClient, informers: SharedInformerFactory | None = None,
                 events: EventRecorder | None = None, sync_period: float = SYNC_PERIOD) -> None:
        super().__init__(client, informers, events or EventRecorder(client, "horizontal-pod-autoscaler"))
        self.sync_period = sync_period
        self._plurals: dict[str, dict[str, str]] = {}  # apiVersion -> kind -> plural

    def setup(self) -> None:
        # spec changes only: the controller's own status writes do not call for another round (upstream
        # processes an HPA at most once per sync period)
        self.hpas = self.watch(HORIZONTALPODAUTOSCALERS, predicate=generation_changed)

    async def _plural(self, api_version: str, kind: str) -> str | None:
        known = self._plurals.get(api_version)
        if known is None:
            served = await group_version_resources(self.client, api_version)
            known = {r.get("kind", ""): r["name"] for r in served if "/" not in r["name"]}
            self._plurals[api_version] = known
        return known.get(kind)

    async def _scale(self, hpa: Obj) -> tuple[ResourceRef | None, Obj | str]:
        """The target and its Scale, or the error upstream reports when it cannot be read."""
        target = (hpa.get("spec") or {}).get("scaleTargetRef") or {}
        api_version, kind, name = target.get("apiVersion", ""), target.get("kind", ""), target.get("name", "")
        plural = await self._plural(api_version, kind)
        if plural is None:
            return None, f'no matches for kind "{kind}" in group "{api_version.rpartition("/")[0]}"'
        group, _, version = api_version.rpartition("/")
        ref = ResourceRef(group, version, plural)
        try:
            return ref, await self.client.get(ref, name, meta(hpa)["namespace"], "scale")
        except ApiError as exc:
            return ref, str(exc.body.get("message") or exc)

    async def reconcile(self, key: Any) -> Result | None:
        hpa = self.hpas.get(key)
        if hpa is None or meta(hpa).get("deletionTimestamp"):
            return None
        spec, old = hpa.get("spec") or {}, hpa.get("status") or {}
        status: Obj = {k: old[k] for k in ("lastScaleTime", "currentReplicas", "desiredReplicas") if k in old}
        conditions: list[Obj] = [dict(c) for c in old.get("conditions") or ()]
        ref, scale = await self._scale(hpa)
        if isinstance(scale, str) or ref is None:
            self.events.event(hpa, "Warning", "FailedGetScale", str(scale))
            set_condition(conditions, "AbleToScale", "False", "FailedGetScale",
                          f"the HPA controller was unable to get the target's current scale: {scale}")
            await self._write(hpa, {**status, "conditions": conditions})
            return Result(requeue_after=self.sync_period)
        set_condition(conditions, "AbleToScale", "True", "SucceededGetScale",
                      "the HPA controller was able to get the target's current scale")
        current = int((scale.get("status") or {}).get("replicas") or 0)
        wanted = int((scale.get("spec") or {}).get("replicas") or 0)
        low, high = int(spec.get("minReplicas", 1)), int(spec.get("maxReplicas", 1))
        status["currentReplicas"] = current
        desired, reason = current, ""
        if wanted == 0 and low != 0:
            desired = 0
            set_condition(conditions, "ScalingActive", "False", "ScalingDisabled",
                          "scaling is disabled since the replica count of the target is zero")
        elif current > high:
            desired, reason = high, "Current number of replicas above Spec.MaxReplicas"
        elif current < low:
            desired, reason = low, "Current number of replicas below Spec.MinReplicas"
        else:
            metrics = spec.get("metrics") or ()
            failures = [metric_failure(m) for m in metrics]
            for failure in failures:
                self.events.event(hpa, "Warning", failure[0], failure[1])
            if failures:  # every metric fails: nothing to scale on
                first = failures[0]
                set_condition(conditions, "ScalingActive", "False", first[0],
                              f"the HPA was unable to compute the replica count: {first[1]}")
                self.events.event(hpa, "Warning", "FailedComputeMetricsReplicas",
                                  f"invalid metrics ({len(failures)} invalid out of {len(failures)}), first error "
                                  f"is: {first[2]}")
                status["currentMetrics"] = [{"type": ""} for _ in failures]
                status.setdefault("desiredReplicas", 0)
                await self._write(hpa, {**status, "conditions": conditions})
                return Result(requeue_after=self.sync_period)
        if desired != current:
            try:
                await self.client.patch(ref, meta(scale)["name"], {"spec": {"replicas": desired}},
                                        meta(hpa)["namespace"], subresource="scale")
            except ApiError as exc:
                set_condition(conditions, "AbleToScale", "False", "FailedUpdateScale",
                              f"the HPA controller was unable to update the target scale: {exc.body.get('message')}")
                self.events.event(hpa, "Warning", "FailedRescale",
                                  f"New size: {desired}; reason: {reason}; error: {exc.body.get('message')}")
                await self._write(hpa, {**status, "conditions": conditions})
                return Result(requeue_after=self.sync_period)
            set_condition(conditions, "AbleToScale", "True", "SucceededRescale",
                          f"the HPA controller was able to update the target scale to {desired}")
            self.events.event(hpa, "Normal", "SuccessfulRescale", f"New size: {desired}; reason: {reason}")
            status["lastScaleTime"] = now_rfc3339()
        status["desiredReplicas"] = desired
        status.pop("currentMetrics", None)
        await self._write(hpa, {**status, "conditions": conditions})
        return Result(requeue_after=self.sync_period)

    async def _write(self, hpa: Obj, status: Obj) -> None:
        """The status in Go's field order (updateStatusIfNeeded: only when it changed)."""
        order = ("observedGeneration", "lastScaleTime", "currentReplicas", "desiredReplicas", "currentMetrics",
                 "conditions")
        status = {k: status[k] for k in order if k in status and (status[k] or k == "desiredReplicas")}
        if status == (hpa.get("status") or {}):
            return
        with contextlib.suppress(NotFound, Conflict):  # gone, or changed meanwhile: the watch brings it back
            await self.client.replace_status(HORIZONTALPODAUTOSCALERS, {**hpa, "status": status}, meta(hpa)["namespace"])
