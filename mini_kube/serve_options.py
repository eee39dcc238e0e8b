"""`mini-kube serve`'s arguments checked before anything is created (no data dir, CA or store for a refused
start): the first problem found, worded for one `mini-kube: ...` line."""

from __future__ import annotations

import argparse
import errno
import fcntl
import ipaddress
import socket
from pathlib import Path

DEFAULT_DATA_DIR = "~/.mini-kube"

REASONS = {errno.EADDRINUSE: "address already in use", errno.EADDRNOTAVAIL: "address not available",
           errno.EACCES: "permission denied"}


def _port(flag: str, value: int) -> str | None:
    return None if 0 <= value <= 65535 else f"{flag} {value} is not a port: must be between 0 and 65535"


def serve_args_problem(args: argparse.Namespace) -> str | None:
    """What is wrong with `serve`'s arguments, or None."""
    checks = [_port("--port", args.port), _port("--dns-port", args.dns_port)]
    for flag, value in (("--nodes", args.nodes), ("--max-requests-inflight", args.max_requests_inflight),
                        ("--max-mutating-requests-inflight", args.max_mutating_requests_inflight)):
        if value < 0:
            checks.append(f"{flag} {value} must not be negative")
    if args.join and not args.etcd_servers:
        checks.append("--join adds an API server to a cluster on a shared store: it needs --etcd-servers")
    if not args.address.strip():
        checks.append("--address must not be empty")
    try:
        ipaddress.ip_network(args.service_cluster_ip_range, strict=False)
    except ValueError:
        checks.append(f"--service-cluster-ip-range {args.service_cluster_ip_range!r} is not a CIDR "
                      "(e.g. 10.0.0.0/24)")
    if args.lb_pool and not args.no_ccm:
        from mini_kube.ccm.cloud import parse_pool

        try:
            parse_pool(args.lb_pool)
        except ValueError as exc:
            checks.append(f"--lb-pool {args.lb_pool}: {exc}")
    return next((c for c in checks if c), None) or listen_problem(args.address, args.port)


def listen_problem(address: str, port: int) -> str | None:
    """Why the server could not listen on address:port (busy, not this machine's, not allowed), tried with a
    socket closed at once, or None."""
    try:
        infos = socket.getaddrinfo(address, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as exc:
        return f"cannot listen on {address}:{port}: {getattr(exc, 'strerror', None) or exc}"
    family, kind, proto, _, sockaddr = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(sockaddr)
        except OSError as exc:
            return f"cannot listen on {address}:{port}: {REASONS.get(exc.errno or 0, exc.strerror or str(exc))}"
    return None


def kubeconfig_path(args: argparse.Namespace, data_dir: str) -> str:
    """Where `serve` writes its kubeconfig: --kubeconfig, else the data dir's (the default data dir's for
    :memory:, so `kubectl --kubeconfig ~/.mini-kube/kubeconfig` reaches a throw-away server too)."""
    if args.kubeconfig:
        return str(Path(args.kubeconfig).expanduser())
    base = Path(DEFAULT_DATA_DIR).expanduser() if data_dir == ":memory:" else Path(data_dir)
    return str(base / "kubeconfig")


def memory_kubeconfig_problem(args: argparse.Namespace) -> str | None:
    """A :memory: server must not overwrite the kubeconfig of a server running on the default data dir."""
    if args.data_dir != ":memory:" or args.kubeconfig:
        return None
    lock = Path(DEFAULT_DATA_DIR).expanduser() / "mini-kube.lock"
    try:
        handle = open(lock)  # noqa: SIM115 - closed below
    except OSError:
        return None
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return (f"{DEFAULT_DATA_DIR} is in use by another mini-kube server whose kubeconfig this one would "
                    "replace; give --kubeconfig FILE")
    return None
