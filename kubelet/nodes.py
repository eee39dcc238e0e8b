"""Starting kubelets: K in-process nodes for `serve --nodes K` and test clusters, or one for `mini-kube node`.
Chooses the runtime (process where namespaces can be made, else simulated), joins or makes the cluster network,
and gives each node its loopback address and podCIDR."""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import shutil
from pathlib import Path
from typing import Any

from mini_kube.machinery.tempdirs import make_owned, remove_owned
from mini_kube.network.cluster import ClusterNetwork
from mini_kube.network.namespaces import can_make_namespaces, open_connection_in

from .cgroups.tree import PodCgroups, machine
from .kubelet import Kubelet, KubeletConfig
from .runtime.base import Runtime
from .runtime.process import ProcessRuntime
from .runtime.simulated import SimulatedRuntime

log = logging.getLogger("mini-kube.kubelet")
TOKEN_SECRET = "mini-kube-kubelet-api"


def choose_runtime(wanted: str) -> str:
    """`process`, `simulated`, or `auto` (process where namespaces can be made)."""
    if wanted != "auto":
        if wanted == "process":
            ok, why = can_make_namespaces()
            if not ok:
                raise RuntimeError(f"the process runtime needs network namespaces: {why}")
        return wanted
    ok, why = can_make_namespaces()
    if not ok:
        log.warning("simulated runtime: %s", why)
    return "process" if ok else "simulated"


class NodeSet:
    """Kubelets of one process, sharing its cluster network."""

    def __init__(self, client_factory: Any, network: ClusterNetwork, runtime: str, root: Path,
                 owns_root: bool) -> None:
        self.client_factory = client_factory
        self.network = network
        self.runtime = runtime
        self.root = root
        self.owns_root = owns_root
        self.kubelets: list[Kubelet] = []
        self.token = ""
        self.hidden: list[str] = []  # directories no Pod may see besides the nodes' own (the server's data dir)

    @classmethod
    async def create(cls, client_factory: Any, *, runtime: str = "auto", root: str | None = None,
                     service_cidr: str = "10.0.0.0/24") -> NodeSet:
        kind = choose_runtime(runtime)
        client = client_factory()
        try:
            network = await ClusterNetwork.ensure(client, service_cidr=service_cidr, namespaces=kind == "process")
            token = await kubelet_api_token(client)
        finally:
            await client.close()
        owns = root is None
        base = Path(root) if root else make_owned("mini-kube-nodes-")
        nodes = cls(client_factory, network, kind, base, owns)
        nodes.token = token
        return nodes

    def _runtime(self, config: KubeletConfig) -> Runtime:
        if self.runtime != "process":
            return SimulatedRuntime()
        cgroups, why = pod_cgroups(config)
        node_ip = str(next(ipaddress.ip_network(config.pod_cidr).hosts()))  # kept for the node by its IPAM
        return ProcessRuntime(self.network, cgroups, unenforced=why, node_name=config.node_name, node_ip=node_ip,
                              node_address=config.address,
                              hide=tuple(str(p.resolve()) for p in [self.root, *map(Path, self.hidden)]))

    def _dialer(self, runtime: Runtime, address: str) -> Any:
        """How the kubelet reaches its Pods: in the cluster network, or for its own address (hostNetwork Pods)
        in the node's network namespace."""

        async def dial(host: str, port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
            node = getattr(runtime, "node", None)
            if host == address and node is not None and node.netns is not None:
                return await open_connection_in(node.netns, "127.0.0.1", port)
            return await open_connection_in(self.network.netns, host, port)

        return dial

    async def add(self, name: str, index: int, **overrides: Any) -> Kubelet:
        """Start the kubelet of node `name` (the index-th node: its address and podCIDR follow)."""
        directory = self.root / name
        if directory.exists():
            shutil.rmtree(directory, ignore_errors=True)  # left by a crash: its pods are gone
        config = KubeletConfig(node_name=name, address=self.network.node_address(index),
                               pod_cidr=self.network.pod_cidr(index), root=str(directory), **overrides)
        runtime = self._runtime(config)
        kubelet = Kubelet(self.client_factory(), config, runtime,
                          dialer=self._dialer(runtime, config.address) if self.runtime == "process" else None,
                          api_token=self.token,
                          network_netns=self.network.netns)
        await kubelet.start()
        self.kubelets.append(kubelet)
        return kubelet

    async def stop(self) -> None:
        await asyncio.gather(*(k.stop() for k in self.kubelets), return_exceptions=True)
        self.kubelets.clear()
        self.network.close()
        if self.owns_root:
            remove_owned(self.root)


_unenforced: set[str] = set()  # the reasons already logged


def pod_cgroups(config: KubeletConfig) -> tuple[PodCgroups | None, str]:
    """The node's Pod cgroups, or None and why (said once in the log) where limits cannot be enforced."""
    driver, why = machine() if config.cgroups else (None, "cgroups turned off for this node")
    if driver is None:
        if why not in _unenforced:
            _unenforced.add(why)
            log.warning("resources.limits are not enforced: %s", why)
        return None, why
    pids = config.pod_pids_limit if config.pod_pids_limit > 0 else None
    return PodCgroups(driver, config.node_name, pids, allocatable=config.capacity), ""


async def kubelet_api_token(client: Any) -> str:
    """The bearer token the API server shows the kubelets (Secret kube-system/mini-kube-kubelet-api)."""
    from mini_kube.client.node_token import node_token

    token = await node_token(client, create=True)
    if token is None:
        raise RuntimeError(f"cannot read or create Secret kube-system/{TOKEN_SECRET}")
    return token


def node_names(count: int) -> list[str]:
    return ["mini-kube"] if count == 1 else [f"mini-kube-{i + 1}" for i in range(count)]


async def start_nodes(client_factory: Any, count: int, **kwargs: Any) -> NodeSet:
    nodes = await NodeSet.create(client_factory, **kwargs)
    for index, name in enumerate(node_names(count)):
        await nodes.add(name, index)
    return nodes


