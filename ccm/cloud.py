"""The fake cloud: instances (the machines nodes run on) and load balancers that are real listeners.

A load balancer owns one address of the pool (127.A.B.100-199) and listens there on every service port, TCP
or UDP; it spreads connections round robin over the healthy backends, each a node's address and the
service's node port. Health is checked as a cloud does, every `health_interval` seconds: a TCP connect to the
node port, or, for `externalTrafficPolicy: Local`, HTTP GET /healthz on the health-check node port (200 means
the node has local endpoints); a backend that refuses a connection is taken out at once until it passes again.
With no healthy backend it fails open, as the clouds' network load balancers do, and tries them all.
Everything listens and dials only on 127.0.0.0/8.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import ipaddress
import logging
from dataclasses import dataclass, field
from typing import Any

from mini_kube.network.connlog import ConnectionLog

from .relay import Backend, TcpListener, UdpListener

log = logging.getLogger("mini-kube.ccm.cloud")
LOOPBACK = ipaddress.ip_network("127.0.0.0/8")
PROVIDER = "mini-kube"
HEALTH_TIMEOUT = 0.5
TRACE_LIMIT = 1000


class CloudError(Exception):
    """The cloud cannot do what was asked (no free address, a port it cannot listen on, ...)."""


def parse_pool(text: str) -> list[str]:
    """`127.1.2.100-127.1.2.199`, `127.1.2.100-199`, a CIDR, or addresses separated by commas; loopback only."""
    addresses: list[str] = []
    for part in (p.strip() for p in text.split(",") if p.strip()):
        if "/" in part:
            net = ipaddress.ip_network(part, strict=False)
            found = [str(a) for a in (net.hosts() if net.num_addresses > 2 else net)]
        elif "-" in part:
            first, last = part.split("-", 1)
            start = ipaddress.ip_address(first)
            end = ipaddress.ip_address(last if "." in last else first.rsplit(".", 1)[0] + "." + last)
            found = [str(ipaddress.ip_address(i)) for i in range(int(start), int(end) + 1)]
        else:
            found = [str(ipaddress.ip_address(part))]
        bad = [a for a in found if ipaddress.ip_address(a) not in LOOPBACK]
        if bad:
            raise ValueError(f"load balancer addresses must be in 127.0.0.0/8 (got {bad[0]})")
        addresses += found
    return addresses


def is_loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address) in LOOPBACK
    except ValueError:
        return False


@dataclass
class Instance:
    """A machine of the cloud, as its API describes it."""

    name: str
    addresses: list[dict[str, str]] = field(default_factory=list)
    instance_type: str = "mini-kube.standard"
    zone: str = "local-a"
    region: str = "local"
    state: str = "running"  # or "stopped"

    @property
    def provider_id(self) -> str:
        return f"{PROVIDER}://{self.name}"


@dataclass(frozen=True)
class LBPort:
    protocol: str
    port: int
    node_port: int


@dataclass(frozen=True)
class LBSpec:
    """What a load balancer should be: its ports, the node addresses behind it, and how to check them."""

    ports: tuple[LBPort, ...]
    nodes: tuple[str, ...]
    health_check_node_port: int = 0  # 0: TCP connect to each node port
    requested_ip: str = ""
    service: str = ""  # the description: which Service it serves (namespace/name)
    source_ranges: tuple[str, ...] = ()  # clients allowed (CIDRs); empty: all
    client_ip_affinity: bool = False  # a client's connections go to one node while it stays healthy


async def _tcp_ok(host: str, port: int) -> bool:
    try:
        _, writer = await asyncio.wait_for(asyncio.open_connection(host, port), HEALTH_TIMEOUT)
    except (OSError, TimeoutError):
        return False
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()
    return True


async def _http_ok(host: str, port: int) -> bool:
    """GET /healthz: 200 means healthy (kube-proxy's health-check node port answers 503 without local
    endpoints)."""
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), HEALTH_TIMEOUT)
    except (OSError, TimeoutError):
        return False
    try:
        writer.write(f"GET /healthz HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n\r\n".encode())
        line = await asyncio.wait_for(reader.readline(), HEALTH_TIMEOUT)
        parts = line.split()
        return len(parts) >= 2 and parts[1] == b"200"
    except (OSError, TimeoutError):
        return False
    finally:
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()


class LoadBalancer:
    """One load balancer: listeners on `ip`, backends with their health, round robin per listener."""

    def __init__(self, cloud: FakeCloud, name: str, ip: str) -> None:
        self.cloud, self.name, self.ip = cloud, name, ip
        self.spec = LBSpec((), ())
        self.listeners: dict[tuple[str, int], TcpListener | UdpListener] = {}
        self._healthy: set[Backend] = set()
        self._ready: dict[tuple[str, int], list[Backend]] = {}  # per listener: its healthy backends, in order
        self._turn: dict[tuple[str, int], int] = {}
        self._checker: asyncio.Task[None] | None = None

    # -- backends -------------------------------------------------------------------------------------------
    @property
    def healthy(self) -> set[Backend]:
        return self._healthy

    @healthy.setter
    def healthy(self, backends: set[Backend]) -> None:
        self._healthy = backends
        self._ready.clear()

    def backends(self, port: LBPort) -> list[Backend]:
        return [(node, port.node_port) for node in self.spec.nodes]

    def port(self, key: tuple[str, int]) -> LBPort | None:
        return next((p for p in self.spec.ports if (p.protocol, p.port) == key), None)

    def allowed(self, client: str) -> bool:
        """Whether `client` may use the load balancer (its source ranges; none: everyone)."""
        if not self.spec.source_ranges:
            return True
        try:
            address = ipaddress.ip_address(client)
        except ValueError:
            return False
        return any(address in ipaddress.ip_network(r, strict=False) for r in self.spec.source_ranges)

    def candidates(self, key: tuple[str, int], client: Any = None) -> list[Backend]:
        """The healthy backends for the listener `key` (protocol, port) in the order to try them: starting with
        the next in turn, or, with client-IP affinity, with the one the client's address maps to. None for a
        client outside the source ranges."""
        ready = self._ready.get(key)
        if ready is None:
            port = self.port(key)
            backends = self.backends(port) if port else []
            # with no healthy backend the load balancer fails open, as the clouds' network load balancers do:
            # it tries them all (a new Service's node ports may listen before the next health check sees them)
            ready = self._ready[key] = [b for b in backends if b in self._healthy] or backends
        if not ready or (client and not self.allowed(client[0])):
            return []
        if self.spec.client_ip_affinity and client:
            start = int(ipaddress.ip_address(client[0])) % len(ready)
        else:
            turn = self._turn.get(key, 0)
            self._turn[key] = turn + 1
            start = turn % len(ready)
        return ready[start:] + ready[:start]

    def failed(self, backend: Backend) -> None:
        self._healthy.discard(backend)
        self._ready.clear()

    def record(self, key: tuple[str, int], client: Any, backend: Backend, via: Any) -> None:
        """One relayed connection (or UDP flow), for tracing a request's hops."""
        self.cloud.trace.add(self.name, self.spec.service, self.ip, key, client, backend, via)

    async def check(self) -> None:
        """One round of health checks over every backend."""
        spec = self.spec
        if spec.health_check_node_port:
            nodes = list(spec.nodes)
            results = await asyncio.gather(*(_http_ok(n, spec.health_check_node_port) for n in nodes))
            up = {n for n, ok in zip(nodes, results, strict=True) if ok}
            self.healthy = {(n, p.node_port) for p in spec.ports for n in up}
            return
        tcp = sorted({b for p in spec.ports if p.protocol == "TCP" for b in self.backends(p)})
        results = await asyncio.gather(*(_tcp_ok(*b) for b in tcp))
        healthy = {b for b, ok in zip(tcp, results, strict=True) if ok}
        # UDP cannot be probed by a connect: a node is taken as healthy for UDP when it is for TCP (or has none)
        up = {b[0] for b in healthy} if tcp else set(spec.nodes)
        healthy |= {(n, p.node_port) for p in spec.ports if p.protocol == "UDP" for n in up}
        self.healthy = healthy

    async def _check_loop(self) -> None:
        while True:
            await asyncio.sleep(self.cloud.health_interval)
            try:
                await self.check()
            except Exception:  # noqa: BLE001 - a failed round must not end the checks
                log.exception("health check of %s failed", self.name)

    # -- lifecycle ------------------------------------------------------------------------------------------
    async def apply(self, spec: LBSpec) -> None:
        """Make the listeners and backends match `spec` (unchanged listeners keep their connections)."""
        wanted = {(p.protocol, p.port): p for p in spec.ports}
        for key in [k for k in self.listeners if k not in wanted]:
            self.listeners.pop(key).close()
        self.spec = spec
        self._ready.clear()
        await self.check()
        for key, port in wanted.items():
            if key in self.listeners:
                continue
            listener: TcpListener | UdpListener
            if port.protocol == "TCP":
                listener = TcpListener(self.ip, port.port, functools.partial(self.candidates, key), self.failed,
                                       functools.partial(self.record, key))
            elif port.protocol == "UDP":
                listener = UdpListener(self.ip, port.port, functools.partial(self.candidates, key),
                                       functools.partial(self.record, key))
            else:
                raise CloudError(f"protocol {port.protocol} is not supported by this cloud's load balancers")
            try:
                await listener.start()
            except OSError as exc:
                raise CloudError(f"cannot listen on {self.ip}:{port.port}/{port.protocol}: {exc.strerror}") from exc
            self.listeners[key] = listener
        if self._checker is None:
            self._checker = asyncio.get_running_loop().create_task(self._check_loop(), name=f"lb-health-{self.name}")

    async def close(self) -> None:
        if self._checker is not None:
            self._checker.cancel()
            await asyncio.gather(self._checker, return_exceptions=True)
            self._checker = None
        for listener in self.listeners.values():
            listener.close()
        self.listeners.clear()


def _trace_record(name: str, service: str, ip: str, key: tuple[str, int], client: Any, backend: Backend,
                  via: Any) -> dict[str, Any]:
    return {"loadBalancer": name, "service": service, "protocol": key[0], "listener": f"{ip}:{key[1]}",
            "client": f"{client[0]}:{client[1]}" if client else "", "via": f"{via[0]}:{via[1]}" if via else "",
            "backend": f"{backend[0]}:{backend[1]}"}


class FakeCloud:
    """An in-memory cloud: instances, an address pool and load balancers that really listen."""

    def __init__(self, pool: list[str] | None = None, *, health_interval: float = 1.0, adopt: bool = True) -> None:
        self.pool = list(pool or [])
        self.health_interval = health_interval
        self.adopt = adopt  # machines the cloud has not heard of are taken as its own at first sight
        self.instances: dict[str, Instance] = {}
        self.removed: set[str] = set()
        self.load_balancers: dict[str, LoadBalancer] = {}
        self.trace = ConnectionLog(_trace_record, TRACE_LIMIT)
        self._lock = asyncio.Lock()

    # -- instances ------------------------------------------------------------------------------------------
    def add_instance(self, name: str, addresses: list[dict[str, str]] | None = None, **attrs: Any) -> Instance:
        self.removed.discard(name)
        instance = self.instances[name] = Instance(name, list(addresses or []), **attrs)
        return instance

    def remove_instance(self, name: str) -> None:
        """The machine is gone (terminated): its Node will be deleted once it is no longer Ready."""
        self.instances.pop(name, None)
        self.removed.add(name)

    def instance(self, name: str) -> Instance | None:
        """The instance called `name` (adopting an unknown one when the cloud does: its addresses are then
        what the machine reports), or None."""
        found = self.instances.get(name)
        if found is None and self.adopt and name not in self.removed:
            found = self.add_instance(name)
        return found

    # -- load balancers -------------------------------------------------------------------------------------
    def _free_ip(self, requested: str) -> str:
        taken = {lb.ip for lb in self.load_balancers.values()}
        if requested:
            if requested not in self.pool:
                raise CloudError(f"requested address {requested} is not in the load balancer pool")
            if requested in taken:
                raise CloudError(f"requested address {requested} is already in use")
            return requested
        for ip in self.pool:
            if ip not in taken:
                return ip
        raise CloudError("no free address in the load balancer pool" if self.pool else
                         "no load balancer address pool is configured")

    def get_load_balancer(self, name: str) -> LoadBalancer | None:
        return self.load_balancers.get(name)

    async def ensure_load_balancer(self, name: str, spec: LBSpec) -> LoadBalancer:
        """Create or update the load balancer `name`; returns it (its `ip` is the ingress address)."""
        if any(not is_loopback(n) for n in spec.nodes):
            spec = dataclasses.replace(spec, nodes=tuple(n for n in spec.nodes if is_loopback(n)))
        async with self._lock:
            lb = self.load_balancers.get(name)
            if lb is not None and spec.requested_ip and lb.ip != spec.requested_ip:
                await self.ensure_deleted(name)
                lb = None
            created = lb is None
            if lb is None:
                lb = self.load_balancers[name] = LoadBalancer(self, name, self._free_ip(spec.requested_ip))
        try:
            await lb.apply(spec)
        except Exception:
            if created:
                await self.ensure_deleted(name)
            raise
        return lb

    async def ensure_deleted(self, name: str) -> bool:
        """Delete the load balancer `name` (and free its address); False when there was none."""
        lb = self.load_balancers.pop(name, None)
        if lb is not None:
            await lb.close()
        return lb is not None

    async def close(self) -> None:
        for name in list(self.load_balancers):
            await self.ensure_deleted(name)
