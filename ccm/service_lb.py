"""The service controller of the cloud-controller-manager: a LoadBalancer Service (with no loadBalancerClass,
or ours) gets a load balancer of the fake cloud and `status.loadBalancer.ingress` (its address, and the name
`<svc>.<ns>.lb.mini-kube.local` that the cluster DNS resolves), as upstream's service controller does with a
cloud: the `service.kubernetes.io/load-balancer-cleanup` finalizer before anything is made, the
EnsuringLoadBalancer/EnsuredLoadBalancer, DeletingLoadBalancer/DeletedLoadBalancer and UpdatedLoadBalancer
events, SyncLoadBalancerFailed when the cloud refuses. Backends are the Ready nodes without the
`node.kubernetes.io/exclude-from-external-load-balancers` label or the autoscaler's to-be-deleted taint.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from mini_kube.client import ApiClient, Conflict, NotFound
from mini_kube.client.informer import SharedInformerFactory
from mini_kube.controllers.reconciler import Controller, Result
from mini_kube.machinery.refs import NODES, SERVICES

from .cloud import CloudError, FakeCloud, LBPort, LBSpec

log = logging.getLogger("mini-kube.ccm.service")
FINALIZER = "service.kubernetes.io/load-balancer-cleanup"
LB_CLASS = "mini-kube.dev/lb"
LB_DOMAIN = "lb.mini-kube.local"
EXCLUDE_LABEL = "node.kubernetes.io/exclude-from-external-load-balancers"
TO_BE_DELETED_TAINT = "ToBeDeletedByClusterAutoscaler"
RETRY_AFTER = 5.0
SOURCE_RANGES_ANNOTATION = "service.beta.kubernetes.io/load-balancer-source-ranges"
PoolSource = Callable[[], Awaitable[list[str]]]


def wants_load_balancer(svc: dict[str, Any]) -> bool:
    spec = svc.get("spec") or {}
    return spec.get("type") == "LoadBalancer" and spec.get("loadBalancerClass") in (None, LB_CLASS)


def load_balancer_name(svc: dict[str, Any]) -> str:
    """Upstream's default cloud name: "a" and the Service's uid without dashes, at most 32 characters."""
    return ("a" + (svc.get("metadata") or {}).get("uid", "").replace("-", ""))[:32]


def lb_hostname(name: str, namespace: str) -> str:
    return f"{name}.{namespace}.{LB_DOMAIN}"


def internal_ip(node: dict[str, Any]) -> str:
    addresses = (node.get("status") or {}).get("addresses") or ()
    return next((a["address"] for a in addresses if a.get("type") == "InternalIP" and a.get("address")), "")


def node_eligible(node: dict[str, Any]) -> bool:
    """Upstream's predicate: not excluded by label or autoscaler taint, and Ready=True."""
    if EXCLUDE_LABEL in ((node.get("metadata") or {}).get("labels") or {}):
        return False
    if any(t.get("key") == TO_BE_DELETED_TAINT for t in (node.get("spec") or {}).get("taints") or ()):
        return False
    conditions = (node.get("status") or {}).get("conditions") or ()
    ready = next((c for c in conditions if c.get("type") == "Ready"), None)
    return ready is not None and ready.get("status") == "True"


def _node_view(node: dict[str, Any] | None) -> tuple[Any, ...]:
    """What of a node matters to load balancers."""
    return (node_eligible(node), internal_ip(node)) if node else ()


class ServiceLBController(Controller):
    name = "service"  # events come from "service-controller", as upstream's

    def __init__(self, client: ApiClient, informers: SharedInformerFactory | None = None, *,
                 cloud: FakeCloud, pool_source: PoolSource | None = None, **kwargs: Any) -> None:
        super().__init__(client, informers, **kwargs)
        self.cloud = cloud
        self.pool_source = pool_source  # asked for the address pool while the cloud has none
        self._names: dict[str, str] = {}  # service key -> load balancer name (for Services deleted at once)

    def setup(self) -> None:
        self.services = self.watch(SERVICES)
        self.nodes = self.watch(NODES, enqueue=False)
        self.nodes.add_handler(self._node_changed)

    def _node_changed(self, event: str, old: dict[str, Any] | None, new: dict[str, Any] | None) -> None:
        if event == "update" and _node_view(old) == _node_view(new):
            return
        for key in self._names:
            self.queue.add(key)

    def _backends(self) -> tuple[str, ...]:
        return tuple(sorted(ip for n in self.nodes.list() if node_eligible(n) and (ip := internal_ip(n))))

    async def _event(self, svc: dict[str, Any], type_: str, reason: str, message: str) -> None:
        self.events.event({**svc, "kind": "Service", "apiVersion": "v1"}, type_, reason, message)

    async def _set_finalizer(self, svc: dict[str, Any], present: bool) -> None:
        meta = svc["metadata"]
        finalizers = [f for f in meta.get("finalizers") or () if f != FINALIZER] + ([FINALIZER] if present else [])
        patch = {"metadata": {"finalizers": finalizers or None, "resourceVersion": meta["resourceVersion"]}}
        updated = await self.client.patch(SERVICES, meta["name"], patch, meta["namespace"])
        meta["resourceVersion"] = updated["metadata"]["resourceVersion"]

    async def _set_ingress(self, svc: dict[str, Any], ingress: list[dict[str, Any]]) -> None:
        current = ((svc.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
        if current != ingress:
            await self.client.patch(SERVICES, svc["metadata"]["name"],
                                    {"status": {"loadBalancer": {"ingress": ingress or None}}},
                                    svc["metadata"]["namespace"], subresource="status")

    async def reconcile(self, key: Any) -> Result | None:
        svc = self.services.get(key)
        if svc is None:  # gone without our finalizer (or after it): nothing may be left behind
            name = self._names.pop(key, None)
            if name:
                await self.cloud.ensure_deleted(name)
            return None
        meta = svc["metadata"]
        name = load_balancer_name(svc)
        previous = self._names.get(key)
        if previous and previous != name:  # deleted and created again meanwhile
            await self.cloud.ensure_deleted(previous)
            self._names.pop(key)
        try:
            if wants_load_balancer(svc) and not meta.get("deletionTimestamp"):
                return await self._ensure(key, svc, name)
            if FINALIZER in (meta.get("finalizers") or ()) or self.cloud.get_load_balancer(name) is not None:
                await self._delete(key, svc, name)
        except NotFound:
            return None
        except Conflict:
            return Result(requeue=True)
        return None

    async def _delete(self, key: str, svc: dict[str, Any], name: str) -> None:
        if self.cloud.get_load_balancer(name) is not None:
            await self._event(svc, "Normal", "DeletingLoadBalancer", "Deleting load balancer")
            await self.cloud.ensure_deleted(name)
        self._names.pop(key, None)
        if FINALIZER in (svc["metadata"].get("finalizers") or ()):
            await self._set_finalizer(svc, False)
        await self._event(svc, "Normal", "DeletedLoadBalancer", "Deleted load balancer")
        if not svc["metadata"].get("deletionTimestamp"):
            await self._set_ingress(svc, [])

    def _desired(self, svc: dict[str, Any], requested: str) -> LBSpec:
        spec = svc.get("spec") or {}
        ports = tuple(LBPort(p.get("protocol") or "TCP", int(p["port"]), int(p.get("nodePort") or 0))
                      for p in spec.get("ports") or ())
        local = spec.get("externalTrafficPolicy") == "Local"
        meta = svc["metadata"]
        ranges = spec.get("loadBalancerSourceRanges") or [
            r.strip() for r in ((meta.get("annotations") or {}).get(SOURCE_RANGES_ANNOTATION) or "").split(",")
            if r.strip()]
        return LBSpec(ports, self._backends(), int(spec.get("healthCheckNodePort") or 0) if local else 0, requested,
                      f"{meta['namespace']}/{meta['name']}", tuple(ranges),
                      spec.get("sessionAffinity") == "ClientIP")

    async def _pool(self) -> None:
        if not self.cloud.pool and self.pool_source is not None:
            self.cloud.pool = await self.pool_source()

    async def _ensure(self, key: str, svc: dict[str, Any], name: str) -> Result | None:
        meta, spec = svc["metadata"], svc.get("spec") or {}
        requested = spec.get("loadBalancerIP") or ""
        status_ips = [i.get("ip") for i in ((svc.get("status") or {}).get("loadBalancer") or {}).get("ingress") or ()]
        desired = self._desired(svc, requested)
        if any(not p.node_port for p in desired.ports):
            await self._event(svc, "Warning", "SyncLoadBalancerFailed", "Error syncing load balancer: failed to "
                              "ensure load balancer: this cloud's load balancers send traffic to node ports, and "
                              "the Service has none (spec.allocateLoadBalancerNodePorts is false)")
            return Result(requeue_after=RETRY_AFTER * 12)
        current = self.cloud.get_load_balancer(name)
        finalized = FINALIZER in (meta.get("finalizers") or ())
        if current is not None and finalized and (not requested or current.ip == requested):
            same = dataclasses.replace(current.spec, requested_ip="", nodes=()) == \
                dataclasses.replace(desired, requested_ip="", nodes=())
            if same and current.spec.nodes == desired.nodes:
                await self._set_ingress(svc, self._ingress(svc, current.ip))
                return None
            if same:  # only the nodes changed
                await self.cloud.ensure_load_balancer(name, dataclasses.replace(desired, requested_ip=current.ip))
                if desired.nodes:
                    await self._event(svc, "Normal", "UpdatedLoadBalancer", "Updated load balancer with new hosts")
                else:
                    await self._event(svc, "Warning", "UnAvailableLoadBalancer",
                                      "There are no available nodes for LoadBalancer")
                return None
        await self._event(svc, "Normal", "EnsuringLoadBalancer", "Ensuring load balancer")
        if not finalized:
            await self._set_finalizer(svc, True)
        if not desired.nodes:
            await self._event(svc, "Warning", "UnAvailableLoadBalancer", "There are no available nodes for LoadBalancer")
        try:
            await self._pool()
            # a restarted manager keeps the address the Service already shows, when it is still free
            keep = current.ip if current is not None else next((ip for ip in status_ips if ip in self.cloud.pool), "")
            try:
                lb = await self.cloud.ensure_load_balancer(name, dataclasses.replace(desired,
                                                                                     requested_ip=requested or keep))
            except CloudError:
                if requested or not keep:
                    raise
                lb = await self.cloud.ensure_load_balancer(name, desired)
        except CloudError as exc:
            await self._event(svc, "Warning", "SyncLoadBalancerFailed",
                              f"Error syncing load balancer: failed to ensure load balancer: {exc}")
            return Result(requeue_after=RETRY_AFTER)
        self._names[key] = name
        await self._event(svc, "Normal", "EnsuredLoadBalancer", "Ensured load balancer")
        await self._set_ingress(svc, self._ingress(svc, lb.ip))
        return None

    @staticmethod
    def _ingress(svc: dict[str, Any], ip: str) -> list[dict[str, Any]]:
        meta = svc["metadata"]
        return [{"ip": ip, "hostname": lb_hostname(meta["name"], meta["namespace"]), "ipMode": "VIP"}]
