"""Whether a Node's name is free for this kubelet: a Node of that name whose kubelet still answers at the
address and port the Node records (status.addresses, daemonEndpoints) belongs to another kubelet, and a second
one must not take it over (upstream's kubelets share a name only by mistake; here it left a dead kubelet port in
the Node and broke logs and exec)."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any


class NodeNameTaken(RuntimeError):
    """Another live kubelet runs the Node of this name."""


def kubelet_endpoint(node: dict[str, Any]) -> tuple[str, int] | None:
    """The (address, port) the Node says its kubelet serves on."""
    status = node.get("status") or {}
    address = next((a.get("address") for a in status.get("addresses") or () if a.get("type") == "InternalIP"), None)
    port = (((status.get("daemonEndpoints") or {}).get("kubeletEndpoint") or {}).get("Port"))
    return (address, int(port)) if address and port else None


async def live_kubelet(node: dict[str, Any], own: tuple[str, int], timeout: float = 1.0) -> str | None:
    """`address:port` of another kubelet that answers for this Node, or None (none recorded, ours, or dead)."""
    endpoint = kubelet_endpoint(node)
    if endpoint is None or endpoint == own:
        return None
    try:
        _, writer = await asyncio.wait_for(asyncio.open_connection(*endpoint), timeout)
    except (OSError, TimeoutError):
        return None
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()
    return f"{endpoint[0]}:{endpoint[1]}"
