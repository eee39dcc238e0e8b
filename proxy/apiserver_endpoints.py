"""The `default/kubernetes` Endpoints and EndpointSlice: the address Pods reach the API server at.

Upstream the API server publishes its advertise address (pkg/controlplane/reconcilers). mini-kube's API server
listens on loopback only, an address Endpoints validation refuses; kube-proxy relays it onto the cluster
network's gateway (the bridge address every Pod routes to), so that address, with the API server's port named
`https`, is what is published: the Endpoints (labelled `endpointslice.kubernetes.io/skip-mirror`, as upstream's
adapter writes it) and an EndpointSlice of the same name labelled `kubernetes.io/service-name=kubernetes`.
Written only when they differ from what is wanted.
"""

from __future__ import annotations

import contextlib
from typing import Any

from mini_kube.client import AlreadyExists, ApiClient, Conflict, NotFound
from mini_kube.machinery.refs import ENDPOINTS, ENDPOINTSLICES

NAMESPACE, NAME = "default", "kubernetes"
SKIP_MIRROR = "endpointslice.kubernetes.io/skip-mirror"
SERVICE_NAME = "kubernetes.io/service-name"


def wanted_endpoints(address: str, port: int) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Endpoints",
            "metadata": {"name": NAME, "namespace": NAMESPACE, "labels": {SKIP_MIRROR: "true"}},
            "subsets": [{"addresses": [{"ip": address}],
                         "ports": [{"name": "https", "port": port, "protocol": "TCP"}]}]}


def wanted_slice(address: str, port: int) -> dict[str, Any]:
    return {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"name": NAME, "namespace": NAMESPACE, "labels": {SERVICE_NAME: NAME}},
            "addressType": "IPv4",
            "endpoints": [{"addresses": [address], "conditions": {"ready": True}}],
            "ports": [{"name": "https", "port": port, "protocol": "TCP"}]}


def _endpoints_view(obj: dict[str, Any]) -> Any:
    return [([a.get("ip") for a in s.get("addresses") or ()],
             [(p.get("name"), p.get("port"), p.get("protocol")) for p in s.get("ports") or ()])
            for s in obj.get("subsets") or ()]


def _slice_view(obj: dict[str, Any]) -> Any:
    """What the proxy writes, ignoring fields the API server defaults."""
    return (obj.get("addressType"),
            [(e.get("addresses"), (e.get("conditions") or {}).get("ready")) for e in obj.get("endpoints") or ()],
            [(p.get("name"), p.get("port"), p.get("protocol")) for p in obj.get("ports") or ()])


async def _ensure(client: ApiClient, ref: Any, wanted: dict[str, Any], view: Any, fields: tuple[str, ...]) -> None:
    try:
        current = await client.get(ref, NAME, NAMESPACE)
    except NotFound:
        with contextlib.suppress(AlreadyExists):
            await client.create(ref, wanted, NAMESPACE)
        return
    labels = (current.get("metadata") or {}).get("labels") or {}
    if view(current) == view(wanted) and all(labels.get(k) == v for k, v in wanted["metadata"]["labels"].items()):
        return
    body = {**current, **{f: wanted[f] for f in fields}}
    body["metadata"] = {**current["metadata"], "labels": {**labels, **wanted["metadata"]["labels"]}}
    with contextlib.suppress(Conflict, NotFound):  # a concurrent writer: the next sync looks again
        await client.replace(ref, body, NAMESPACE)


async def publish(client: ApiClient, address: str, port: int) -> None:
    """Make the Endpoints and the EndpointSlice name `address:port`."""
    await _ensure(client, ENDPOINTS, wanted_endpoints(address, port), _endpoints_view, ("subsets",))
    await _ensure(client, ENDPOINTSLICES, wanted_slice(address, port), _slice_view,
                  ("addressType", "endpoints", "ports"))
