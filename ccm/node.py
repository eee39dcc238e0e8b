"""The cloud node controllers of the cloud-controller-manager.

- `cloud-node-controller`: a Node registered with the `node.cloudprovider.kubernetes.io/uninitialized` taint
  (what a kubelet with `--cloud-provider=external` does) gets what the cloud knows of its machine: providerID
  `mini-kube://<node>`, its addresses, the instance-type, zone and region labels; then the taint is removed.
  Initialised nodes keep their addresses in step with the cloud's.
- `cloud-node-lifecycle-controller`: a Node that is not Ready and whose machine the cloud no longer has is
  deleted (event DeletingNode); a stopped machine's Node gets the `node.cloudprovider.kubernetes.io/shutdown`
  taint, removed again once it is Ready.
"""

from __future__ import annotations

from typing import Any

from mini_kube.client import ApiClient, Conflict, NotFound
from mini_kube.client.informer import SharedInformerFactory
from mini_kube.controllers.reconciler import Controller, Result
from mini_kube.machinery.refs import NODES

from .cloud import FakeCloud, Instance

UNINITIALIZED = "node.cloudprovider.kubernetes.io/uninitialized"
SHUTDOWN = "node.cloudprovider.kubernetes.io/shutdown"
PROVIDED_IP = "alpha.kubernetes.io/provided-node-ip"
ADDRESS_SYNC = 300.0  # upstream's node status update frequency for addresses
RETRY_AFTER = 5.0


def _taints(node: dict[str, Any]) -> list[dict[str, Any]]:
    return list((node.get("spec") or {}).get("taints") or ())


def _ready(node: dict[str, Any]) -> bool:
    conditions = (node.get("status") or {}).get("conditions") or ()
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def _address_set(addresses: list[dict[str, str]] | None) -> set[tuple[str, str]]:
    return {(a.get("type", ""), a.get("address", "")) for a in addresses or ()}


def cloud_addresses(node: dict[str, Any], instance: Instance) -> list[dict[str, str]] | None:
    """The node's addresses as the cloud has them (with the kubelet's provided IP and the Hostname kept), or
    None when the cloud knows no addresses of its own for the machine (one it adopted): the node's stand."""
    if not instance.addresses:
        return None
    meta = node.get("metadata") or {}
    own = list((node.get("status") or {}).get("addresses") or ())
    addresses = list(instance.addresses)
    provided = (meta.get("annotations") or {}).get(PROVIDED_IP)
    if provided and not any(a.get("address") == provided for a in addresses):
        addresses.insert(0, {"type": "InternalIP", "address": provided})
    hostname = next((a for a in own if a.get("type") == "Hostname"), {"type": "Hostname", "address": meta["name"]})
    return [*addresses, hostname]


class CloudNodeController(Controller):
    name = "cloud-node"

    def __init__(self, client: ApiClient, informers: SharedInformerFactory | None = None, *, cloud: FakeCloud,
                 **kwargs: Any) -> None:
        super().__init__(client, informers, **kwargs)
        self.cloud = cloud

    def setup(self) -> None:
        self.nodes = self.watch(NODES)

    async def reconcile(self, key: Any) -> Result | None:
        node = self.nodes.get(key)
        if node is None:
            return None
        instance = self.cloud.instance(key)
        if instance is None:  # the machine is unknown: the lifecycle controller decides
            return Result(requeue_after=RETRY_AFTER)
        try:
            addresses = cloud_addresses(node, instance)
            if addresses is not None and \
                    _address_set((node.get("status") or {}).get("addresses")) != _address_set(addresses):
                await self.client.patch(NODES, key, {"metadata": {"resourceVersion": node["metadata"]["resourceVersion"]},
                                                     "status": {"addresses": addresses}}, subresource="status")
                return Result(requeue=True)  # the taint goes once the addresses are in
            if any(t.get("key") == UNINITIALIZED for t in _taints(node)):
                await self._initialize(node, instance)
        except NotFound:
            return None
        except Conflict:
            return Result(requeue=True)
        return Result(requeue_after=ADDRESS_SYNC)

    async def _initialize(self, node: dict[str, Any], instance: Instance) -> None:
        meta = node["metadata"]
        labels = {"node.kubernetes.io/instance-type": instance.instance_type,
                  "beta.kubernetes.io/instance-type": instance.instance_type,
                  "topology.kubernetes.io/zone": instance.zone, "failure-domain.beta.kubernetes.io/zone": instance.zone,
                  "topology.kubernetes.io/region": instance.region,
                  "failure-domain.beta.kubernetes.io/region": instance.region}
        spec: dict[str, Any] = {"taints": [t for t in _taints(node) if t.get("key") != UNINITIALIZED] or None}
        if not (node.get("spec") or {}).get("providerID"):
            spec["providerID"] = instance.provider_id
        await self.client.patch(NODES, meta["name"], {"metadata": {"labels": labels,
                                                                   "resourceVersion": meta["resourceVersion"]},
                                                      "spec": spec})


class CloudNodeLifecycleController(Controller):
    name = "cloud-node-lifecycle"

    def __init__(self, client: ApiClient, informers: SharedInformerFactory | None = None, *, cloud: FakeCloud,
                 monitor_period: float = 5.0, **kwargs: Any) -> None:
        super().__init__(client, informers, **kwargs)
        self.cloud = cloud
        self.monitor_period = monitor_period

    def setup(self) -> None:
        self.nodes = self.watch(NODES)

    async def _set_shutdown_taint(self, node: dict[str, Any], present: bool) -> None:
        taints = [t for t in _taints(node) if t.get("key") != SHUTDOWN]
        if present:
            taints.append({"key": SHUTDOWN, "effect": "NoSchedule"})
        meta = node["metadata"]
        await self.client.patch(NODES, meta["name"], {"metadata": {"resourceVersion": meta["resourceVersion"]},
                                                      "spec": {"taints": taints or None}})

    async def reconcile(self, key: Any) -> Result | None:
        node = self.nodes.get(key)
        if node is None:
            return None
        tainted = any(t.get("key") == SHUTDOWN for t in _taints(node))
        try:
            if _ready(node):
                if tainted:
                    await self._set_shutdown_taint(node, False)
                return None
            instance = self.cloud.instance(key)
            if instance is None:
                self.events.event({**node, "kind": "Node", "apiVersion": "v1"}, "Normal", "DeletingNode",
                                  f"Deleting node {key} because it does not exist in the cloud provider")
                await self.client.delete(NODES, key)
                return None
            if (instance.state == "stopped") != tainted:
                await self._set_shutdown_taint(node, instance.state == "stopped")
        except NotFound:
            return None
        except Conflict:
            return Result(requeue=True)
        return Result(requeue_after=self.monitor_period)
