"""EndpointSlice mirroring ("endpointslicemirroring"), as kube-controller-manager's
(pkg/controller/endpointslicemirroring): an Endpoints written by hand for a Service without a selector is
mirrored to EndpointSlices, so that clients of EndpointSlices (kube-proxy, DNS) see custom endpoints too.

Mirrored: an Endpoints whose Service exists and has no selector, unless it carries
`endpointslice.kubernetes.io/skip-mirror: "true"` or a leader-election annotation. Each set of ports and
address family gets one slice (`<name>-xxxxx`, labelled `kubernetes.io/service-name` and managed by
`endpointslicemirroring-controller.k8s.io`, owned by the Endpoints, with its labels and annotations), holding
at most 1000 addresses per subset; ready addresses are ready endpoints, notReadyAddresses not ready ones, and
addresses that are not IPs are skipped. Slices go when their Endpoints or Service does, or the Service gets a
selector; a slice someone else changes is put back.
"""

from __future__ import annotations

import contextlib
import ipaddress
from typing import Any

from mini_kube.client import AlreadyExists, NotFound
from mini_kube.machinery.meta import meta as object_meta
from mini_kube.machinery.refs import ENDPOINTS, ENDPOINTSLICES, SERVICES

from ..reconciler import Controller

SERVICE_NAME = "kubernetes.io/service-name"
MANAGED_BY = "endpointslice.kubernetes.io/managed-by"
MIRROR_MANAGER = "endpointslicemirroring-controller.k8s.io"
SKIP_MIRROR = "endpointslice.kubernetes.io/skip-mirror"
LEADER_ANNOTATION = "control-plane.alpha.kubernetes.io/leader"
NOT_COPIED = ("endpoints.kubernetes.io/last-change-trigger-time", "kubectl.kubernetes.io/last-applied-configuration")
MAX_PER_SUBSET = 1000
Obj = dict[str, Any]


def _address_type(ip: str) -> str | None:
    try:
        return "IPv4" if ipaddress.ip_address(ip).version == 4 else "IPv6"
    except ValueError:
        return None


def _slice_ports(ports: list[Obj]) -> list[Obj]:
    result = []
    for port in ports:
        entry = {"name": port.get("name", ""), "port": port.get("port"), "protocol": port.get("protocol", "TCP")}
        if port.get("appProtocol") is not None:
            entry["appProtocol"] = port["appProtocol"]
        result.append(entry)
    return result


def _endpoint(address: Obj, ready: bool) -> Obj:
    endpoint: Obj = {"addresses": [address.get("ip")], "conditions": {"ready": ready}}
    for key in ("hostname", "nodeName", "targetRef"):
        if address.get(key):
            endpoint[key] = address[key]
    return endpoint


def _port_key(address_type: str, ports: list[Obj]) -> tuple[Any, ...]:
    return address_type, tuple(sorted((p.get("name", ""), p.get("port"), p.get("protocol", "TCP"),
                                       p.get("appProtocol") or "") for p in ports))


def desired_slices(endpoints: Obj) -> dict[tuple[Any, ...], Obj]:
    """The slices' bodies (address type, ports, endpoints) by address type and ports."""
    wanted: dict[tuple[Any, ...], Obj] = {}
    for subset in endpoints.get("subsets") or ():
        ports = _slice_ports(subset.get("ports") or [])
        added = 0
        for addresses, ready in ((subset.get("addresses") or [], True), (subset.get("notReadyAddresses") or [], False)):
            for address in addresses:
                if added >= MAX_PER_SUBSET:
                    break
                kind = _address_type(address.get("ip") or "")
                if kind is None:
                    continue
                body = wanted.setdefault(_port_key(kind, ports), {"addressType": kind, "ports": ports, "endpoints": []})
                endpoint = _endpoint(address, ready)
                if endpoint not in body["endpoints"]:
                    body["endpoints"].append(endpoint)
                added += 1
    return wanted


def should_mirror(endpoints: Obj) -> bool:
    meta = object_meta(endpoints)
    return (meta.get("labels") or {}).get(SKIP_MIRROR) != "true" and \
        LEADER_ANNOTATION not in (meta.get("annotations") or {})


def _gone() -> Any:
    return contextlib.suppress(NotFound, AlreadyExists)


class EndpointSliceMirroringController(Controller):
    name = "endpointslicemirroring"

    def setup(self) -> None:
        self.endpoints = self.watch(ENDPOINTS)
        self.services = self.watch(SERVICES)
        self.slices = self.watch(ENDPOINTSLICES, enqueue=self._mirrored_for)
        self.slices.add_index("mirrored-for", lambda s: (k,) if (k := self._mirrored_for(s)) else ())

    @staticmethod
    def _mirrored_for(obj: Obj) -> str | None:
        labels = object_meta(obj).get("labels") or {}
        if labels.get(MANAGED_BY) != MIRROR_MANAGER or not labels.get(SERVICE_NAME):
            return None
        return f"{object_meta(obj).get('namespace')}/{labels[SERVICE_NAME]}"

    def _labels_and_annotations(self, endpoints: Obj) -> tuple[dict[str, str], dict[str, str]]:
        meta = object_meta(endpoints)
        labels = {**(meta.get("labels") or {}), SERVICE_NAME: meta["name"], MANAGED_BY: MIRROR_MANAGER}
        annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if k not in NOT_COPIED}
        return labels, annotations

    async def reconcile(self, key: Any) -> None:
        namespace, _, name = key.partition("/")
        existing = self.slices.by_index("mirrored-for", key)
        endpoints = self.endpoints.get(key)
        service = self.services.get(key)
        mirror = endpoints is not None and should_mirror(endpoints) and service is not None and \
            (service.get("spec") or {}).get("selector") is None
        wanted = desired_slices(endpoints) if mirror and endpoints is not None else {}
        by_key: dict[tuple[Any, ...], list[Obj]] = {}
        for current in existing:
            by_key.setdefault(_port_key(current.get("addressType", ""), current.get("ports") or []), []).append(current)
        for port_key, body in wanted.items():
            assert endpoints is not None
            await self._write(endpoints, body, by_key.pop(port_key, []), namespace)
        for stale in by_key.values():
            for old in stale:
                with _gone():
                    await self.client.delete(ENDPOINTSLICES, object_meta(old)["name"], namespace)

    async def _write(self, endpoints: Obj, body: Obj, current: list[Obj], namespace: str) -> None:
        """One slice for these ports: the first existing one updated if it differs, the others deleted."""
        meta = object_meta(endpoints)
        labels, annotations = self._labels_and_annotations(endpoints)
        owner = {"apiVersion": "v1", "kind": "Endpoints", "name": meta["name"], "uid": meta.get("uid"),
                 "controller": True, "blockOwnerDeletion": True}
        for extra in current[1:]:
            with _gone():
                await self.client.delete(ENDPOINTSLICES, object_meta(extra)["name"], namespace)
        metadata = {"labels": labels, **({"annotations": annotations} if annotations else {}), "ownerReferences": [owner]}
        if not current:
            with _gone():
                await self.client.create(ENDPOINTSLICES, {"metadata": {"generateName": f"{meta['name']}-", **metadata},
                                                          **body}, namespace)
            return
        first = current[0]
        first_meta = object_meta(first)
        if (first.get("endpoints") or []) == body["endpoints"] and (first.get("ports") or []) == body["ports"] and \
                (first_meta.get("labels") or {}) == labels and (first_meta.get("annotations") or {}) == annotations \
                and first_meta.get("ownerReferences") == [owner]:
            return
        await self.client.replace(ENDPOINTSLICES, {**first, **body, "metadata": {**first_meta, **metadata}},
                                  namespace)

