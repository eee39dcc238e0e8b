"""A HorizontalPodAutoscaler's spec.metrics, as upstream's validateMetrics checks them: a known source type whose
source (and only that one) is given, metric names, and targets of a known type with positive values."""

from __future__ import annotations

from typing import Any

from mini_kube.apiserver.errors import GoText
from mini_kube.apiserver.validation.errs import FieldError, each, forbidden, invalid, not_supported, required
from mini_kube.apiserver.validation.meta import validate_dns1123_label
from mini_kube.apiserver.validation.pods import validate_resource_name
from mini_kube.machinery.names import path_segment_name
from mini_kube.machinery.quantity import go_quantity, parse_quantity

Obj = dict[str, Any]
SOURCE_TYPES = ("ContainerResource", "External", "Object", "Pods", "Resource")
# Upstream's order of checks over the source fields, and the field each type expects.
SOURCE_FIELDS = ("object", "external", "pods", "resource", "containerResource")
EXPECTED = {"Object": "object", "Pods": "pods", "Resource": "resource", "External": "external",
            "ContainerResource": "containerResource"}
TARGET_TYPES = ("Utilization", "Value", "AverageValue")
POPULATE = "must populate information for the given metric source"


def _reference(ref: Obj, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for key in ("kind", "name"):
        value = ref.get(key) or ""
        errs += [required(f"{path}.{key}")] if not value else each(f"{path}.{key}", value,
                                                                   path_segment_name(value, False))
    return errs


def _identifier(metric: Obj, path: str) -> list[FieldError]:
    name = metric.get("name") or ""
    if not name:
        return [required(f"{path}.name", "must specify a metric name")]
    return each(f"{path}.name", name, path_segment_name(name, False))


def _target(target: Obj, path: str) -> list[FieldError]:
    kind = target.get("type") or ""
    errs = [] if kind else [required(f"{path}.type", "must specify a metric target type")]
    if kind not in TARGET_TYPES:
        errs.append(invalid(f"{path}.type", kind, "must be either Utilization, Value, or AverageValue"))
    for key in ("value", "averageValue"):
        raw = target.get(key)
        if raw is None:
            continue
        quantity = parse_quantity(raw)
        if quantity is not None and quantity.value <= 0:
            errs.append(invalid(f"{path}.{key}", GoText(go_quantity(raw)), "must be positive"))
    utilization = target.get("averageUtilization")
    if utilization is not None and utilization < 1:
        errs.append(invalid(f"{path}.averageUtilization", utilization, "must be greater than 0"))
    return errs


def _source(field: str, source: Obj, path: str) -> list[FieldError]:
    target = source.get("target") or {}
    value, average, utilization = (target.get(k) is not None for k in ("value", "averageValue", "averageUtilization"))
    errs: list[FieldError] = []
    if field == "object":
        errs += _reference(source.get("describedObject") or {}, f"{path}.describedObject")
    if field == "containerResource":
        name, container = source.get("name") or "", source.get("container") or ""
        errs += validate_resource_name(name, f"{path}.name") if name else [required(f"{path}.name",
                                                                            "must specify a resource name")]
        errs += validate_dns1123_label(container, f"{path}.container") if container else [
            required(f"{path}.container", "must specify a container")]
    elif field == "resource" and not source.get("name"):
        errs.append(required(f"{path}.name", "must specify a resource name"))
    if field in ("object", "external", "pods"):
        errs += _identifier(source.get("metric") or {}, f"{path}.metric")
    errs += _target(target, f"{path}.target")
    if field == "object" and not value and not average:
        errs.append(required(f"{path}.target.averageValue", "must set either a target value or averageValue"))
    elif field == "external":
        if not value and not average:
            errs.append(required(f"{path}.target.averageValue",
                                 "must set either a target value for metric or a per-pod target"))
        if value and average:
            errs.append(forbidden(f"{path}.target.value",
                                  "may not set both a target value for metric and a per-pod target"))
    elif field == "pods" and not average:
        errs.append(required(f"{path}.target.averageValue", "must specify a positive target averageValue"))
    elif field in ("resource", "containerResource"):
        if not utilization and not average:
            errs.append(required(f"{path}.target.averageUtilization",
                                 "must set either a target raw value or a target utilization"))
        if utilization and average:
            errs.append(forbidden(f"{path}.target.averageValue",
                                  "may not set both a target raw value and a target utilization"))
    return errs


def _metric(metric: Obj, path: str) -> list[FieldError]:
    kind = metric.get("type") or ""
    errs = [] if kind else [required(f"{path}.type", "must specify a metric source type")]
    if kind not in SOURCE_TYPES:
        errs.append(not_supported(f"{path}.type", kind, SOURCE_TYPES))
    present = [f for f in SOURCE_FIELDS if metric.get(f) is not None]
    if present:
        errs += _source(present[0], metric[present[0]], f"{path}.{present[0]}")
    expected = EXPECTED.get(kind)
    if expected is None:
        errs.append(not_supported(f"{path}.type", kind, SOURCE_TYPES))
    elif metric.get(expected) is None:
        errs.append(required(f"{path}.{expected}", POPULATE))
    if len(present) != 1:
        errs += [forbidden(f"{path}.{f}", "must populate the given metric source only") for f in present
                 if f != expected]
    return errs


def validate_metrics(metrics: list[Obj], min_replicas: int | None) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, metric in enumerate(metrics):
        errs += _metric(metric, f"spec.metrics[{i}]")
    if min_replicas == 0 and not any(m.get("type") in ("Object", "External") for m in metrics):
        errs.append(forbidden("spec.metrics", "must specify at least one Object or External metric to support "
                                              "scaling to zero replicas"))
    return errs
