"""Pods: initial status (Pending + QoS class) and spec defaults (the service account is admission's)."""

from __future__ import annotations

import copy
from typing import Any

from mini_kube.machinery.quota.pods import qos_class

from ...errors import FieldError
from ...resources import ResourceType
from ...validation.pods import validate_ephemeral_containers_update
from ..strategy import Strategy, WriteContext

EPHEMERAL = "ephemeralcontainers"


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
            spec.setdefault("enableServiceLinks", True)  # priority and preemptionPolicy: Priority admission

    def prepare_for_update(self, ctx: WriteContext, new: dict[str, Any], old: dict[str, Any]) -> None:
        if ctx.subresource != EPHEMERAL:
            super().prepare_for_update(ctx, new, old)
            return
        # pods/ephemeralcontainers changes spec.ephemeralContainers only (dropNonEphemeralContainerUpdates)
        ephemeral = (new.get("spec") or {}).get("ephemeralContainers")
        managed = (new.get("metadata") or {}).get("managedFields")
        new.clear()
        new.update(copy.deepcopy(old))
        if managed is not None:
            new["metadata"]["managedFields"] = managed
        if ephemeral:
            new["spec"]["ephemeralContainers"] = ephemeral
        else:
            new["spec"].pop("ephemeralContainers", None)
        self.default(ctx, new)  # the new containers' defaults (the generic path defaults no subresource write)

    def validate_update(self, ctx: WriteContext, new: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
        if ctx.subresource != EPHEMERAL:
            return super().validate_update(ctx, new, old)
        return validate_ephemeral_containers_update(new, old)
