"""The ReplicationController controller (upstream's replication manager): the ReplicaSet controller run over
ReplicationControllers, whose selector is a plain label map rather than a metav1.LabelSelector. Pods it creates
carry a `kind: ReplicationController` controller reference, so adoption, release and the garbage collector's
cascading deletion work as for ReplicaSets."""

from __future__ import annotations

from typing import Any

from mini_kube.machinery.refs import REPLICATIONCONTROLLERS

from .replicaset import ReplicaSetController


class ReplicationControllerController(ReplicaSetController):
    name = "replicationcontroller"
    resource = REPLICATIONCONTROLLERS
    kind = "ReplicationController"

    @staticmethod
    def selector_of(owner: dict[str, Any]) -> dict[str, Any] | None:
        """The map selector as a LabelSelector (an empty one selects nothing, as for ReplicaSets)."""
        selector = (owner.get("spec") or {}).get("selector")
        return {"matchLabels": selector} if selector else None
