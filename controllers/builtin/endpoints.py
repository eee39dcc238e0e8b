"""Endpoints and EndpointSlices from each Service's selector and the Pods it selects.

For every Service with a selector: the selected Pods that have an IP and are not finished; a Pod is ready when
its Ready condition is True (or the Service publishes not-ready addresses), terminating when it is being
deleted. Target ports named in the Service resolve per Pod from its container ports. EndpointSlices carry the
`kubernetes.io/service-name` and managed-by labels, hold at most 100 endpoints, group endpoints with the same
ports, and are owned by the Service. An Endpoints is deleted with its Service; one written without a Service
is left alone. Both are updated as soon as a Pod or the Service changes; the
`default/kubernetes` Service (no selector) is left alone: kube-proxy publishes its endpoint (the API server
relayed on the cluster network's gateway; proxy/apiserver_endpoints.py).
"""

from __future__ import annotations

import contextlib
import hashlib
from typing import Any, TypeGuard

from mini_kube.client import AlreadyExists, NotFound
from mini_kube.client.informer import object_key
from mini_kube.machinery.meta import meta as object_meta
from mini_kube.machinery.refs import ENDPOINTS, ENDPOINTSLICES, PODS, SERVICES

from ..reconciler import Controller

SERVICE_NAME = "kubernetes.io/service-name"
MANAGED_BY = "endpointslice.kubernetes.io/managed-by"
SLICE_MANAGER = "endpointslice-controller.k8s.io"
MAX_PER_SLICE = 100


def selects(selector: dict[str, str], labels: dict[str, str] | None) -> bool:
    labels = labels or {}
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def pod_ready(pod: dict[str, Any]) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or ())


def resolve_port(service_port: dict[str, Any], pod: dict[str, Any]) -> int | None:
    """The Pod's port for a Service port: a number as is, a name looked up in the Pod's container ports."""
    target = service_port.get("targetPort", service_port.get("port"))
    if isinstance(target, int):
        return target
    if isinstance(target, str) and target.isdigit():
        return int(target)
    for container in (pod.get("spec") or {}).get("containers") or ():
        for port in container.get("ports") or ():
            if port.get("name") == target and port.get("protocol", "TCP") == service_port.get("protocol", "TCP"):
                return port.get("containerPort")
    return None


def endpoint_ports(service: dict[str, Any], pod: dict[str, Any]) -> tuple[tuple[str, int, str], ...]:
    """(name, port, protocol) of every Service port this Pod serves."""
    ports = []
    for port in (service.get("spec") or {}).get("ports") or ():
        number = resolve_port(port, pod)
        if number is not None:
            ports.append((port.get("name", ""), number, port.get("protocol", "TCP")))
    return tuple(ports)


def _pod_ip(pod: dict[str, Any]) -> str | None:
    status = pod.get("status") or {}
    if status.get("phase") in ("Succeeded", "Failed"):
        return None
    return status.get("podIP")


class _ServiceEndpointsController(Controller):
    """Shared watches: Services, and Pods mapped to the Services in their namespace that select them."""

    def setup(self) -> None:
        self.services = self.watch(SERVICES)
        self.pods = self.watch(PODS, enqueue=False)
        self.pods.add_handler(self._pod_changed)

    def _pod_changed(self, event: str, old: dict[str, Any] | None, new: dict[str, Any] | None) -> None:
        for pod in (old, new):
            if not pod:
                continue
            namespace = object_meta(pod).get("namespace")
            for service in self.services.list(namespace):
                if selects((service.get("spec") or {}).get("selector") or {}, object_meta(pod).get("labels")):
                    self.queue.add(object_key(service))

    def members(self, service: dict[str, Any]) -> list[dict[str, Any]]:
        """(pod, ip, ready, terminating, ports) for every Pod behind `service`."""
        spec = service.get("spec") or {}
        selector = spec.get("selector") or {}
        publish = bool(spec.get("publishNotReadyAddresses"))
        found = []
        for pod in self.pods.list(object_meta(service).get("namespace")):
            ip = _pod_ip(pod)
            if not ip or not selects(selector, object_meta(pod).get("labels")):
                continue
            terminating = bool(object_meta(pod).get("deletionTimestamp"))
            found.append({"pod": pod, "ip": ip, "ready": (pod_ready(pod) or publish) and not terminating,
                          "serving": pod_ready(pod) or publish, "terminating": terminating,
                          "ports": endpoint_ports(service, pod)})
        return sorted(found, key=lambda m: (m["ip"], object_meta(m["pod"]).get("name", "")))

    def _managed(self, service: dict[str, Any] | None) -> TypeGuard[dict[str, Any]]:
        if service is None:
            return False
        spec = service.get("spec") or {}
        return bool(spec.get("selector")) and spec.get("type") != "ExternalName"


def _target_ref(pod: dict[str, Any]) -> dict[str, Any]:
    meta = object_meta(pod)
    return {"kind": "Pod", "namespace": meta.get("namespace"), "name": meta.get("name"), "uid": meta.get("uid")}


class EndpointsController(_ServiceEndpointsController):
    """The core/v1 Endpoints of every Service with a selector (named like the Service)."""

    name = "endpoint"

    def setup(self) -> None:
        super().setup()
        self.endpoints = self.watch(ENDPOINTS, enqueue=False)
        self.endpoints.add_handler(self._endpoints_deleted)

    def _endpoints_deleted(self, event: str, old: dict[str, Any] | None, new: dict[str, Any] | None) -> None:
        """A deleted Endpoints is made again if its Service wants one. Only deletions count, as upstream's: an
        Endpoints someone writes without a Service (mirrored to EndpointSlices) is theirs and stays."""
        if event == "delete" and old:
            self.queue.add(object_key(old))

    def desired(self, service: dict[str, Any]) -> list[dict[str, Any]]:
        groups: dict[tuple[tuple[str, int, str], ...], dict[str, list[dict[str, Any]]]] = {}
        for member in self.members(service):
            if member["terminating"] or not member["ports"]:
                continue
            address = {"ip": member["ip"], "targetRef": _target_ref(member["pod"])}
            node = (member["pod"].get("spec") or {}).get("nodeName")
            if node:
                address["nodeName"] = node
            group = groups.setdefault(member["ports"], {"addresses": [], "notReadyAddresses": []})
            group["addresses" if member["ready"] else "notReadyAddresses"].append(address)
        subsets = []
        for ports, group in groups.items():
            subset: dict[str, Any] = {k: v for k, v in group.items() if v}
            subset["ports"] = [{"name": n, "port": p, "protocol": proto} if n else {"port": p, "protocol": proto}
                               for n, p, proto in ports]
            subsets.append(subset)
        return subsets

    async def reconcile(self, key: Any) -> None:
        service = self.services.get(key)
        current = self.endpoints.get(key)
        namespace, _, name = key.partition("/")
        if not self._managed(service):
            if service is None and current is not None:
                with _gone():
                    await self.client.delete(ENDPOINTS, name, namespace)
            return
        subsets = self.desired(service)
        labels = dict(object_meta(service).get("labels") or {})
        if current is None:
            with _gone():
                await self.client.create(ENDPOINTS, {"metadata": {"name": name, "labels": labels},
                                                     **({"subsets": subsets} if subsets else {})}, namespace)
        elif (current.get("subsets") or []) != subsets or (object_meta(current).get("labels") or {}) != labels:
            body = {**current, "subsets": subsets or None, "metadata": {**object_meta(current), "labels": labels}}
            await self.client.replace(ENDPOINTS, body, namespace)


def _gone() -> Any:
    """Ignore that the object was already created or deleted (by an earlier run, or another process)."""
    return contextlib.suppress(NotFound, AlreadyExists)


class EndpointSliceController(_ServiceEndpointsController):
    """discovery.k8s.io/v1 EndpointSlices of every Service with a selector."""

    name = "endpointslice"

    def setup(self) -> None:
        super().setup()
        self.slices = self.watch(ENDPOINTSLICES, enqueue=self._slice_owner)
        self.slices.add_index("service", lambda s: (f"{object_meta(s).get('namespace')}/"
                                                    f"{(object_meta(s).get('labels') or {}).get(SERVICE_NAME)}",)
                              if (object_meta(s).get("labels") or {}).get(MANAGED_BY) == SLICE_MANAGER else ())

    @staticmethod
    def _slice_owner(obj: dict[str, Any]) -> str | None:
        labels = object_meta(obj).get("labels") or {}
        if labels.get(MANAGED_BY) != SLICE_MANAGER or not labels.get(SERVICE_NAME):
            return None
        return f"{object_meta(obj).get('namespace')}/{labels[SERVICE_NAME]}"

    def desired(self, service: dict[str, Any]) -> list[dict[str, Any]]:
        """The slices' bodies (endpoints and ports), without names."""
        groups: dict[tuple[tuple[str, int, str], ...], list[dict[str, Any]]] = {}
        for member in self.members(service):
            pod = member["pod"]
            endpoint: dict[str, Any] = {"addresses": [member["ip"]], "conditions": {
                "ready": member["ready"], "serving": member["serving"], "terminating": member["terminating"]},
                "targetRef": _target_ref(pod)}
            pod_spec = pod.get("spec") or {}
            if pod_spec.get("hostname") and pod_spec.get("subdomain") == object_meta(service).get("name"):
                endpoint["hostname"] = pod_spec["hostname"]  # <hostname>.<subdomain> names in DNS
            node = pod_spec.get("nodeName")
            if node:
                endpoint["nodeName"] = node
            groups.setdefault(member["ports"], []).append(endpoint)
        slices = []
        for ports, endpoints in groups.items():
            port_list = [{"name": n, "port": p, "protocol": proto} for n, p, proto in ports]
            for start in range(0, len(endpoints), MAX_PER_SLICE):
                slices.append({"endpoints": endpoints[start:start + MAX_PER_SLICE], "ports": port_list})
        return slices

    async def reconcile(self, key: Any) -> None:
        service = self.services.get(key)
        namespace, _, name = key.partition("/")
        existing = self.slices.by_index("service", key)
        if not self._managed(service):
            for old in existing:
                with _gone():
                    await self.client.delete(ENDPOINTSLICES, object_meta(old)["name"], namespace)
            return
        wanted = self.desired(service) or [{"endpoints": [], "ports": []}]  # upstream keeps an empty slice
        meta = object_meta(service)
        owner = {"apiVersion": "v1", "kind": "Service", "name": name, "uid": meta.get("uid"), "controller": True,
                 "blockOwnerDeletion": True}
        labels = {**(meta.get("labels") or {}), SERVICE_NAME: name, MANAGED_BY: SLICE_MANAGER}
        for index, body in enumerate(wanted):
            current = existing[index] if index < len(existing) else None
            if current is None:
                uid = meta.get("uid", "")
                slice_name = f"{name}-{hashlib.sha256(f'{uid}{index}'.encode()).hexdigest()[:5]}"
                with _gone():
                    await self.client.create(ENDPOINTSLICES, {"metadata": {"name": slice_name, "labels": labels,
                                                                   "ownerReferences": [owner]},
                                                      "addressType": "IPv4", **body}, namespace)
            elif (current.get("endpoints") or []) != body["endpoints"] or \
                    (current.get("ports") or []) != body["ports"] or (object_meta(current).get("labels") or {}) != labels:
                await self.client.replace(ENDPOINTSLICES, {**current, **body, "metadata": {**object_meta(current), "labels": labels}},
                                          namespace)
        for extra in existing[len(wanted):]:
            with _gone():
                await self.client.delete(ENDPOINTSLICES, object_meta(extra)["name"], namespace)
