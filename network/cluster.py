"""The cluster network: one network namespace (held by a pause process) with the bridge `mk0` that every Pod's
veth joins, and a `local` route for the whole service range so that any ClusterIP can be bound there. Found by
other components through the ConfigMap kube-system/mini-kube-network; the loopback block of the cluster's node
and load-balancer addresses is kept there too.

The nodes' addresses are loopback ones (127.A.B.10, ...: the machine's own namespace uses only 127.0.0.0/8), so
inside a Pod's namespace they would be the Pod's own loopback. Pods route the cluster's loopback block to the
gateway instead (`pod_network_script`: a route in its `local` table, more specific than its 127.0.0.0/8, with
`route_localnet` on the Pod's eth0 and the bridge so that the kernel lets such packets cross them), and in the
cluster namespace, where every 127.x address is local, kube-proxy serves each node's NodePorts on the node's
address as it does on the machine, and the kubelet its Pods' hostPorts: a Pod reaches NodeIP:NodePort as on a
real cluster. Nothing of this reaches the machine's own namespace."""

from __future__ import annotations

import contextlib
import ipaddress
import logging
import os
import random
import shlex
from typing import Any

from mini_kube.client import AlreadyExists, ApiClient, Conflict, NotFound
from mini_kube.machinery.refs import CONFIGMAPS

from .namespaces import Holder, run_in, write_sysctls

CONFIGMAP = "mini-kube-network"
BRIDGE = "mk0"
LOCALNET = "net/ipv4/conf/{device}/route_localnet"  # under /proc/sys: 127.x may cross the device
CLUSTER_CIDR = "10.244.0.0/16"
GATEWAY = "10.244.0.1"
log = logging.getLogger("mini-kube.network")


def _alive(data: dict[str, str]) -> bool:
    """Whether the holder a ConfigMap names still holds the same namespace."""
    try:
        pid = int(data.get("holderPid", "0"))
        return pid > 0 and str(os.stat(f"/proc/{pid}/ns/net").st_ino) == data.get("netnsInode")
    except (OSError, ValueError):
        return False


class ClusterNetwork:
    """The cluster's network. `netns` is None when namespaces cannot be made (loopback only)."""

    def __init__(self, data: dict[str, str], holder: Holder | None = None) -> None:
        self.data = data
        self.holder = holder
        self.netns: str | None = data.get("netns") or None
        self.loopback_block = data["loopbackBlock"]
        self.service_cidr = data["serviceCIDR"]
        self.cluster_cidr = data.get("clusterCIDR", CLUSTER_CIDR)
        self.gateway = data.get("gateway", GATEWAY)
        self.dns_ip = data["dnsIP"]

    @property
    def prefix_length(self) -> int:
        return ipaddress.ip_network(self.cluster_cidr).prefixlen

    def node_address(self, index: int) -> str:
        return f"{self.loopback_block}.{10 + index}"

    def pod_cidr(self, index: int) -> str:
        base = ipaddress.ip_network(self.cluster_cidr).network_address
        return f"{ipaddress.ip_address(int(base) + ((index + 1) << 8))}/24"

    def pod_network_script(self, batch: str, own: str = "") -> str:
        """A shell command for a Pod's namespace (run inside it) that applies the `ip -batch` lines `batch` and the
        route of the cluster's loopback block to the gateway through eth0, with `route_localnet` on eth0 so that
        the kernel lets 127.x cross it, in one `ip` process; `own`, an address to keep local (a node's own, in its
        hostNetwork namespace). No such route when the block holds 127.0.0.1 (the Pod's own loopback), nor where
        /proc/sys cannot be written (a read-only mount): the Pod then only misses the nodes' addresses."""
        script = f"printf %s {shlex.quote(batch)}"
        block = ipaddress.ip_network(f"{self.loopback_block}.0/24")
        if ipaddress.ip_address("127.0.0.1") not in block:
            routes = f"route add {block} via {self.gateway} dev eth0 table local\n"
            if own:
                routes += f"route add local {own} dev lo table local\n"
            script += (f"; if printf 1 2>/dev/null > /proc/sys/{LOCALNET.format(device='eth0')}; "
                       f"then printf %s {shlex.quote(routes)}; fi")
        return f"{{ {script}; }} | ip -batch -"

    def lb_pool(self) -> list[str]:
        return [f"{self.loopback_block}.{i}" for i in range(100, 200)]

    @classmethod
    async def ensure(cls, client: ApiClient, *, service_cidr: str = "10.0.0.0/24", namespaces: bool = True,
                     loopback_block: str = "") -> ClusterNetwork:
        """Join the cluster's network, or make it (this process then holds it until `close`)."""
        current: dict[str, Any] | None = None
        with contextlib.suppress(NotFound):
            current = await client.get(CONFIGMAPS, CONFIGMAP, "kube-system")
        data = dict((current or {}).get("data") or {})
        if current is not None and (not data.get("netns") or _alive(data)) and (data.get("netns") or not namespaces):
            return cls(data)
        hosts = ipaddress.ip_network(service_cidr).hosts()
        for _ in range(9):
            next(hosts)
        fresh = {"loopbackBlock": data.get("loopbackBlock") or loopback_block or
                 f"127.{random.randint(100, 250)}.{random.randint(0, 255)}",
                 "serviceCIDR": service_cidr, "clusterCIDR": CLUSTER_CIDR, "gateway": GATEWAY,
                 "dnsIP": str(next(hosts))}
        holder = None
        if namespaces:
            holder = Holder()
            holder.wait_ready()
            run_in(holder.netns, f"link set lo up\nlink add {BRIDGE} type bridge\n"
                                 f"addr add {GATEWAY}/{ipaddress.ip_network(CLUSTER_CIDR).prefixlen} dev {BRIDGE}\n"
                                 f"link set {BRIDGE} up\nroute add local {service_cidr} dev lo\n")
            try:
                write_sysctls(holder.netns, {LOCALNET.format(device=BRIDGE): "1"})
            except OSError as exc:  # e.g. /proc/sys mounted read-only: all else works
                log.warning("Pods will not reach the nodes' addresses (NodePorts, hostPorts): %s", exc)
            fresh.update({"netns": holder.netns, "holderPid": str(holder.pid),
                          "netnsInode": str(os.stat(holder.netns).st_ino)})
        body: dict[str, Any] = {"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": CONFIGMAP, "namespace": "kube-system"}, "data": fresh}
        try:
            if current is None:
                await client.create(CONFIGMAPS, body, "kube-system")
            else:
                body["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
                await client.replace(CONFIGMAPS, body, "kube-system")
        except (AlreadyExists, Conflict):  # another process made it first: use theirs
            if holder is not None:
                holder.close()
            return await cls.ensure(client, service_cidr=service_cidr, namespaces=namespaces)
        return cls(fresh, holder)

    def close(self) -> None:
        """Let the namespace go (only the process that made it holds it)."""
        if self.holder is not None:
            self.holder.close()
            self.holder = None
