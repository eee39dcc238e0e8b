"""The kubelet's admission of a Pod bound to its node, as upstream's predicate admit handler: a Pod whose host
ports conflict with those of a Pod the kubelet already runs is rejected (phase Failed, reason `NodePorts`,
`Pod was rejected: ...`) instead of started; the scheduler avoids this, but a Pod created with `nodeName` set
bypasses it."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from mini_kube.client import ApiClient, ApiError
from mini_kube.machinery.hostports import host_ports, ports_conflict
from mini_kube.machinery.refs import PODS

NODE_PORTS_MESSAGE = "Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports"


def refusal(pod: dict[str, Any], admitted: Iterable[dict[str, Any]]) -> tuple[str, str] | None:
    """(reason, message) when `pod` cannot run beside the `admitted` Pods, else None."""
    wanted = host_ports(pod)
    if wanted and ports_conflict(wanted, (p for other in admitted for p in host_ports(other))):
        return "NodePorts", NODE_PORTS_MESSAGE
    return None


async def reject(client: ApiClient, pod: dict[str, Any], reason: str, message: str) -> None:
    """Mark the Pod Failed with the rejection (kubelet's rejectPod)."""
    meta = pod["metadata"]
    status = {"phase": "Failed", "reason": reason, "message": f"Pod was rejected: {message}"}
    try:
        await client.patch(PODS, meta["name"], {"status": status}, meta["namespace"], subresource="status")
    except ApiError:  # gone, or the API server unreachable: the next event for the Pod tries again
        return
