"""`mini-kube node --name N --kubeconfig F`: one node (kubelet, and its kube-proxy unless --no-proxy) as its own
process; and `start_in_process`, which `mini-kube serve --nodes K` and test clusters use."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mini_kube.machinery.quantity import parse as parse_quantity

if TYPE_CHECKING:  # the kubelet is imported when a node starts: `serve` parses its node flags without it
    from mini_kube.client import ApiClient
    from mini_kube.client.informer import SharedInformerFactory
    from mini_kube.kubelet.nodes import NodeSet

UNINITIALIZED = "node.cloudprovider.kubernetes.io/uninitialized"
IN_PROCESS_LABEL = "node.mini-kube.dev/in-process"  # the nodes `serve` runs itself (it removes those it no longer runs)
IN_PROCESS_PIDS_LIMIT = 1024
DEFAULT_DATA_DIR = "~/.mini-kube"  # nodes in the API server's process: a fork bomb in a Pod must not starve it


def add_parser(sub: argparse._SubParsersAction) -> None:
    node = sub.add_parser("node", help="run a node (kubelet and kube-proxy) against a server")
    node.add_argument("--name", required=True, help="the Node's name")
    node.add_argument("--kubeconfig", required=True, help="kubeconfig of the API server")
    node.add_argument("--index", type=int, default=0, help="the node's number in the cluster: its address is "
                      "127.A.B.(10+index), its podCIDR 10.244.(index+1).0/24 (default 0)")
    add_node_options(node)
    node.add_argument("--no-proxy", action="store_true", help="do not run this node's kube-proxy")
    node.add_argument("--cloud-provider", choices=("", "external"), default="",
                      help="external: register with the uninitialized taint for a cloud-controller-manager")


def add_node_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--node-runtime", choices=("auto", "process", "simulated"), default="auto",
                        help="how pods run: real processes in their own namespaces (process), a timeline with no "
                             "processes (simulated), or process where namespaces can be made (auto, the default)")
    parser.add_argument("--node-root-dir", default=None,
                        help="where the kubelets keep pod files (default: a temporary directory)")
    parser.add_argument("--unknown-images", choices=("fail", "standin"), default="fail",
                        help="an image that is not built in: fail to pull it, as a node without it does "
                             "(ErrImagePull, then ImagePullBackOff; the default), or run it as the stand-in "
                             "(its command from the host's directories, or HTTP on its ports without one)")
    parser.add_argument("--image-map", default=None, metavar="FILE",
                        help="YAML mapping image patterns to local commands (e.g. myapp:dev runs ./bin/myapp): "
                             "looked up after the built-in images, before the loaded ones (see README)")
    parser.add_argument("--image-store", default=None, metavar="DIR",
                        help="where `mini-kube image load` keeps the images nodes run (default DATA_DIR/images: "
                             "~/.mini-kube/images unless serve's --data-dir says otherwise)")
    parser.add_argument("--pod-pids-limit", type=int, default=None,
                        help="the most processes a Pod may have (podPidsLimit; -1: no limit; default -1 for "
                             f"`mini-kube node`, as upstream's kubelet, and {IN_PROCESS_PIDS_LIMIT} for the nodes "
                             "`serve` runs in its own process)")
    parser.add_argument("--container-log-max-size", type=log_size, default=None, metavar="QUANTITY",
                        help="a container's log file is rotated before it grows past this (default 10Mi)")
    parser.add_argument("--container-log-max-files", type=int, default=None, metavar="N",
                        help="the files a container's log keeps, the current one included (default 5)")


def node_names(count: int) -> list[str]:
    """The names of `count` nodes: "mini-kube", or "mini-kube-1" ... "mini-kube-K"."""
    from mini_kube.kubelet.nodes import node_names as names

    return names(count)


def log_size(text: str) -> int:
    """A --container-log-max-size value (a quantity such as 10Mi) in bytes."""
    try:
        size = int(parse_quantity(text).value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if size < 1:
        raise argparse.ArgumentTypeError("must be greater than 0")
    return size


def node_flag_options(args: argparse.Namespace, data_dir: str = DEFAULT_DATA_DIR) -> dict[str, Any]:
    """The KubeletConfig fields the node flags set (those given); loaded images from `data_dir`'s store unless
    --image-store names another."""
    store = args.image_store or str(Path(DEFAULT_DATA_DIR if data_dir == ":memory:" else data_dir) / "images")
    given = {"pod_pids_limit": args.pod_pids_limit, "container_log_max_size": args.container_log_max_size,
             "container_log_max_files": args.container_log_max_files, "unknown_images": args.unknown_images,
             "image_map": str(Path(args.image_map).expanduser().resolve()) if args.image_map else None,
             "image_store": str(Path(store).expanduser().absolute())}
    return {key: value for key, value in given.items() if value is not None}


def image_map_problem(args: argparse.Namespace) -> str | None:
    """What is wrong with --image-map's file, or None."""
    if not getattr(args, "image_map", None):
        return None
    from mini_kube.kubelet.imagestore.imagemap import ImageMap, ImageMapError

    try:
        ImageMap.load(args.image_map)
    except ImageMapError as exc:
        return f"--image-map {exc}"
    return None


class InProcessNodes:
    """Kubelets (and their kube-proxies) running in this process. The kube-proxies share one informer of each
    kind (`proxy_informers`): every one needs all Services, EndpointSlices and Nodes, and one watch of each per
    process, rather than one per node, keeps a Node's status write from being sent and decoded once per node
    (with 100 nodes that fan-out was most of an idle server's CPU)."""

    def __init__(self, nodes: NodeSet, proxies: list[Any], proxy_informers: SharedInformerFactory | None = None) -> None:
        self.nodes = nodes
        self.proxies = proxies
        self.proxy_informers = proxy_informers

    @property
    def kubelets(self) -> list[Any]:
        return self.nodes.kubelets

    async def stop(self) -> None:
        await asyncio.gather(*(p.stop() for p in self.proxies), return_exceptions=True)
        await asyncio.gather(*(p.client.close() for p in self.proxies), return_exceptions=True)
        if self.proxy_informers is not None:
            await self.proxy_informers.stop()
            await self.proxy_informers.client.close()
        await self.nodes.stop()


async def start_in_process(client_factory: Any, names: list[str], *, runtime: str = "auto",
                           root: str | None = None, proxy: bool = True, service_cidr: str = "10.0.0.0/24",
                           first_index: int = 0, external_cloud: bool = False,
                           kubelet_options: dict[str, Any] | None = None,
                           hidden: list[str] | None = None, static_pods: tuple[Any, ...] = ()) -> InProcessNodes:
    """Start a kubelet (and kube-proxy) for each name. With `external_cloud` (a cloud-controller-manager runs),
    nodes register with the `node.cloudprovider.kubernetes.io/uninitialized` taint, as upstream's kubelet with
    `--cloud-provider=external`, for the ccm to initialise and remove. `hidden`: directories no Pod may see
    (the server's data dir). Nodes get a pids limit per Pod of IN_PROCESS_PIDS_LIMIT unless told otherwise.
    `static_pods`: the components this process runs, shown as mirror Pods: the control plane on the first node,
    kube-proxy on each."""
    from mini_kube.client.informer import SharedInformerFactory
    from mini_kube.kubelet.nodes import NodeSet

    nodes = await NodeSet.create(client_factory, runtime=runtime, root=root, service_cidr=service_cidr)
    nodes.hidden = list(hidden or ())
    kubelet_options = {"pod_pids_limit": IN_PROCESS_PIDS_LIMIT, **(kubelet_options or {})}
    proxies: list[Any] = []
    taints = [{"key": UNINITIALIZED, "value": "true", "effect": "NoSchedule"}] if external_cloud else []
    running = InProcessNodes(nodes, proxies, SharedInformerFactory(client_factory()) if proxy and names else None)
    try:
        for offset, name in enumerate(names):
            mine = tuple(s for s in static_pods if s.component == "kube-proxy" or offset == 0)
            kubelet = await nodes.add(name, first_index + offset, taints=list(taints), static_pods=mine,
                                      **(kubelet_options or {}))
            if proxy:
                from mini_kube.proxy.server import ProxyServer

                server = ProxyServer(client_factory(), name, kubelet.address, nodes.network.netns,
                                     gateway=nodes.network.gateway, informers=running.proxy_informers)
                await server.start()
                proxies.append(server)
    except BaseException:  # e.g. a name another live kubelet runs: what started stops
        await running.stop()
        raise
    return running


async def run(args: argparse.Namespace) -> None:
    from mini_kube.client import ApiClient
    from mini_kube.controllers.signals import until_signalled
    from mini_kube.kubelet.registration import NodeNameTaken
    from mini_kube.network.relay import raise_open_files_limit

    def client() -> ApiClient:
        return ApiClient.from_kubeconfig(args.kubeconfig, user_agent=f"kubelet/{args.name}")

    problem = image_map_problem(args)
    if problem:
        raise SystemExit(f"mini-kube: {problem}")
    pids = -1 if args.pod_pids_limit is None else args.pod_pids_limit
    raise_open_files_limit()  # the relays take a share of it
    try:
        running = await start_in_process(client, [args.name], runtime=args.node_runtime, root=args.node_root_dir,
                                         kubelet_options={**node_flag_options(args), "pod_pids_limit": pids},
                                         proxy=not args.no_proxy, first_index=args.index,
                                         external_cloud=args.cloud_provider == "external")
    except NodeNameTaken as exc:
        raise SystemExit(f"mini-kube: {exc}") from None
    kubelet = running.kubelets[0]
    print(f"mini-kube node {args.name} ready at {kubelet.address} ({running.nodes.runtime} runtime)", flush=True)
    try:
        await until_signalled()
    finally:
        await running.stop()


__all__ = ["add_parser", "add_node_options", "node_names", "run", "start_in_process"]
