"""HorizontalPodAutoscalers are stored as autoscaling/v2, as upstream stores them; autoscaling/v1 (which `kubectl
autoscale` writes) is converted on the way in and out as pkg/apis/autoscaling/v1/conversion.go does: the CPU
utilization metric is `targetCPUUtilizationPercentage` (80% when v1 gives none), and what v1 cannot say (other
metrics, current metrics, conditions, behavior) travels in the `autoscaling.alpha.kubernetes.io/*` annotations."""

from __future__ import annotations

import copy
from typing import Any

import orjson

from ...resources import ResourceType
from ...schema.zero_values import fill_zero_values
from ..generic import ordered
from ..strategy import Strategy, WriteContext

V1, V2 = "autoscaling/v1", "autoscaling/v2"
METRICS = "autoscaling.alpha.kubernetes.io/metrics"
CURRENT_METRICS = "autoscaling.alpha.kubernetes.io/current-metrics"
CONDITIONS = "autoscaling.alpha.kubernetes.io/conditions"
BEHAVIOR = "autoscaling.alpha.kubernetes.io/behavior"
ROUND_TRIP = (METRICS, CURRENT_METRICS, CONDITIONS, BEHAVIOR)
SOURCE_KEYS = {"Object": "object", "Pods": "pods", "Resource": "resource", "ContainerResource": "containerResource",
               "External": "external"}
Obj = dict[str, Any]


def _some(**fields: Any) -> Obj:
    return {k: v for k, v in fields.items() if v is not None}


def _is_cpu_utilization(metric: Obj) -> bool:
    resource = metric.get("resource") or {}
    return (metric.get("type") == "Resource" and resource.get("name") == "cpu"
            and (resource.get("target") or {}).get("averageUtilization") is not None)


# --- metrics: v2 (target/current objects) <-> v1 (the v2beta1 shape, flat fields) ---------------------------
def _spec_to_v1(metric: Obj) -> Obj:
    kind = metric.get("type", "")
    key = SOURCE_KEYS.get(kind)
    if key is None:  # a metric type this version does not know: only its type converts
        return {"type": kind}
    source = metric.get(key) or {}
    target = source.get("target") or {}
    out: Obj = {"type": kind}
    if kind in ("Resource", "ContainerResource"):
        out[key] = _some(name=source.get("name"), container=source.get("container"),
                         targetAverageUtilization=target.get("averageUtilization"),
                         targetAverageValue=target.get("averageValue"))
    elif kind == "Pods":
        metric_id = source.get("metric") or {}
        out[key] = _some(metricName=metric_id.get("name"), selector=metric_id.get("selector"),
                         targetAverageValue=target.get("averageValue"))
    elif kind == "Object":
        metric_id = source.get("metric") or {}
        out[key] = _some(target=source.get("describedObject"), metricName=metric_id.get("name"),
                         selector=metric_id.get("selector"), targetValue=target.get("value"),
                         averageValue=target.get("averageValue"))
    elif kind == "External":
        metric_id = source.get("metric") or {}
        out[key] = _some(metricName=metric_id.get("name"), metricSelector=metric_id.get("selector"),
                         targetValue=target.get("value"), targetAverageValue=target.get("averageValue"))
    return out


def _spec_to_v2(metric: Obj) -> Obj:
    kind = metric.get("type", "")
    key = SOURCE_KEYS.get(kind)
    if key is None:  # a metric type this version does not know: only its type converts
        return {"type": kind}
    source = metric.get(key) or {}
    out: Obj = {"type": kind}
    if kind in ("Resource", "ContainerResource"):
        utilization = source.get("targetAverageUtilization")
        target = _some(type="Utilization" if utilization is not None else "AverageValue",
                       averageUtilization=utilization, averageValue=source.get("targetAverageValue"))
        out[key] = _some(name=source.get("name"), container=source.get("container"), target=target)
    elif kind == "Pods":
        out[key] = {"metric": _some(name=source.get("metricName"), selector=source.get("selector")),
                    "target": _some(type="AverageValue", averageValue=source.get("targetAverageValue"))}
    elif kind == "Object":
        average = source.get("averageValue")
        target = _some(type="AverageValue" if average is not None else "Value",
                       value=source.get("targetValue"), averageValue=average)
        out[key] = {"describedObject": source.get("target") or {}, "target": target,
                    "metric": _some(name=source.get("metricName"), selector=source.get("selector"))}
    elif kind == "External":
        average = source.get("targetAverageValue")
        target = _some(type="AverageValue" if average is not None else "Value",
                       value=source.get("targetValue"), averageValue=average)
        out[key] = {"metric": _some(name=source.get("metricName"), selector=source.get("metricSelector")),
                    "target": target}
    return out


def _status_to_v1(metric: Obj) -> Obj:
    kind = metric.get("type", "")
    key = SOURCE_KEYS.get(kind)
    if key is None:  # a metric type this version does not know: only its type converts
        return {"type": kind}
    source = metric.get(key) or {}
    current = source.get("current") or {}
    metric_id = source.get("metric") or {}
    out: Obj = {"type": kind}
    if kind in ("Resource", "ContainerResource"):
        out[key] = _some(name=source.get("name"), container=source.get("container"),
                         currentAverageUtilization=current.get("averageUtilization"),
                         currentAverageValue=current.get("averageValue", "0"))
    elif kind == "Pods":
        out[key] = _some(metricName=metric_id.get("name"), selector=metric_id.get("selector"),
                         currentAverageValue=current.get("averageValue", "0"))
    elif kind == "Object":
        out[key] = _some(target=source.get("describedObject"), metricName=metric_id.get("name"),
                         selector=metric_id.get("selector"), currentValue=current.get("value", "0"),
                         averageValue=current.get("averageValue"))
    elif kind == "External":
        out[key] = _some(metricName=metric_id.get("name"), metricSelector=metric_id.get("selector"),
                         currentValue=current.get("value", "0"), currentAverageValue=current.get("averageValue"))
    return out


def _status_to_v2(metric: Obj) -> Obj:
    kind = metric.get("type", "")
    key = SOURCE_KEYS.get(kind)
    if key is None:  # a metric type this version does not know: only its type converts
        return {"type": kind}
    source = metric.get(key) or {}
    out: Obj = {"type": kind}
    if kind in ("Resource", "ContainerResource"):
        out[key] = _some(name=source.get("name"), container=source.get("container"), current=_some(
            averageUtilization=source.get("currentAverageUtilization"),
            averageValue=source.get("currentAverageValue")))
    elif kind == "Pods":
        out[key] = {"metric": _some(name=source.get("metricName"), selector=source.get("selector")),
                    "current": _some(averageValue=source.get("currentAverageValue"))}
    elif kind == "Object":
        out[key] = {"describedObject": source.get("target") or {},
                    "metric": _some(name=source.get("metricName"), selector=source.get("selector")),
                    "current": _some(value=source.get("currentValue"), averageValue=source.get("averageValue"))}
    elif kind == "External":
        out[key] = {"metric": _some(name=source.get("metricName"), selector=source.get("metricSelector")),
                    "current": _some(value=source.get("currentValue"),
                                     averageValue=source.get("currentAverageValue"))}
    return out


def _decoded(annotations: dict[str, str], key: str) -> Any:
    """An annotation's JSON, or None when absent or not JSON (upstream ignores what it cannot decode)."""
    try:
        return orjson.loads(annotations[key]) if key in annotations else None
    except orjson.JSONDecodeError:
        return None


def _json(value: Any) -> str:
    return orjson.dumps(value).decode()


# --- whole objects -------------------------------------------------------------------------------------------
def to_v1(obj: Obj) -> Obj:
    """A stored (v2) HorizontalPodAutoscaler as autoscaling/v1 serves it."""
    out = copy.deepcopy(obj)
    out["apiVersion"] = V1
    metadata = out.setdefault("metadata", {})
    annotations = {k: v for k, v in (metadata.get("annotations") or {}).items() if k not in ROUND_TRIP}
    spec = out.get("spec") or {}
    metrics = spec.pop("metrics", None) or []
    behavior = spec.pop("behavior", None)
    cpu = next((m for m in metrics if m.get("type") == "Resource" and (m.get("resource") or {}).get("name") == "cpu"),
               None)
    if cpu is not None and _is_cpu_utilization(cpu):
        spec["targetCPUUtilizationPercentage"] = cpu["resource"]["target"]["averageUtilization"]
    others = [_spec_to_v1(m) for m in metrics if not _is_cpu_utilization(m)]
    if others:
        annotations[METRICS] = _json(others)
    if behavior:
        annotations[BEHAVIOR] = _json(behavior)
    status = out.setdefault("status", {})
    current = status.pop("currentMetrics", None) or []
    conditions = status.pop("conditions", None) or []
    for metric in current:
        resource = metric.get("resource") or {}
        used = (resource.get("current") or {}).get("averageUtilization")
        if metric.get("type") == "Resource" and resource.get("name") == "cpu" and used is not None:
            status["currentCPUUtilizationPercentage"] = used
    if current:
        annotations[CURRENT_METRICS] = _json([_status_to_v1(m) for m in current])
    if conditions:
        annotations[CONDITIONS] = _json(conditions)
    if annotations:
        metadata["annotations"] = annotations
    else:
        metadata.pop("annotations", None)
    fill_zero_values("io.k8s.api.autoscaling.v1.HorizontalPodAutoscaler", out)
    return ordered(out)


def to_v2(obj: Obj) -> Obj:
    """An autoscaling/v1 HorizontalPodAutoscaler in the stored (v2) shape."""
    out = copy.deepcopy(obj)
    out["apiVersion"] = V2
    metadata = out.setdefault("metadata", {})
    given = metadata.get("annotations") or {}
    annotations = {k: v for k, v in given.items() if k not in ROUND_TRIP}
    spec = out.setdefault("spec", {})
    percent = spec.pop("targetCPUUtilizationPercentage", None)
    metrics = [_spec_to_v2(m) for m in _decoded(given, METRICS) or () if isinstance(m, dict)]
    if percent is not None:
        metrics.append({"type": "Resource", "resource": {
            "name": "cpu", "target": {"type": "Utilization", "averageUtilization": percent}}})
    if not metrics:  # v1's implicit default, applied here where every metric is known
        metrics = [{"type": "Resource", "resource": {
            "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}]
    spec["metrics"] = metrics
    behavior = _decoded(given, BEHAVIOR)
    if isinstance(behavior, dict) and behavior:
        spec["behavior"] = behavior
    status = out.get("status")
    if isinstance(status, dict):
        used = status.pop("currentCPUUtilizationPercentage", None)
        current = _decoded(given, CURRENT_METRICS)
        if isinstance(current, list):
            status["currentMetrics"] = [_status_to_v2(m) for m in current if isinstance(m, dict)]
        elif used is not None:
            status["currentMetrics"] = [{"type": "Resource", "resource": {
                "name": "cpu", "current": {"averageUtilization": used}}}]
        conditions = _decoded(given, CONDITIONS)
        if isinstance(conditions, list) and conditions:
            status["conditions"] = conditions
        if not status.get("currentReplicas"):
            status.pop("currentReplicas", None)  # omitempty in v2
    if annotations:
        metadata["annotations"] = annotations
    else:
        metadata.pop("annotations", None)
    return ordered(out)


def convert(res: ResourceType, obj: Obj) -> Obj:
    """A stored HorizontalPodAutoscaler (either shape) as `res` serves it."""
    if obj.get("apiVersion") == res.api_version:
        return obj
    return to_v1(obj) if res.version == "v1" else to_v2(obj)


class HorizontalPodAutoscalerStrategy(Strategy):
    """Writes through autoscaling/v1 are validated in that shape and stored in the v2 shape."""

    def read(self, res: ResourceType, obj: Obj) -> Obj:
        return convert(res, obj)

    async def before_write(self, ctx: WriteContext, new: Obj, old: Obj | None) -> None:
        if new.get("apiVersion") == V1:
            stored = to_v2(new)
            new.clear()
            new.update(stored)
