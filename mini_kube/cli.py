"""`mini-kube`: the command line, and where the components are put together (the composition root: the API
server itself never imports the others). `mini-kube serve` runs the API server (and, by default, the controllers)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mini_kube.controllers.signals import stop_signals, until_signalled
from mini_kube.gc_policy import pause_during_start, settle_after_start
from mini_kube.machinery.kubeconfig import KubeconfigError, load_credentials
from mini_kube.machinery.leader_election_flags import add_timing_flags
from mini_kube.network.relay import raise_open_files_limit

if TYPE_CHECKING:  # the API server is imported by `serve` only, the client by the commands that run: a refused
    from mini_kube.apiserver.server import ApiServer  # command says why without loading either
    from mini_kube.client import ApiClient


def _serve_parser(sub: argparse._SubParsersAction) -> None:
    serve = sub.add_parser("serve", help="run the API server")
    serve.add_argument("--address", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=6443, help="port to listen on (default 6443; 0: any free port)")
    serve.add_argument("--data-dir", default="~/.mini-kube", help="state directory (default ~/.mini-kube), or "
                       ":memory: for state that goes with the server")
    serve.add_argument("--kubeconfig", default=None, help="where to write the kubeconfig (default DATA_DIR/kubeconfig; "
                       "with --data-dir :memory:, ~/.mini-kube/kubeconfig)")
    serve.add_argument("--insecure-http", action="store_true", help="serve plain HTTP with no authentication")
    serve.add_argument("--token-auth-file", default=None,
                       help="static bearer tokens, upstream's CSV format: token,user,uid[,\"group1,group2\"]")
    serve.add_argument("--audit-log", default=None, help="write audit.k8s.io events to this file as JSON lines")
    serve.add_argument("--admission-control-config-file", default=None,
                       help="an AdmissionConfiguration file (the PodSecurity plugin's defaults and exemptions)")
    serve.add_argument("--service-cluster-ip-range", default="10.0.0.0/24",
                       help="CIDR that Service cluster IPs are allocated from (default 10.0.0.0/24)")
    serve.add_argument("--max-requests-inflight", type=int, default=400,
                       help="non-mutating requests served at once; more answer 429 (default 400, 0: no limit)")
    serve.add_argument("--max-mutating-requests-inflight", type=int, default=200,
                       help="mutating requests served at once; more answer 429 (default 200, 0: no limit)")
    serve.add_argument("--no-controllers", action="store_true", help="do not run the built-in controllers")
    serve.add_argument("--no-scheduler", action="store_true", help="do not run the scheduler in-process")
    serve.add_argument("--controllers", default="*", help="the built-in controllers to run in-process: '*' (all), "
                       "names, '-name' to leave one out")
    serve.add_argument("--nodes", type=int, default=1, help="nodes to run in-process, each a kubelet and a "
                       "kube-proxy (default 1; 0: none)")
    from mini_kube.node import add_node_options

    add_node_options(serve)
    serve.add_argument("--no-ccm", action="store_true", help="do not run the cloud-controller-manager in-process")
    serve.add_argument("--lb-pool", default="", help="load balancer addresses (127.0.0.0/8 only), e.g. "
                       "127.1.2.100-199 (default: 127.A.B.100-199 of the cluster network)")
    serve.add_argument("--no-dns", action="store_true", help="do not run the cluster DNS in-process")
    serve.add_argument("--dns-port", type=int, default=53, help="port of the cluster DNS on the host's loopback "
                       "(127.A.B.2; default 53)")
    serve.add_argument("--etcd-servers", default="", help="comma-separated etcd client URLs: keep every object "
                       "in etcd instead of the data dir's SQLite store (several servers may share one etcd)")
    serve.add_argument("--join", action="store_true", help="one more API server for a cluster whose first "
                       "server shares this --etcd-servers store: only the API server (no controllers, scheduler, "
                       "nodes, cloud controller or DNS: the first server runs those)")
    serve.add_argument("--etcd-prefix", default="/registry", help="the etcd key prefix for this cluster's objects")
    serve.add_argument("--etcd-cafile", default=None, help="CA bundle to verify etcd's TLS certificate")
    serve.add_argument("--etcd-certfile", default=None, help="client certificate for etcd")
    serve.add_argument("--etcd-keyfile", default=None, help="client key for etcd")


async def serve(args: argparse.Namespace) -> None:
    from mini_kube.node import IN_PROCESS_LABEL, image_map_problem, node_flag_options
    from mini_kube.serve_options import kubeconfig_path, memory_kubeconfig_problem, serve_args_problem

    problem = serve_args_problem(args) or memory_kubeconfig_problem(args) or image_map_problem(args)
    if problem:
        raise SystemExit(f"mini-kube: {problem}")
    stopping = stop_signals()  # from here on a signal stops the server once started, after which it cleans up
    pause_during_start()  # the API server's modules load next; settle_after_start, once all has started, resumes
    from mini_kube.apiserver.datadir import StartupError
    from mini_kube.apiserver.kubeconfig import write_kubeconfig
    from mini_kube.apiserver.server import ApiServer, ServerConfig

    raise_open_files_limit()  # the relays take a share of it: the API server keeps the rest
    if args.join:  # the cluster-wide components run once, in the first server
        args.no_controllers = args.no_scheduler = args.no_ccm = args.no_dns = True
        args.nodes = 0
    data_dir = args.data_dir if args.data_dir == ":memory:" else str(Path(args.data_dir).expanduser().absolute())
    config = ServerConfig(address=args.address, port=args.port, data_dir=data_dir, insecure_http=args.insecure_http,
                          token_auth_file=args.token_auth_file, audit_log=args.audit_log,
                          admission_control_config_file=args.admission_control_config_file,
                          service_cidr=args.service_cluster_ip_range,
                          etcd_servers=[u for u in args.etcd_servers.split(",") if u], etcd_prefix=args.etcd_prefix,
                          etcd_cafile=args.etcd_cafile, etcd_certfile=args.etcd_certfile,
                          etcd_keyfile=args.etcd_keyfile, max_requests_inflight=args.max_requests_inflight,
                          max_mutating_requests_inflight=args.max_mutating_requests_inflight)
    server = ApiServer(config)
    try:
        await server.start()
    except StartupError as exc:
        await server.stop()  # close what was opened (the store's threads would keep the process alive)
        raise SystemExit(f"mini-kube: {exc}") from None
    try:
        kubeconfig = kubeconfig_path(args, data_dir)
        write_kubeconfig(kubeconfig, server.admin_kubeconfig())
        # the components' modules load beside the loop, which serves meanwhile (kubectl need not wait for them)
        await asyncio.to_thread(import_modules, component_modules(args))
        if not args.no_controllers:
            await start_controllers(server, args.controllers)
        if not args.no_scheduler:
            await start_scheduler(server)
        if not args.join:
            await remove_departed_nodes(server, args.nodes)
        if args.nodes > 0:
            root = args.node_root_dir or (str(Path(data_dir) / "nodes") if data_dir != ":memory:" else None)
            await start_nodes(server, args.nodes, runtime=args.node_runtime, root=root,
                              external_cloud=not args.no_ccm, labels={IN_PROCESS_LABEL: "true"},
                              kubelet_options=node_flag_options(args, data_dir),
                              static_pods=component_pods(server, args))
        if not args.no_ccm:
            await start_ccm(server, lb_pool=args.lb_pool or None)
        if not args.no_dns:
            await start_dns(server, port=args.dns_port)
        logging.getLogger("mini-kube").info("serving on %s (kubeconfig %s)", server.url, kubeconfig)
        print(f"mini-kube API server ready at {server.url}, kubeconfig: {kubeconfig}", flush=True)
        settle_after_start()
        await stopping.wait()
    finally:
        await server.stop()  # also when a component fails to start: nothing may keep the process alive
        settle_after_start()  # collections resume whatever ended the start (a no-op once resumed)


def component_modules(args: argparse.Namespace) -> list[str]:
    """The modules of the components this `serve` runs in-process."""
    runs = {"mini_kube.controllers.kube_controller_manager": not args.no_controllers,
            "mini_kube.scheduler": not args.no_scheduler, "mini_kube.kubelet.nodes": args.nodes > 0,
            "mini_kube.proxy.server": args.nodes > 0, "mini_kube.ccm.manager": not args.no_ccm,
            "mini_kube.clusterdns.cluster_dns": not args.no_dns}
    return [module for module, used in runs.items() if used]


def import_modules(names: list[str]) -> None:
    """Import these modules (in a worker thread: Python's import locks make that safe)."""
    for name in names:
        importlib.import_module(name)


def component_pods(server: ApiServer, args: argparse.Namespace) -> Any:
    """The components this `serve` runs, each with the log file of its own that its mirror Pod shows."""
    from mini_kube.component_logs import ComponentLogs

    running = {"kube-apiserver": True, "kube-controller-manager": not args.no_controllers,
               "kube-scheduler": not args.no_scheduler, "cloud-controller-manager": not args.no_ccm,
               "coredns": not args.no_dns, "kube-proxy": True}
    data_dir = server.config.data_dir
    logs = ComponentLogs(str(Path(data_dir) / "logs") if data_dir != ":memory:" else None,
                         [name for name, runs in running.items() if runs])

    async def close() -> None:
        logs.close()

    server.lifecycle.on_stop(close)
    return logs.static_pods(tuple(logs.paths))


def client_for(server: ApiServer) -> ApiClient:
    """An ApiClient for a component run in-process: over HTTP, as any client, on the server's loopback socket
    (no TLS; its token, the admin's identity: apiserver/auth/loopback.py). `connection.server` stays the
    server's URL (kube-proxy serves the `kubernetes` Service from it); the credentials stay in memory."""
    from mini_kube.client import ApiClient, Connection

    pki = server.security.pki
    connection = Connection(server.url, token=server.security.loopback_token,
                            ca_pem=pki.ca_pem if pki is not None else None, unix_socket=server.loopback_socket)
    return ApiClient(connection, user_agent="mini-kube-controllers")


async def start_controllers(server: ApiServer, names: str = "*",
                            options: dict[str, dict[str, Any]] | None = None) -> None:
    """Run the built-in controllers in-process, talking to this server over HTTP like any client (`options`:
    per-controller settings, e.g. {"nodelifecycle": {"grace_period": 5}})."""
    from mini_kube.controllers.kube_controller_manager import KubeControllerManager

    pki = server.security.pki
    if pki is not None and "csrsigning" not in (options or {}):  # approved CSRs are signed by the cluster CA
        options = {**(options or {}), "csrsigning": {"cert_file": pki.ca_path, "key_file": pki.dir / "ca.key"}}
    manager = KubeControllerManager(client_for(server), names=names, options=options)
    server.lifecycle.spawn(manager.start(), "controller-manager")
    server.lifecycle.on_stop(manager.stop)


async def start_scheduler(server: ApiServer, **options: Any) -> None:
    """Run the scheduler in-process, over HTTP like any client (`options` go to the Scheduler)."""
    from mini_kube.scheduler import SchedulerRunner

    client = client_for(server)
    client.user_agent = "kube-scheduler"
    runner = SchedulerRunner(client, **options)
    server.lifecycle.spawn(runner.start(), "scheduler")
    server.lifecycle.on_stop(runner.stop)


async def remove_departed_nodes(server: ApiServer, count: int) -> None:
    """Delete the Nodes an earlier `serve` ran in-process that this one does not (`--nodes` lowered): they would
    stay Ready for a Lease's time, get Pods that never run, and share a live node's address."""
    from mini_kube.client import NotFound
    from mini_kube.machinery.refs import NODES
    from mini_kube.node import IN_PROCESS_LABEL, node_names

    keep = set(node_names(count)) if count > 0 else set()
    async with client_for(server) as client:
        for node in (await client.list(NODES, labelSelector=IN_PROCESS_LABEL))["items"]:
            if node["metadata"]["name"] not in keep:
                with contextlib.suppress(NotFound):
                    await client.delete(NODES, node["metadata"]["name"])


async def start_nodes(server: ApiServer, count: int, *, labels: dict[str, str] | None = None,
                      **options: Any) -> Any:
    """Run `count` nodes (kubelet + kube-proxy each) in-process, with these extra node labels; returns them."""
    from mini_kube.kubelet.registration import NodeNameTaken
    from mini_kube.node import node_names, start_in_process

    data_dir = server.config.data_dir
    if labels:
        options["kubelet_options"] = {**(options.get("kubelet_options") or {}), "labels": labels}
    try:
        nodes = await start_in_process(lambda: client_for(server), node_names(count),
                                       service_cidr=server.config.service_cidr,
                                       hidden=[data_dir] if data_dir != ":memory:" else [], **options)
    except NodeNameTaken as exc:
        raise SystemExit(f"mini-kube: {exc}") from None
    server.lifecycle.on_stop(nodes.stop, first=True)
    return nodes


async def start_ccm(server: ApiServer, **options: Any) -> Any:
    """Run the cloud-controller-manager in-process (over HTTP like any client); returns it."""
    from mini_kube.ccm.manager import CloudControllerManager

    manager = CloudControllerManager(client_for(server), **options)
    server.lifecycle.spawn(manager.start(), "cloud-controller-manager")
    server.lifecycle.on_stop(manager.stop)
    return manager


async def start_dns(server: ApiServer, **options: Any) -> Any:
    """Run the cluster DNS in-process (its informers over HTTP like any client); returns it."""
    from mini_kube.clusterdns.cluster_dns import ClusterDNS

    dns = ClusterDNS(client_for(server), **options)
    await dns.start()

    async def stop() -> None:
        await dns.stop()
        await dns.client.close()
    server.lifecycle.on_stop(stop)
    return dns


async def run_dns(args: argparse.Namespace) -> None:
    """`mini-kube dns --kubeconfig F`: the cluster DNS as its own process."""
    from mini_kube.client import ApiClient
    from mini_kube.clusterdns.cluster_dns import ClusterDNS

    dns = ClusterDNS(ApiClient.from_kubeconfig(args.kubeconfig, user_agent="mini-kube-dns"),
                     host_address=args.address or None, port=args.port, cluster_domain=args.cluster_domain)
    await dns.start()
    await dns.ready.wait()
    where = f"{dns.host_address}:{dns.host_port}" if dns.host_port else "no host address"
    print(f"mini-kube cluster DNS on {where}" + (f" and {dns.dns_ip}:53 in the cluster network"
                                                 if dns.netns_listening else ""), flush=True)
    await until_signalled()
    await dns.stop()
    await dns.client.close()


async def run_trace(args: argparse.Namespace) -> None:
    """`mini-kube trace --kubeconfig F URL`: one request and its hops, from the components' records."""
    import orjson

    from mini_kube.ccm.trace import trace
    from mini_kube.client import ApiClient

    async with ApiClient.from_kubeconfig(args.kubeconfig, user_agent="mini-kube-trace") as client:
        hops = await trace(client, args.url, dns_server=args.dns, ccm_status=args.ccm)
    if args.output == "json":
        print(orjson.dumps([h.__dict__ for h in hops], option=orjson.OPT_INDENT_2).decode())
        return
    for hop in hops:
        print(f"{hop.component:<14} {hop.text}")


async def run_ccm(args: argparse.Namespace) -> None:
    """`mini-kube ccm --kubeconfig F`: the cloud-controller-manager as its own process."""
    from mini_kube.ccm.manager import CloudControllerManager
    from mini_kube.client import ApiClient

    try:
        manager = CloudControllerManager(ApiClient.from_kubeconfig(args.kubeconfig, user_agent="mini-kube-ccm"),
                                         lb_pool=args.lb_pool or None, controllers=args.controllers,
                                         health_interval=args.health_interval, status_port=args.status_port)
    except ValueError as exc:
        raise SystemExit(f"mini-kube: {exc}") from None
    await manager.start()
    print(f"mini-kube cloud-controller-manager running: {', '.join(manager.names)}", flush=True)
    await until_signalled()
    await manager.stop()


async def run_controllers(args: argparse.Namespace) -> None:
    """`mini-kube controllers --kubeconfig F`: the controller manager as its own process."""
    from mini_kube.client import ApiClient
    from mini_kube.controllers.kube_controller_manager import KubeControllerManager

    try:
        manager = KubeControllerManager(ApiClient.from_kubeconfig(args.kubeconfig, user_agent="mini-kube-controllers"),
                          names=args.controllers, leader_elect=args.leader_elect,
                          lease_duration=args.leader_elect_lease_duration,
                          renew_deadline=args.leader_elect_renew_deadline,
                          retry_period=args.leader_elect_retry_period,
                          options={"nodelifecycle": {"grace_period": args.node_monitor_grace_period,
                                                     "default_toleration": args.default_unreachable_toleration_seconds},
                                   "podgc": {"terminated_pod_gc_threshold": args.terminated_pod_gc_threshold},
                                   "csrsigning": {"cert_file": args.cluster_signing_cert_file,
                                                  "key_file": args.cluster_signing_key_file}})
    except ValueError as exc:
        raise SystemExit(f"mini-kube: {exc}") from None
    await manager.start()
    if args.health_address:
        host, _, port = args.health_address.rpartition(":")
        bound = await manager.serve_health(host or "127.0.0.1", int(port))
        print(f"mini-kube controllers: health on http://{host or '127.0.0.1'}:{bound}/healthz", flush=True)
    settle_after_start()
    await until_signalled()
    await manager.stop()


async def run_operator(args: argparse.Namespace) -> None:
    """`mini-kube operator [--kubeconfig F]`: the Agent operator (in-cluster config without a kubeconfig)."""
    from mini_kube.agent_operator.operator import Operator
    from mini_kube.client import ApiClient, Connection

    try:
        connection = Connection.from_kubeconfig(args.kubeconfig) if args.kubeconfig else Connection.in_cluster()
    except (OSError, RuntimeError, KeyError, StopIteration) as exc:
        raise SystemExit(f"mini-kube: {exc}") from None
    operator = Operator(ApiClient(connection, user_agent="mini-kube-agent-operator", qps=args.qps,
                                  burst=max(1, int(args.qps * 2))),
                        leader_elect=args.leader_elect, lease_namespace=args.leader_elect_namespace,
                        workers=args.workers, lease_duration=args.leader_elect_lease_duration,
                        renew_deadline=args.leader_elect_renew_deadline, retry_period=args.leader_elect_retry_period)
    await operator.start()
    if args.health_address:
        host, _, port = args.health_address.rpartition(":")
        bound = await operator.serve_status(host or "127.0.0.1", int(port))
        print(f"mini-kube operator: status on http://{host or '127.0.0.1'}:{bound}/status", flush=True)
    await until_signalled()
    await operator.stop()


def _operator_parser(sub: argparse._SubParsersAction) -> None:
    op = sub.add_parser("operator", help="run the Agent operator (deploy/agent-operator/) against a server")
    op.add_argument("--kubeconfig", default="", help="kubeconfig of the API server (default: in-cluster config)")
    op.add_argument("--leader-elect", action="store_true", help="act only while holding the agent-operator Lease")
    op.add_argument("--leader-elect-namespace", default="", help="namespace of the Lease (default: $POD_NAMESPACE, "
                    "else kube-system)")
    add_timing_flags(op)
    op.add_argument("--health-address", default="", help="serve /healthz, /readyz and /status on HOST:PORT")
    op.add_argument("--workers", type=int, default=0, help="Agents reconciled at once (default 16)")
    op.add_argument("--qps", type=float, default=0, help="client requests per second (default 0: unlimited)")


def _controllers_parser(sub: argparse._SubParsersAction) -> None:
    ctrl = sub.add_parser("controllers", help="run the built-in controllers against a server")
    ctrl.add_argument("--kubeconfig", required=True, help="kubeconfig of the API server to control")
    ctrl.add_argument("--controllers", default="*", help="controllers to run: '*' (all), names, '-name' to "
                      "leave one out (e.g. '*,-garbagecollector')")
    ctrl.add_argument("--leader-elect", action="store_true", help="act only while holding the "
                      "kube-system/kube-controller-manager Lease, so several managers never both act")
    ctrl.add_argument("--health-address", default="", help="serve /healthz and /readyz on HOST:PORT (PORT 0: any "
                      "free port; default: not served)")
    ctrl.add_argument("--node-monitor-grace-period", type=float, default=40.0,
                      help="seconds without a Lease renewal before a node is marked unreachable (default 40)")
    ctrl.add_argument("--default-unreachable-toleration-seconds", type=float, default=300.0,
                      help="how long Pods without their own toleration stay on an unreachable node (default 300)")
    ctrl.add_argument("--terminated-pod-gc-threshold", type=int, default=12500,
                      help="terminated Pods kept before the pod garbage collector deletes them (0: never; "
                      "default 12500)")
    ctrl.add_argument("--cluster-signing-cert-file", default="",
                      help="the CA certificate (PEM) that signs approved CertificateSigningRequests")
    ctrl.add_argument("--cluster-signing-key-file", default="",
                      help="the CA's private key (PEM); without both files no CSR is signed")
    add_timing_flags(ctrl)


def _ccm_parser(sub: argparse._SubParsersAction) -> None:
    ccm = sub.add_parser("ccm", help="run the cloud-controller-manager (a fake cloud) against a server")
    ccm.add_argument("--kubeconfig", required=True, help="kubeconfig of the API server")
    ccm.add_argument("--controllers", default="*", help="'*' or names of cloud-node-controller, "
                     "cloud-node-lifecycle-controller, service-lb-controller ('-name' leaves one out)")
    ccm.add_argument("--lb-pool", default="", help="load balancer addresses (127.0.0.0/8 only), e.g. "
                     "127.1.2.100-199 (default: 127.A.B.100-199 of the cluster network)")
    ccm.add_argument("--health-interval", type=float, default=1.0,
                     help="seconds between load balancer health checks of the nodes (default 1)")
    ccm.add_argument("--status-port", type=int, default=10258, help="port of /healthz, /loadbalancers and "
                     "/connections on 127.A.B.1 (default 10258; 0: any free port)")


def _dns_parser(sub: argparse._SubParsersAction) -> None:
    dns = sub.add_parser("dns", help="run the cluster DNS against a server")
    dns.add_argument("--kubeconfig", required=True, help="kubeconfig of the API server")
    dns.add_argument("--address", default="", help="host loopback address to answer on (default 127.A.B.2 of "
                     "the cluster network)")
    dns.add_argument("--port", type=int, default=53, help="port on that address (default 53; 0: any free port)")
    dns.add_argument("--cluster-domain", default="cluster.local", help="the cluster's DNS domain")


def _trace_parser(sub: argparse._SubParsersAction) -> None:
    trace = sub.add_parser("trace", help="send one HTTP request and show its hops (DNS, load balancer, "
                           "kube-proxy, Pod) from the components' own records")
    trace.add_argument("url", help="e.g. http://web.default.lb.mini-kube.local:8080/")
    trace.add_argument("--kubeconfig", required=True, help="kubeconfig of the API server")
    trace.add_argument("--dns", default="", help="cluster DNS address HOST:PORT (default 127.A.B.2:53)")
    trace.add_argument("--ccm", default="", help="cloud-controller-manager status HOST:PORT (default 127.A.B.1:10258)")
    trace.add_argument("-o", "--output", choices=["text", "json"], default="text", help="text (default) or json")


PARSERS = {  # each subcommand's parser: here (":name"), or in its component's module, imported only to build it
    "serve": ":_serve_parser", "controllers": ":_controllers_parser", "ccm": ":_ccm_parser", "dns": ":_dns_parser",
    "trace": ":_trace_parser", "operator": ":_operator_parser", "scheduler": "mini_kube.scheduler.cli:add_parser",
    "proxy": "mini_kube.proxy.cli:add_parser", "node": "mini_kube.node:add_parser",
    "image": "mini_kube.kubelet.imagestore.cli:add_parser",
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """`mini-kube` and its subcommands: only `command`'s when it names one (its component's modules are all that
    is imported: `serve` starts without loading the nodes' or the scheduler's), every one otherwise (--help)."""
    parser = argparse.ArgumentParser(prog="mini-kube", description="a small, real Kubernetes control plane")
    sub = parser.add_subparsers(dest="command", required=True)
    for name in [command] if command in PARSERS else PARSERS:
        module, _, function = PARSERS[name].partition(":")
        (getattr(importlib.import_module(module), function) if module else globals()[function])(sub)
    return parser


RUNNERS = {  # each subcommand's coroutine: here (":name"), or in its component, imported when it runs
    "serve": ":serve", "controllers": ":run_controllers", "ccm": ":run_ccm", "dns": ":run_dns",
    "trace": ":run_trace", "operator": ":run_operator", "scheduler": "mini_kube.scheduler.cli:run",
    "node": "mini_kube.node:run", "proxy": "mini_kube.proxy.cli:run",
    "image": "mini_kube.kubelet.imagestore.cli:run",
}


READS_KUBECONFIG = {"controllers", "ccm", "dns", "trace", "operator", "scheduler", "node", "proxy"}
"""The subcommands that reach a server through `--kubeconfig` (`serve` writes one): a kubeconfig they cannot use
is refused before their component (and the client) is loaded, in a tenth of the time."""


def main(argv: list[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else argv
    args = build_parser(words[0] if words else None).parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    try:
        if args.command in READS_KUBECONFIG and args.kubeconfig:
            load_credentials(args.kubeconfig)
        module, _, function = RUNNERS[args.command].partition(":")
        run = getattr(importlib.import_module(module), function) if module else globals()[function]
        asyncio.run(run(args))
    except KubeconfigError as exc:  # as kubectl: one line saying which file and why
        raise SystemExit(f"mini-kube: {exc}") from None
    return 0

if __name__ == "__main__":
    sys.exit(main())
