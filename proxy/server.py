"""`ProxyServer`: the userspace kube-proxy of one node.

It watches Services and EndpointSlices and keeps, for every port of every proxied Service:
- a listener on the node's address at the NodePort (NodePort and LoadBalancer Services), forwarding to the
  endpoints external traffic may use (`externalTrafficPolicy`); when that address is a loopback one (127.A.B.x,
  as mini-kube's nodes have) and the cluster network is known, a second one on the same address inside it,
  where Pods' traffic to the node's address goes (network/cluster.py);
- with the cluster network namespace, a listener inside it on each ClusterIP:port (the namespace routes the
  whole service range locally, so any ClusterIP binds there), forwarding to the endpoints internal traffic may
  use (`internalTrafficPolicy`);
- for `externalTrafficPolicy: Local`, the HTTP health check on `healthCheckNodePort`.

The `kubernetes` Service goes to the API server the proxy itself uses, when that listens on loopback (which no
EndpointSlice may hold), so that pods reach the API server at its ClusterIP; with the cluster network's gateway
known, the proxy also relays the API server's port on the gateway address and publishes that address as the
Service's Endpoints and EndpointSlice (apiserver_endpoints.py), as upstream's API server publishes its own.

A listener exists only while it has endpoints to forward to, so a Service without endpoints refuses
connections at once (TCP RST; ICMP port unreachable for UDP), as upstream's REJECT rules do. Changes are
applied as soon as the informers deliver them: endpoint changes only swap the balancer's lists (the next
connection sees them, connections in flight are left alone), Service changes open and close listeners.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import errno
import logging
import socket
import time
from typing import Any
from urllib.parse import urlsplit

from mini_kube.client import ApiClient, ApiError
from mini_kube.client.informer import Informer, SharedInformerFactory, object_key
from mini_kube.client.node_token import node_token
from mini_kube.machinery.refs import ENDPOINTSLICES, NODES, SERVICES
from mini_kube.network.connlog import ConnectionLog

from .apiserver_endpoints import publish
from .balancer import Balancer
from .healthcheck import HttpListener, ServiceHealth, proxy_healthz
from .model import (
    SERVICE_NAME_LABEL,
    Endpoint,
    ServicePort,
    categorize,
    local_ready_count,
    service_ports,
    slice_endpoints,
)
from .nodes import NodeCIDRs
from .sockets import SocketMaker, is_loopback
from .tcp import TcpListener
from .udp import UdpListener

log = logging.getLogger("mini-kube.proxy")
SLICE_INDEX = "proxy-service"
RETRY_AFTER = 1.0
API_SERVICE = "default/kubernetes"
ELSEWHERE_RETRY = 2.0  # a ClusterIP another proxy serves in the shared namespace: take over if it goes
Listener = TcpListener | UdpListener
ListenerKey = tuple[str, str, int, str]  # kind, address, port, protocol
IN_CLUSTER = "external-in-cluster"  # a listener's kind: the NodePort on the node's address in the cluster network


def _slice_service(obj: dict[str, Any]) -> tuple[str, ...]:
    meta = obj.get("metadata") or {}
    name = (meta.get("labels") or {}).get(SERVICE_NAME_LABEL)
    return (f"{meta.get('namespace')}/{name}",) if name else ()


class PortState:
    """One ServicePort's endpoints, balancer and listeners."""

    __slots__ = ("port", "balancer", "listeners", "proxy", "endpoints", "_by_node")

    def __init__(self, port: ServicePort, proxy: ProxyServer) -> None:
        self.port = port
        self.balancer = Balancer(port.affinity_timeout)
        self.listeners: dict[ListenerKey, Listener] = {}
        self.proxy = proxy
        self.endpoints: list[Endpoint] = []
        self._by_node: dict[str, list[Endpoint]] = {}

    def update(self, port: ServicePort, endpoints: list[Endpoint]) -> None:
        self.port, self.endpoints = port, endpoints
        self._by_node = {}
        sets = categorize(endpoints, port, self.proxy.node_name)
        self.balancer.update(sets.internal(port), sets.external(port), port.affinity_timeout)

    def serves_internal(self) -> bool:
        """Whether ClusterIP traffic has anywhere to go: with internalTrafficPolicy Local, from some node."""
        if self.port.internal_local:
            return any(e.ready or (e.serving and e.terminating) for e in self.endpoints)
        return bool(self.balancer.internal)

    def pick(self, kind: str, client_ip: str, exclude: tuple[Endpoint, ...] = ()) -> Endpoint | None:
        """The endpoint for a new connection. ClusterIP traffic under internalTrafficPolicy Local goes to the
        endpoints on the client's node (known by its pod CIDR): every node's pods share the cluster network, so
        the proxy that accepts a connection may not be the client's node's."""
        if kind == "internal" and self.port.internal_local:
            node = self.proxy.node_of(client_ip)
            if node != self.proxy.node_name:
                local = self._by_node.get(node)
                if local is None:
                    local = self._by_node[node] = categorize(self.endpoints, self.port, node).local
                return self.balancer.pick(f"internal/{node}", client_ip, exclude, local)
        return self.balancer.pick(kind, client_ip, exclude)

    def usable(self, kind: str) -> set[Endpoint]:
        """Every endpoint a connection of `kind` may be using (for ending UDP sessions to removed ones)."""
        if kind == "internal" and self.port.internal_local:
            return {e for e in self.endpoints if e.ready or (e.serving and e.terminating)}
        return set(self.balancer.endpoints(kind))

    def note(self, listener: Listener, client: tuple[Any, ...], endpoint: Any) -> None:
        """Record one forwarded (or refused) connection or UDP session, for `records` and traces."""
        self.proxy.note(self.port, listener, client, endpoint)


class ProxyServer:
    """kube-proxy for `node_name`: NodePorts on `node_ip`, ClusterIPs inside `netns` (when given)."""

    def __init__(self, client: ApiClient, node_name: str, node_ip: str, netns: str | None = None, *,
                 gateway: str | None = None, informers: SharedInformerFactory | None = None,
                 healthz_port: int = 10256, udp_timeout: float = 30.0, record_limit: int = 1000) -> None:
        self.client = client
        self.node_name = node_name
        self.node_ip = node_ip
        self.netns = netns
        self.gateway = gateway if netns is not None else None  # where Pods reach the API server relayed
        self.maker = SocketMaker(netns)
        self.factory = informers or SharedInformerFactory(client)
        self._own_factory = informers is None
        self.healthz_port = healthz_port
        self.udp_timeout = udp_timeout
        self.log = ConnectionLog(self._record, record_limit)
        self.last_synced: dt.datetime | None = None
        self.syncs = 0
        self.services: Informer | None = None
        self.slices: Informer | None = None
        self.nodes: Informer | None = None
        self.cidrs = NodeCIDRs()
        self._states: dict[str, dict[tuple[str, str], PortState]] = {}
        self._health: dict[str, ServiceHealth] = {}
        self._healthz: HttpListener | None = None
        self._records_token: str | None = None  # /connections is served to requests bearing it
        self._dirty: set[str] = set()
        self._wake = asyncio.Event()
        self._idle = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._retries: dict[str, asyncio.TimerHandle] = {}
        self._stopped = False

    # -- lifecycle -------------------------------------------------------------------------------------------
    async def start(self) -> None:
        """Start watching and wait until the Services known now are programmed."""
        self.services = self.factory.informer(SERVICES)
        self.slices = self.factory.informer(ENDPOINTSLICES)
        self.slices.add_index(SLICE_INDEX, _slice_service)
        self.nodes = self.factory.informer(NODES)
        self.services.add_handler(self._service_changed)
        self.slices.add_handler(self._slice_changed)
        self.nodes.add_handler(self.cidrs.changed)
        for informer in (self.services, self.slices, self.nodes):
            informer.start()
        await asyncio.gather(self.services.synced.wait(), self.slices.synced.wait(), self.nodes.synced.wait())
        self._task = asyncio.create_task(self._run(), name=f"kube-proxy-{self.node_name}")
        self._wake.set()
        await self.wait_idle()
        if self.healthz_port:
            try:
                sock = self.maker.listening(self.node_ip, self.healthz_port, socket.SOCK_STREAM)
            except OSError as exc:
                log.warning("kube-proxy %s: healthz on %s:%s: %s", self.node_name, self.node_ip, self.healthz_port,
                            exc)
            else:
                self._records_token = await node_token(self.client, create=True)
                self._healthz = HttpListener(sock, proxy_healthz(lambda: self.last_synced, lambda: self.records,
                                                                 lambda: self._records_token))
                await self._healthz.start()
        log.info("kube-proxy %s: programmed %d services on %s%s", self.node_name, len(self._states), self.node_ip,
                 f" and in {self.netns}" if self.netns else " (no cluster network: ClusterIPs not served)")

    async def stop(self) -> None:
        """Close every listener (connections in flight end with the process's loop) and stop watching."""
        self._stopped = True
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
        for handle in self._retries.values():
            handle.cancel()
        self._retries.clear()
        for key in list(self._states):
            for state in self._states.pop(key).values():
                for listener in state.listeners.values():
                    listener.close()
        for key in list(self._health):
            await self._close_health(key)
        if self._healthz is not None:
            await self._healthz.close()
            self._healthz = None
        if self._own_factory:
            await self.factory.stop()
        self.maker.close()

    async def wait_idle(self) -> None:
        """Wait until every change seen so far is programmed."""
        while not self._idle.is_set():
            await self._idle.wait()

    # -- events ----------------------------------------------------------------------------------------------
    def _mark(self, key: str) -> None:
        if not self._stopped:
            self._dirty.add(key)
            self._idle.clear()
            self._wake.set()

    def _service_changed(self, _event: str, old: dict[str, Any] | None, new: dict[str, Any] | None) -> None:
        self._mark(object_key(new or old or {}))

    def _slice_changed(self, _event: str, old: dict[str, Any] | None, new: dict[str, Any] | None) -> None:
        for obj in (old, new):
            for key in _slice_service(obj or {}):
                self._mark(key)

    # -- sync ------------------------------------------------------------------------------------------------
    async def _run(self) -> None:
        while True:
            if not self._dirty:
                self._idle.set()
            await self._wake.wait()
            self._wake.clear()
            keys, self._dirty = self._dirty, set()
            started = time.perf_counter()
            for key in keys:
                try:
                    await self._sync_service(key)
                except Exception:
                    log.exception("kube-proxy %s: syncing %s failed; retrying", self.node_name, key)
                    self._retry(key)
            self.syncs += 1
            self.last_synced = dt.datetime.now(dt.UTC)
            log.debug("kube-proxy %s: synced %d services in %.1f ms", self.node_name, len(keys),
                      (time.perf_counter() - started) * 1000)

    def _retry(self, key: str, delay: float = RETRY_AFTER) -> None:
        if key not in self._retries and not self._stopped:
            def again() -> None:
                self._retries.pop(key, None)
                self._mark(key)
            self._retries[key] = asyncio.get_running_loop().call_later(delay, again)

    async def _sync_service(self, key: str) -> None:
        assert self.services is not None and self.slices is not None
        service = self.services.get(key)
        ports = service_ports(service) if service is not None else []
        slices = self.slices.by_index(SLICE_INDEX, key) if ports else []
        old_states = self._states.pop(key, {})
        states: dict[tuple[str, str], PortState] = {}
        all_endpoints = []
        failed = False
        for port in ports:
            ident = (port.port_name, port.protocol)
            state = old_states.pop(ident, None) or PortState(port, self)
            endpoints = slice_endpoints(slices, port)
            if key == API_SERVICE:  # the published endpoint is this relay: dial the API server itself
                endpoints = self._apiserver_endpoints() or endpoints
            all_endpoints.append(endpoints)
            state.update(port, endpoints)
            failed |= not await self._sync_listeners(state, key)
            states[ident] = state
        for state in old_states.values():
            for listener in state.listeners.values():
                listener.close()
        if states:
            self._states[key] = states
        await self._sync_health(key, ports, all_endpoints)
        if key == API_SERVICE and not failed:
            failed = not await self._publish_apiserver(states.values())
        if failed:
            self._retry(key)

    def _relay(self, state: PortState) -> ListenerKey | None:
        """The gateway listener relaying the API server for the `kubernetes` Service's TCP port."""
        port = state.port
        if self.gateway is None or port.service_key != API_SERVICE or port.protocol != "TCP" or not state.endpoints:
            return None
        if not is_loopback(state.endpoints[0].ip):
            return None
        return ("internal", self.gateway, state.endpoints[0].port, "TCP")

    async def _publish_apiserver(self, states: Any) -> bool:
        """Publish the relay this proxy holds (another node's proxy may hold it); False to retry later."""
        for state in states:
            relay = self._relay(state)
            if relay is not None and relay in state.listeners:
                try:
                    await publish(self.client, relay[1], relay[2])
                except ApiError as exc:
                    log.warning("kube-proxy %s: publishing the API server's endpoints: %s", self.node_name, exc)
                    return False
        return True

    def _wanted(self, state: PortState) -> set[ListenerKey]:
        port, wanted = state.port, set()
        if self.netns is not None and port.port and state.serves_internal():
            wanted |= {("internal", ip, port.port, port.protocol) for ip in port.cluster_ips}
        if port.node_port and state.balancer.external:
            wanted.add(("external", self.node_ip, port.node_port, port.protocol))
            if self.netns is not None and is_loopback(self.node_ip):
                wanted.add((IN_CLUSTER, self.node_ip, port.node_port, port.protocol))
        relay = self._relay(state)
        if relay is not None:
            wanted.add(relay)
        return wanted

    async def _sync_listeners(self, state: PortState, service_key: str) -> bool:
        """Open and close `state`'s listeners; False when one could not be opened (retried later). A ClusterIP
        already bound in the shared namespace is another proxy's (one per node, all in one cluster network):
        it serves every node's clients, and this proxy looks again now and then, to take over if it stops."""
        wanted = self._wanted(state)
        for key in [k for k in state.listeners if k not in wanted]:
            state.listeners.pop(key).close()
        for existing in state.listeners.values():
            if isinstance(existing, UdpListener):
                existing.endpoints_changed()
        ok = True
        for key in wanted - state.listeners.keys():
            kind, ip, number, protocol = key
            try:
                sock = self.maker.listening(ip, number, socket.SOCK_STREAM if protocol == "TCP" else socket.SOCK_DGRAM,
                                            inside=kind == IN_CLUSTER)
            except OSError as exc:
                if kind == "internal" and exc.errno == errno.EADDRINUSE:
                    self._retry(service_key, ELSEWHERE_RETRY)
                    continue
                log.warning("kube-proxy %s: cannot listen on %s:%s/%s for %s: %s", self.node_name, ip, number,
                            protocol, state.port.name, exc)
                ok = False
                continue
            traffic = "internal" if kind == "internal" else "external"  # which of the balancer's lists it uses
            listener: Listener = TcpListener(state, traffic, sock, self.maker) if protocol == "TCP" else \
                UdpListener(state, traffic, sock, self.maker, self.udp_timeout)
            await listener.start()
            state.listeners[key] = listener
        return ok

    async def _sync_health(self, key: str, ports: list[ServicePort], endpoints: list[list[Any]]) -> None:
        number = next((p.health_check_node_port for p in ports if p.health_check_node_port), 0)
        health = self._health.get(key)
        if health is not None and health.port != number:
            await self._close_health(key)
            health = None
        if not number:
            return
        if health is None:
            namespace, _, name = key.partition("/")
            health = ServiceHealth(namespace, name, lambda: self.last_synced is not None)
            try:
                sock = self.maker.listening(self.node_ip, number, socket.SOCK_STREAM)
            except OSError as exc:
                log.warning("kube-proxy %s: health check port %s of %s: %s", self.node_name, number, key, exc)
                self._retry(key)
                return
            health.port = number
            health.listener = HttpListener(sock, health.answer)
            await health.listener.start()
            self._health[key] = health
        health.local_endpoints = local_ready_count(endpoints, self.node_name)

    async def _close_health(self, key: str) -> None:
        health = self._health.pop(key, None)
        if health is not None and health.listener is not None:
            with contextlib.suppress(Exception):
                await health.listener.close()

    def _apiserver_endpoints(self) -> list[Endpoint]:
        """The `kubernetes` Service's endpoint when no EndpointSlice gives one: the API server this proxy talks
        to, when it listens on loopback (an address EndpointSlice validation refuses), dialled on the host."""
        url = urlsplit(self.client.connection.server)
        host = "127.0.0.1" if url.hostname == "localhost" else url.hostname or ""
        if not is_loopback(host):
            return []
        return [Endpoint(host, url.port or (443 if url.scheme == "https" else 80), node=self.node_name)]

    def node_of(self, ip: str) -> str:
        """The node of a client address (by pod CIDR; this proxy's node for any other address)."""
        return self.cidrs.node_of(ip, self.node_name)

    # -- introspection ---------------------------------------------------------------------------------------
    def note(self, port: ServicePort, listener: Listener, client: tuple[Any, ...], endpoint: Any) -> None:
        self.log.add(port.name, listener.protocol, listener.kind, listener.address, client, endpoint)
        log.debug("kube-proxy %s: %s %s -> %s", self.node_name, port.name, client, endpoint or "refused")

    def _record(self, service: str, protocol: str, kind: str, address: tuple[Any, ...], client: tuple[Any, ...],
                endpoint: Any) -> dict[str, Any]:
        return {"node": self.node_name, "service": service, "protocol": protocol,
                "via": "ClusterIP" if kind == "internal" else "NodePort", "listener": f"{address[0]}:{address[1]}",
                "client": f"{client[0]}:{client[1]}", "endpoint": str(endpoint) if endpoint is not None else None}

    @property
    def records(self) -> list[dict[str, Any]]:
        """The last forwarded (or refused) connections and UDP sessions, oldest first."""
        return self.log.records()

    def listeners(self) -> list[ListenerKey]:
        """What is open now: (kind, address, port, protocol), kind "internal" (ClusterIP), "external" (NodePort)
        or IN_CLUSTER (the NodePort on the node's address in the cluster network)."""
        return sorted(key for states in self._states.values() for state in states.values()
                      for key in state.listeners)
