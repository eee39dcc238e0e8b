"""Row cells for controllers: ReplicaSet, Deployment, DaemonSet, StatefulSet, Job, CronJob, HPA, PDB, ..."""

from __future__ import annotations

from typing import Any

from mini_kube.apiserver.printers.formatting import (
    NONE,
    UNSET,
    bool_text,
    container_cells,
    dig,
    format_labels,
    format_selector,
    int_or_string,
)
from mini_kube.apiserver.printers.humanize import elapsed, since
from mini_kube.machinery.labels import selector_string
from mini_kube.machinery.quantity import canonical

Obj = dict[str, Any]


def _name(obj: Obj) -> str:
    return dig(obj, "metadata", "name", default="")


def _age(obj: Obj, now: float) -> str:
    return since(dig(obj, "metadata", "creationTimestamp"), now)


def _replicas(spec: Obj) -> int:
    """spec.replicas, which defaulting sets to 1 when omitted."""
    value = spec.get("replicas")
    return 1 if value is None else value


def _template_cells(template: Obj | None) -> tuple[str, str]:
    return container_cells(dig(template, "spec", "containers"))


def _replica_cells(obj: Obj, now: float, selector_text: str) -> list:
    """NAME, DESIRED, CURRENT, READY, AGE, CONTAINERS, IMAGES, SELECTOR of a replicated workload."""
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    names, images = _template_cells(spec.get("template"))
    return [_name(obj), _replicas(spec), status.get("replicas") or 0, status.get("readyReplicas") or 0,
            _age(obj, now), names, images, selector_text]


def replication_controller(obj: Obj, now: float) -> list:
    """A ReplicationController's selector is a plain label map."""
    return _replica_cells(obj, now, format_labels((obj.get("spec") or {}).get("selector")))


def scale(obj: Obj, now: float) -> list:
    """A Scale subresource: desired (spec) and available (status) replicas."""
    return [_name(obj), (obj.get("spec") or {}).get("replicas") or 0, (obj.get("status") or {}).get("replicas") or 0,
            _age(obj, now)]


def replica_set(obj: Obj, now: float) -> list:
    """A ReplicaSet's selector is a metav1.LabelSelector."""
    return _replica_cells(obj, now, format_selector((obj.get("spec") or {}).get("selector")))


def deployment(obj: Obj, now: float) -> list:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    names, images = _template_cells(spec.get("template"))
    selector = selector_string(spec.get("selector"))
    return [_name(obj), f"{status.get('readyReplicas') or 0}/{_replicas(spec)}", status.get("updatedReplicas") or 0,
            status.get("availableReplicas") or 0, _age(obj, now), names, images,
            "<invalid>" if selector is None else selector]


def daemon_set(obj: Obj, now: float) -> list:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    names, images = _template_cells(spec.get("template"))
    counts = [status.get(key) or 0 for key in ("desiredNumberScheduled", "currentNumberScheduled", "numberReady",
                                                "updatedNumberScheduled", "numberAvailable")]
    return [_name(obj), *counts, format_labels(dig(spec, "template", "spec", "nodeSelector")), _age(obj, now),
            names, images, format_selector(spec.get("selector"))]


def stateful_set(obj: Obj, now: float) -> list:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    names, images = _template_cells(spec.get("template"))
    return [_name(obj), f"{status.get('readyReplicas') or 0}/{_replicas(spec)}", _age(obj, now), names, images]


def controller_revision(obj: Obj, now: float) -> list:
    controller = NONE
    for ref in dig(obj, "metadata", "ownerReferences", default=()):
        if ref.get("controller"):
            group = (ref.get("apiVersion") or "").rpartition("/")[0]
            kind = ref.get("kind") or ""
            group_kind = f"{kind}.{group}" if group else kind
            controller = f"{group_kind.lower()}/{ref.get('name', '')}" if group_kind else ref.get("name", "")
            break
    return [_name(obj), controller, obj.get("revision") or 0, _age(obj, now)]


def _job_condition(status: Obj, kind: str) -> bool:
    for condition in status.get("conditions") or ():
        if condition.get("type") == kind:
            return condition.get("status") == "True"
    return False


def _job_status(obj: Obj, status: Obj) -> str:
    if _job_condition(status, "Complete"):
        return "Complete"
    if _job_condition(status, "Failed"):
        return "Failed"
    if dig(obj, "metadata", "deletionTimestamp"):
        return "Terminating"
    if _job_condition(status, "Suspended"):
        return "Suspended"
    if _job_condition(status, "FailureTarget"):
        return "FailureTarget"
    return "Running"


def job(obj: Obj, now: float) -> list:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    succeeded = status.get("succeeded") or 0
    if spec.get("completions") is not None:
        completions = f"{succeeded}/{spec['completions']}"
    elif (spec.get("parallelism") or 0) > 1:
        completions = f"{succeeded}/1 of {spec['parallelism']}"
    else:
        completions = f"{succeeded}/1"
    names, images = _template_cells(spec.get("template"))
    return [_name(obj), _job_status(obj, status), completions,
            elapsed(status.get("startTime"), status.get("completionTime"), now), _age(obj, now), names, images,
            format_selector(spec.get("selector"))]


def cron_job(obj: Obj, now: float) -> list:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    job_spec = dig(spec, "jobTemplate", "spec", default={})
    names, images = _template_cells(job_spec.get("template"))
    last = status.get("lastScheduleTime")
    suspend = spec.get("suspend")
    return [_name(obj), spec.get("schedule", ""), spec.get("timeZone") or NONE,
            bool_text(False if suspend is None else suspend), len(status.get("active") or ()),
            since(last, now) if last else NONE, _age(obj, now), names, images,
            format_selector(job_spec.get("selector"))]


def pod_disruption_budget(obj: Obj, now: float) -> list:
    spec = obj.get("spec") or {}
    low, high = spec.get("minAvailable"), spec.get("maxUnavailable")
    return [_name(obj), "N/A" if low is None else int_or_string(low), "N/A" if high is None else int_or_string(high),
            dig(obj, "status", "disruptionsAllowed", default=0), _age(obj, now)]


def _v1_metrics(obj: Obj) -> tuple[list[Obj], list[Obj]]:
    """autoscaling/v1 fields as v2 metrics (specs, statuses), as the conversion to the internal type does."""
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    specs, statuses = [], []
    if spec.get("targetCPUUtilizationPercentage") is not None:
        specs.append({"type": "Resource", "resource": {"name": "cpu", "target": {
            "type": "Utilization", "averageUtilization": spec["targetCPUUtilizationPercentage"]}}})
    if status.get("currentCPUUtilizationPercentage") is not None:
        statuses.append({"type": "Resource", "resource": {"name": "cpu", "current": {
            "averageUtilization": status["currentCPUUtilizationPercentage"]}}})
    return specs, statuses


def _source_text(kind: str, spec: Obj, status: Obj | None) -> str:
    """One metric as `current/target`, with the resource name or `(avg)` where upstream adds them."""
    key = {"External": "external", "Pods": "pods", "Object": "object", "Resource": "resource",
           "ContainerResource": "containerResource"}[kind]
    source = spec.get(key) or {}
    target = source.get("target") or {}
    observed = status is not None and status.get(key) is not None
    current = dig(status, key, "current", default={}) if observed else {}
    unknown = "<unknown>"
    if kind == "Pods":
        now_value = canonical(current.get("averageValue")) if observed else unknown
        return f"{now_value}/{canonical(target.get('averageValue'))}"
    if kind in ("External", "Object"):
        if target.get("averageValue") is not None:
            now_value = canonical(current["averageValue"]) if current.get("averageValue") is not None else unknown
            return f"{now_value}/{canonical(target['averageValue'])} (avg)"
        now_value = canonical(current.get("value")) if observed else unknown
        return f"{now_value}/{canonical(target.get('value'))}"
    name = source.get("name", "")
    if target.get("averageValue") is not None:
        now_value = canonical(current.get("averageValue")) if observed else unknown
        return f"{name}: {now_value}/{canonical(target['averageValue'])}"
    used, wanted = current.get("averageUtilization"), target.get("averageUtilization")
    return f"{name}: {unknown if used is None else f'{used}%'}/{'<auto>' if wanted is None else f'{wanted}%'}"


def _hpa_metrics(specs: list[Obj], statuses: list[Obj]) -> str:
    if not specs:
        return NONE
    items = []
    for index, spec in enumerate(specs):
        kind = spec.get("type")
        status = statuses[index] if index < len(statuses) else None
        if kind in ("External", "Pods", "Object", "Resource", "ContainerResource"):
            items.append(_source_text(kind, spec, status))
        else:
            items.append("<unknown type>")
    if len(items) > 2:
        return f"{', '.join(items[:2])} + {len(items) - 2} more..."
    return ", ".join(items)


def horizontal_pod_autoscaler(obj: Obj, now: float) -> list:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    if "metrics" in spec or "currentMetrics" in status:
        specs, statuses = spec.get("metrics") or [], status.get("currentMetrics") or []
    else:
        specs, statuses = _v1_metrics(obj)
    target = spec.get("scaleTargetRef") or {}
    minimum = spec.get("minReplicas")
    return [_name(obj), f"{target.get('kind', '')}/{target.get('name', '')}", _hpa_metrics(specs, statuses),
            UNSET if minimum is None else str(minimum), spec.get("maxReplicas") or 0,
            status.get("currentReplicas") or 0, _age(obj, now)]
