"""The cluster DNS component: informers of Services, EndpointSlices and Pods feeding `ClusterRecords`, the
`kube-system/kube-dns` Service (ClusterIP 10.0.0.10: dns/53 UDP, dns-tcp/53 TCP, metrics/9153), and listeners:

- on the host loopback, 127.A.B.2:<port> (so load balancer names resolve from the machine itself);
- inside the cluster network namespace, on the kube-dns ClusterIP port 53 (sockets made in that namespace),
  where Pods' resolv.conf points; /metrics (Prometheus text) on port 9153 there and next to the host listener.

Where the cluster network is (its namespace and loopback block) comes from the ConfigMap
kube-system/mini-kube-network unless given; without a namespace only the host listener runs. The kube-dns
Service carries `service.kubernetes.io/service-proxy-name`, so kube-proxy leaves its ClusterIP to this server.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from typing import Any

from mini_kube.client import AlreadyExists, ApiClient, NotFound
from mini_kube.client.informer import SharedInformerFactory, object_key
from mini_kube.machinery.refs import CONFIGMAPS, ENDPOINTSLICES, PODS, SERVICES

from .records import ClusterRecords
from .server import DnsServer

log = logging.getLogger("mini-kube.dns")
NETWORK_CONFIGMAP = ("kube-system", "mini-kube-network")
SERVICE_KEY = "kube-system/kube-dns"
PROXY_NAME_LABEL = "service.kubernetes.io/service-proxy-name"
METRICS_PORT = 9153
DISCOVERY_RETRY = 1.0


def kube_dns_service(cluster_ip: str) -> dict[str, Any]:
    return {"metadata": {"name": "kube-dns", "namespace": "kube-system", "labels": {
        "k8s-app": "kube-dns", "kubernetes.io/cluster-service": "true", "kubernetes.io/name": "CoreDNS",
        PROXY_NAME_LABEL: "mini-kube-dns"}},
        "spec": {"clusterIP": cluster_ip, "ports": [
            {"name": "dns", "port": 53, "protocol": "UDP", "targetPort": 53},
            {"name": "dns-tcp", "port": 53, "protocol": "TCP", "targetPort": 53},
            {"name": "metrics", "port": METRICS_PORT, "protocol": "TCP", "targetPort": METRICS_PORT}]}}


class ClusterDNS:
    """The cluster DNS server; `start()` / `stop()`. `host_port` is the host listener's port once it runs."""

    def __init__(self, client: ApiClient, *, host_address: str | None = None, port: int = 53,
                 netns: str | None = None, dns_ip: str | None = None, cluster_domain: str = "cluster.local",
                 ttl: int = 30, discover: bool = True, informers: SharedInformerFactory | None = None) -> None:
        self.client = client
        self.host_address = host_address
        self.port = port
        self.netns = netns
        self.dns_ip = dns_ip
        self.discover = discover  # find what was not given in the cluster network's ConfigMap
        self.records = ClusterRecords(cluster_domain, ttl)
        self.server = DnsServer(self.records)
        self.informers = informers or SharedInformerFactory(client)
        self._own_informers = informers is None
        self.host_port: int | None = None
        self.netns_listening = False
        self.ready = asyncio.Event()
        self._metrics: list[asyncio.Server] = []
        self._task: asyncio.Task[None] | None = None
        self._own_service_seen = asyncio.Event()  # the informer has delivered kube-system/kube-dns

    async def start(self) -> None:
        self.informers.informer(SERVICES).add_handler(self._note_own_service)
        for ref, handler in ((SERVICES, self.records.on_service), (ENDPOINTSLICES, self.records.on_slice),
                             (PODS, self.records.on_pod)):
            informer = self.informers.informer(ref)
            informer.add_handler(handler)
            informer.start()
        self._task = asyncio.get_running_loop().create_task(self._run(), name="cluster-dns")

    async def _network(self) -> dict[str, str]:
        namespace, name = NETWORK_CONFIGMAP
        while True:
            try:
                return dict((await self.client.get(CONFIGMAPS, name, namespace)).get("data") or {})
            except NotFound:
                if self.host_address:
                    return {}
                log.info("cluster DNS: waiting for ConfigMap %s/%s (the cluster network)", namespace, name)
            except Exception as exc:  # noqa: BLE001 - the server may be starting
                log.debug("cluster DNS: %s", exc)
            await asyncio.sleep(DISCOVERY_RETRY)

    async def _run(self) -> None:
        network = await self._network() if self.discover else {}
        if self.host_address is None and network.get("loopbackBlock"):
            self.host_address = f"{network['loopbackBlock']}.2"
        self.dns_ip = self.dns_ip or network.get("dnsIP") or "10.0.0.10"
        if self.netns is None and network.get("netns"):
            self.netns = network["netns"]
        await self._ensure_service()
        await asyncio.gather(*(i.synced.wait() for i in (self.informers.informer(r) for r in (SERVICES, ENDPOINTSLICES, PODS))))
        await self._see_own_service()
        if self.host_address:
            try:
                self.host_port = await self.server.listen(self.host_address, self.port)
                self._metrics.append(await self._serve_metrics(self.host_address, 0))
                log.info("cluster DNS on %s:%s", self.host_address, self.host_port)
            except OSError as exc:
                log.warning("cluster DNS: cannot listen on %s:%s: %s", self.host_address, self.port, exc)
        if self.netns:
            await self._listen_in_netns()
        self.ready.set()

    async def _listen_in_netns(self) -> None:
        from mini_kube.network.namespaces import socket_in

        assert self.netns is not None and self.dns_ip is not None
        netns = self.netns

        def make(family: int, kind: int) -> socket.socket:
            return socket_in(netns, family, kind)
        try:
            await self.server.listen(self.dns_ip, 53, make)
            self._metrics.append(await self._serve_metrics(self.dns_ip, METRICS_PORT, make))
            self.netns_listening = True
            log.info("cluster DNS on %s:53 in %s", self.dns_ip, netns)
        except OSError as exc:
            log.warning("cluster DNS: cannot listen on %s:53 in %s: %s", self.dns_ip, netns, exc)

    async def _ensure_service(self) -> None:
        assert self.dns_ip is not None
        try:
            await self.client.create(SERVICES, kube_dns_service(self.dns_ip), "kube-system")
        except AlreadyExists:
            pass
        except Exception as exc:  # noqa: BLE001 - the address may be taken: DNS still serves on the host
            log.warning("cluster DNS: cannot create Service kube-system/kube-dns: %s", exc)

    async def _see_own_service(self, timeout: float = 2.0) -> None:
        """Wait (briefly) until the informer has delivered the kube-dns Service, so that the first answers know
        it: the informers listed before `_ensure_service` created it, so it arrives by the watch."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._own_service_seen.wait(), timeout)

    def _note_own_service(self, event: str, old: dict[str, Any] | None, new: dict[str, Any] | None) -> None:
        if new is not None and event != "delete" and object_key(new) == SERVICE_KEY:
            self._own_service_seen.set()

    async def _serve_metrics(self, host: str, port: int, make: Any = None) -> asyncio.Server:
        """GET /metrics: request and response counts, in Prometheus' text format (CoreDNS's metric names)."""
        async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
                counts = self.server.handler.counts
                lines = ["# TYPE coredns_dns_requests_total counter",
                         f'coredns_dns_requests_total{{server="dns://:53"}} {counts["requests"]}',
                         "# TYPE coredns_dns_responses_total counter"]
                lines += [f'coredns_dns_responses_total{{server="dns://:53",rcode="{rcode}"}} {n}'
                          for rcode, n in sorted(counts.items()) if rcode != "requests"]
                body = ("\n".join(lines) + "\n").encode()
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: "
                             + str(len(body)).encode() + b"\r\nConnection: close\r\n\r\n" + body)
                await writer.drain()
            writer.close()
        if make is None:
            return await asyncio.start_server(answer, host, port, reuse_address=True)
        sock = make(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.setblocking(False)
        return await asyncio.start_server(answer, sock=sock)

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        await self.server.close()
        for server in self._metrics:
            server.close()
        if self._own_informers:
            await self.informers.stop()
