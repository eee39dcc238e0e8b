"""How the API server reaches the cluster: through a node's kubelet, whose address is the Node's InternalIP and
daemonEndpoints port and which is shown the bearer token of Secret kube-system/mini-kube-kubelet-api.

Besides its own API (logs, exec, proxy), a kubelet carries HTTP CONNECT into the cluster network (upstream's
`cluster` egress): the API server never dials a Pod or Service address itself, since those exist only in the
network namespace mini-kube makes for the cluster (kubelet/tunnel.py)."""

from __future__ import annotations

import base64
from dataclasses import dataclass

from . import errors
from .registry.reader import ObjectReader

TOKEN_SECRET = ("kube-system", "mini-kube-kubelet-api")


class Kubelet:
    """Where a node's kubelet listens and how to authenticate to it."""

    def __init__(self, url: str, token: str) -> None:
        self.url = url
        self.headers = {"Authorization": f"Bearer {token}"}
        self.proxy_headers = {"Proxy-Authorization": f"Bearer {token}"}


def _kubelet(objects: ObjectReader, node_name: str) -> Kubelet | None:
    node = objects.object("", "v1", "nodes", None, node_name)
    secret = objects.object("", "v1", "secrets", *TOKEN_SECRET)
    status = (node or {}).get("status") or {}
    address = next((a["address"] for a in status.get("addresses") or () if a.get("type") == "InternalIP"), None)
    port = ((status.get("daemonEndpoints") or {}).get("kubeletEndpoint") or {}).get("Port")
    token = ((secret or {}).get("data") or {}).get("token")
    if not (address and port and token):
        return None
    return Kubelet(f"http://{address}:{port}", base64.b64decode(token).decode())


def kubelet_of(objects: ObjectReader, node_name: str) -> Kubelet:
    """The kubelet of `node_name`, or 503 as upstream's `error dialing backend`."""
    kubelet = _kubelet(objects, node_name)
    if kubelet is None:
        raise errors.StatusError(503, "ServiceUnavailable",
                                 f'error dialing backend: no kubelet serves node "{node_name}"', {})
    return kubelet


def _ready(node: dict) -> bool:
    conditions = (node.get("status") or {}).get("conditions") or ()
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


@dataclass(frozen=True, slots=True)
class Tunnel:
    """An HTTP CONNECT proxy into the cluster network: a kubelet's URL and the headers it wants."""

    proxy: str
    headers: dict[str, str]


def tunnel(objects: ObjectReader, node_name: str | None = None) -> Tunnel | None:
    """The way into the cluster network: through `node_name`'s kubelet when it has one, else through the first
    Ready node's (by name); None when no kubelet serves any node."""
    names = [node_name] if node_name else []
    nodes = sorted(objects.objects("", "v1", "nodes"), key=lambda n: (not _ready(dict(n)),
                                                                        (n.get("metadata") or {}).get("name", "")))
    names += [(n.get("metadata") or {}).get("name", "") for n in nodes]
    for name in names:
        kubelet = _kubelet(objects, name) if name else None
        if kubelet is not None:
            return Tunnel(kubelet.url, kubelet.proxy_headers)
    return None
