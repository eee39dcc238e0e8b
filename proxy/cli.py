"""`mini-kube proxy --node N --kubeconfig F`: one node's kube-proxy as its own process.

The node's address is its Node's InternalIP (or `--node-ip`); the cluster network namespace is the one the
`kube-system/mini-kube-network` ConfigMap names (or `--netns`; `--network none` serves NodePorts only)."""

from __future__ import annotations

import argparse
import asyncio
import logging
from typing import Any

from mini_kube.client import ApiClient, NotFound
from mini_kube.controllers.signals import until_signalled
from mini_kube.machinery.refs import CONFIGMAPS, NODES

from .server import ProxyServer

NETWORK_CONFIGMAP = ("kube-system", "mini-kube-network")
log = logging.getLogger("mini-kube.proxy")


def add_parser(sub: argparse._SubParsersAction) -> None:
    proxy = sub.add_parser("proxy", help="run a node's kube-proxy (userspace) against a server")
    proxy.add_argument("--node", required=True, help="the Node this proxy serves")
    proxy.add_argument("--kubeconfig", required=True, help="kubeconfig of the API server")
    proxy.add_argument("--node-ip", default="", help="address for NodePorts (default: the Node's InternalIP)")
    proxy.add_argument("--netns", default="", help="the cluster network namespace (/proc/PID/ns/net; default: "
                       "from the kube-system/mini-kube-network ConfigMap)")
    proxy.add_argument("--network", choices=("auto", "none"), default="auto",
                       help="none: no cluster network, ClusterIPs are not served (default auto)")
    proxy.add_argument("--healthz-port", type=int, default=10256,
                       help="port of /healthz on the node's address (0: not served; default 10256)")
    proxy.add_argument("--udp-timeout", type=float, default=30.0,
                       help="seconds a UDP session lives without traffic (default 30)")


def internal_ip(node: dict[str, Any]) -> str:
    addresses = (node.get("status") or {}).get("addresses") or ()
    return next((a["address"] for a in addresses if a.get("type") == "InternalIP"), "")


async def node_ip(client: ApiClient, name: str, wait: float = 60.0) -> str:
    """The Node's InternalIP, waiting for the Node to register."""
    deadline = asyncio.get_running_loop().time() + wait
    while True:
        try:
            found = internal_ip(await client.get(NODES, name))
        except NotFound:
            found = ""
        if found:
            return found
        if asyncio.get_running_loop().time() > deadline:
            raise SystemExit(f"mini-kube: node {name} has no InternalIP (use --node-ip)")
        await asyncio.sleep(0.5)


async def cluster_network(client: ApiClient) -> dict[str, str]:
    """What the network package published about the cluster network (netns, gateway...), if anything."""
    namespace, name = NETWORK_CONFIGMAP
    try:
        config = await client.get(CONFIGMAPS, name, namespace)
    except NotFound:
        return {}
    return config.get("data") or {}


async def run(args: argparse.Namespace) -> None:
    client = ApiClient.from_kubeconfig(args.kubeconfig, user_agent=f"kube-proxy/{args.node}")
    address = args.node_ip or await node_ip(client, args.node)
    network = {} if args.network == "none" else await cluster_network(client)
    netns = None if args.network == "none" else (args.netns or network.get("netns") or None)
    proxy = ProxyServer(client, args.node, address, netns, gateway=network.get("gateway") or None,
                        healthz_port=args.healthz_port, udp_timeout=args.udp_timeout)
    await proxy.start()
    print(f"mini-kube proxy for node {args.node} ready: NodePorts on {address}"
          + (f", ClusterIPs in {netns}" if netns else " (no cluster network: ClusterIPs not served)"), flush=True)
    try:
        await until_signalled()
    finally:
        await proxy.stop()
        await client.close()
