"""Nodes: upstream keeps the status a Node is created with (a kubelet registers its Node with capacity,
addresses, nodeInfo and conditions in one create)."""

from __future__ import annotations

from typing import Any

from ...resources import ResourceType
from ..strategy import Strategy


class NodeStrategy(Strategy):
    def initial_status(self, resource: ResourceType, obj: dict[str, Any]) -> dict[str, Any] | None:
        status = obj.get("status")
        return status if isinstance(status, dict) and status else None
