"""PersistentVolumes and claims: the status a new one is served with.

Upstream clears a new volume's status, then marks it `Pending` (with the time of that phase) and a new claim's
status is defaulted to `Pending` when read back from storage; both are written after the status reset here.
"""

from __future__ import annotations

from typing import Any

from mini_kube.machinery.times import now_rfc3339

from ...resources import ResourceType
from ..strategy import Strategy


class PersistentVolumeStrategy(Strategy):
    def initial_status(self, resource: ResourceType, obj: dict[str, Any]) -> dict[str, Any] | None:
        return {"phase": "Pending", "lastPhaseTransitionTime": now_rfc3339()}


class PersistentVolumeClaimStrategy(Strategy):
    def initial_status(self, resource: ResourceType, obj: dict[str, Any]) -> dict[str, Any] | None:
        return {"phase": "Pending"}
