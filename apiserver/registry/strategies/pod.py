"""Pods: initial status (Pending + QoS class) and spec defaults (the service account is admission's)."""

from __future__ import annotations

from typing import Any

from ...resources import ResourceType
from ..strategy import Strategy, WriteContext


def qos_class(spec: dict[str, Any]) -> str:
    """Upstream's QoS classification from container requests and limits."""
    containers = list(spec.get("containers") or []) + list(spec.get("initContainers") or [])
    requests_seen = limits_seen = False
    guaranteed = True
    for container in containers:
        resources = container.get("resources") or {}
        requests = {k: v for k, v in (resources.get("requests") or {}).items() if k in ("cpu", "memory")}
        limits = {k: v for k, v in (resources.get("limits") or {}).items() if k in ("cpu", "memory")}
        requests_seen |= bool(requests)
        limits_seen |= bool(limits)
        if set(limits) != {"cpu", "memory"} or any(requests.get(k, limits[k]) != limits[k] for k in limits):
            guaranteed = False
    if not requests_seen and not limits_seen:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


class PodStrategy(Strategy):
    def initial_status(self, resource: ResourceType, obj: dict[str, Any]) -> dict[str, Any] | None:
        return {"phase": "Pending", "qosClass": qos_class(obj.get("spec") or {})}

    def grace_period(self, obj: dict[str, Any], requested: int | None) -> int | None:
        """The asked-for period, else spec.terminationGracePeriodSeconds; zero for a Pod no node runs (unbound)
        or one that has finished: those go at once, the others wait for their kubelet's final delete."""
        spec, phase = obj.get("spec") or {}, (obj.get("status") or {}).get("phase")
        period = requested if requested is not None else int(spec.get("terminationGracePeriodSeconds") or 0)
        if not spec.get("nodeName") or phase in ("Succeeded", "Failed"):
            return 0
        return period

    def default(self, ctx: WriteContext, obj: dict[str, Any]) -> None:
        super().default(ctx, obj)
        spec = obj.setdefault("spec", {})
        if not ctx.subresource:
            spec.setdefault("enableServiceLinks", True)
            spec.setdefault("priority", 0)
            spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
