"""The kubelet of one node: registers the Node, renews its Lease in kube-node-lease, posts node status, and runs
the Pods bound to it (one PodWorker each) through its runtime."""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mini_kube.client import AlreadyExists, ApiClient, ApiError, Conflict, NotFound, ResourceRef
from mini_kube.client.events import EventRecorder
from mini_kube.client.informer import Informer

from .deletion import final_delete
from .images import image_name
from .ipam import Ipam
from .node_status import default_capacity, node_object, node_status, status_events
from .pod_worker import PodWorker
from .runtime.base import Runtime

log = logging.getLogger("mini-kube.kubelet")
NODES = ResourceRef("", "v1", "nodes", namespaced=False)
PODS = ResourceRef("", "v1", "pods")
SERVICES = ResourceRef("", "v1", "services")
LEASES = ResourceRef("coordination.k8s.io", "v1", "leases")
KINDS = {"configmaps": ResourceRef("", "v1", "configmaps"), "secrets": ResourceRef("", "v1", "secrets")}
SERVICE_ACCOUNTS = ResourceRef("", "v1", "serviceaccounts")
STANDIN = Path(__file__).with_name("standin.py")
IMAGE_PORTS = {"nginx": 80, "httpd": 80, "caddy": 80, "traefik/whoami": 80, "hashicorp/http-echo": 5678}
IMAGE_DOCROOTS = {"nginx": "/usr/share/nginx/html", "httpd": "/usr/local/apache2/htdocs", "caddy": "/usr/share/caddy"}
"""Web server images whose stand-in serves files from the image's document root (a writable, initially empty
directory of the container's own), as the real server would: 404 for what is not there."""


@dataclass
class KubeletConfig:
    """How a node runs. `address`: its InternalIP (a loopback address); `pod_cidr`: where Pod IPs come from."""

    node_name: str
    address: str = "127.0.0.1"
    pod_cidr: str = "10.244.1.0/24"
    root: str = ""
    port: int = 10250
    capacity: dict[str, str] = field(default_factory=default_capacity)
    labels: dict[str, str] = field(default_factory=dict)
    taints: list[dict[str, Any]] = field(default_factory=list)
    lease_seconds: int = 40
    renew_interval: float = 10.0
    status_interval: float = 60.0
    backoff_base: float = 10.0
    config_retry: float = 2.0  # seconds between tries of a container whose ConfigMap/Secret is missing
    cgroups: bool = True  # process runtime: Pods and containers in cgroups with their limits, where writable
    pod_pids_limit: int = -1  # podPidsLimit: the most processes a Pod may have (-1: no limit)


class _Events:
    def __init__(self, recorder: EventRecorder) -> None:
        self.recorder = recorder

    def emit(self, obj: dict[str, Any], reason: str, message: str, type_: str = "Normal", *,
             field_path: str = "") -> None:
        self.recorder.event(obj, type_, reason, message, field_path)


def _micro_now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class Kubelet:
    def __init__(self, client: ApiClient, config: KubeletConfig, runtime: Runtime, *,
                 dialer: Any = None, api_token: str = "", network_netns: str | None = None) -> None:
        self.client = client
        self.config = config
        self.runtime = runtime
        self.name = config.node_name
        self.address = config.address
        self.root = Path(config.root)
        self.ipam = Ipam(config.pod_cidr)
        self.backoff_base = config.backoff_base
        self.config_retry = config.config_retry
        self.allocatable = dict(config.capacity)
        self.events = _Events(EventRecorder(client, "kubelet", config.node_name))
        self.workers: dict[str, PodWorker] = {}
        self.node: dict[str, Any] | None = None
        self._dialer = dialer
        self.api_token = api_token
        self.network_netns = network_netns
        self.pods = Informer(client, PODS, field_selector=f"spec.nodeName={config.node_name}")
        self.services_informer = Informer(client, SERVICES)
        self._tasks: list[asyncio.Task[None]] = []
        self._deletes: dict[str, asyncio.Task[None]] = {}  # final deletes of Pods that ended before this kubelet
        self.server: Any = None

    # -- helpers the pod workers use ---------------------------------------------------------------------------
    def services(self) -> list[dict[str, Any]]:
        return self.services_informer.list()

    async def get_object(self, kind: str, namespace: str, name: str) -> dict[str, Any] | None:
        try:
            return await self.client.get(KINDS[kind], name, namespace)
        except NotFound:
            return None

    async def request_token(self, pod: dict[str, Any], source: dict[str, Any]) -> str:
        account = (pod.get("spec") or {}).get("serviceAccountName") or "default"
        body = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                "spec": {"audiences": [source["audience"]] if source.get("audience") else None,
                         "expirationSeconds": source.get("expirationSeconds", 3607),
                         "boundObjectRef": {"apiVersion": "v1", "kind": "Pod", "name": pod["metadata"]["name"],
                                            "uid": pod["metadata"]["uid"]}}}
        try:
            answer = await self.client.request("POST", SERVICE_ACCOUNTS.path(
                pod["metadata"]["namespace"], account, "token"), body=body)
            return answer["status"]["token"]
        except ApiError as exc:
            log.info("no token for %s/%s: %s", pod["metadata"]["namespace"], account, exc)
            return ""

    def standin_argv(self, image: str, ports: list[int]) -> list[str]:
        """The program for a container with neither command nor args: HTTP on its ports (and its image's usual
        port, e.g. 80 for nginx), or just staying up; web servers' images serve their document root."""
        name = image_name(image)
        every = list(ports)
        if name in IMAGE_PORTS and IMAGE_PORTS[name] not in every:
            every.append(IMAGE_PORTS[name])
        docroot = ["--docroot", IMAGE_DOCROOTS[name]] if name in IMAGE_DOCROOTS else []
        return [sys.executable, "-I", "-S", str(STANDIN), *docroot, *map(str, every)]

    async def dial(self, host: str, port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """A TCP connection to a Pod (inside the cluster network when there is one)."""
        if self._dialer is not None:
            return await self._dialer(host, port)
        return await asyncio.open_connection(host, port)

    # -- lifecycle ---------------------------------------------------------------------------------------------
    async def start(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        if self.api_token:
            from .server import KubeletServer

            self.server = KubeletServer(self, self.api_token)
            try:
                self.config.port = await self.server.start(self.address, self.config.port)
            except OSError:  # the port is taken on this address: any free one (daemonEndpoints says which)
                self.config.port = await self.server.start(self.address, 0)
        self.events.emit(self.node_ref, "Starting", "Starting kubelet.")
        await self.register()
        unenforced = getattr(self.runtime, "unenforced", "")
        if unenforced and self.node is not None:
            self.events.emit(self.node_ref, "ResourceLimitsNotEnforced",
                             f"resources.limits of this node's Pods are not enforced: {unenforced}", "Warning")
        self.services_informer.start()
        self.pods.add_handler(self._pod_event)
        self.pods.start()
        self._tasks = [asyncio.create_task(self._renew_lease(), name=f"lease {self.name}"),
                       asyncio.create_task(self._post_status(), name=f"node status {self.name}")]

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self.pods.stop()
        for task in self._deletes.values():
            task.cancel()
        await asyncio.gather(*self._deletes.values(), return_exceptions=True)
        await self.services_informer.stop()
        await asyncio.gather(*(w.stop() for w in list(self.workers.values())), return_exceptions=True)
        self.workers.clear()
        if self.server is not None:
            await self.server.stop()
        await self.events.recorder.close()
        await self.runtime.close()
        await self.client.close()

    async def register(self) -> None:
        """Create the Node, or take over an existing one of the same name (its status refreshed)."""
        config = self.config
        wanted = node_object(self.name, self.address, config.pod_cidr, config.port, config.capacity,
                             config.labels, config.taints, self.runtime.name)
        try:
            self.node = await self.client.create(NODES, wanted)
            self._status_events(None, wanted["status"])
        except AlreadyExists:
            current = await self.client.get(NODES, self.name)
            self.node = await self._write_status(current)
        log.info("node %s registered at %s", self.name, self.address)

    async def _write_status(self, current: dict[str, Any]) -> dict[str, Any]:
        status = node_status(self.name, self.address, self.config.port, self.config.capacity, self.runtime.name,
                             current.get("status"))
        node = await self.client.patch(NODES, self.name, {"status": status}, subresource="status")
        self._status_events(current.get("status"), status)
        return node

    @property
    def node_ref(self) -> dict[str, Any]:
        """The Node as the kubelet's events name it: upstream's nodeRef, whose uid is the node's name."""
        return {"kind": "Node", "metadata": {"name": self.name, "uid": self.name}}

    def _status_events(self, previous: dict[str, Any] | None, status: dict[str, Any]) -> None:
        for reason in status_events(previous, status):
            self.events.emit(self.node_ref, reason, f"Node {self.name} status is now: {reason}")

    async def _post_status(self) -> None:
        while True:
            await asyncio.sleep(self.config.status_interval)
            try:
                current = await self.client.get(NODES, self.name)
                self.node = await self._write_status(current)
            except NotFound:
                await self.register()
            except ApiError as exc:
                log.warning("node %s: status not posted: %s", self.name, exc)

    async def _renew_lease(self) -> None:
        lease: dict[str, Any] | None = None
        while True:
            try:
                lease = await self._renew_once(lease)
            except (ApiError, OSError) as exc:
                lease = None
                log.warning("node %s: lease not renewed: %s", self.name, exc)
            await asyncio.sleep(self.config.renew_interval)

    async def _renew_once(self, lease: dict[str, Any] | None) -> dict[str, Any]:
        spec = {"holderIdentity": self.name, "leaseDurationSeconds": self.config.lease_seconds,
                "renewTime": _micro_now()}
        if lease is None:
            try:
                lease = await self.client.get(LEASES, self.name, "kube-node-lease")
            except NotFound:
                owner = [{"apiVersion": "v1", "kind": "Node", "name": self.name,
                          "uid": (self.node or {}).get("metadata", {}).get("uid", "")}]
                body = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                        "metadata": {"name": self.name, "namespace": "kube-node-lease", "ownerReferences": owner},
                        "spec": spec}
                with contextlib.suppress(AlreadyExists):
                    return await self.client.create(LEASES, body, "kube-node-lease")
                lease = await self.client.get(LEASES, self.name, "kube-node-lease")
        lease["spec"] = {**lease.get("spec", {}), **spec}
        try:
            return await self.client.replace(LEASES, lease, "kube-node-lease")
        except Conflict:
            return await self._renew_once(None)

    # -- pods --------------------------------------------------------------------------------------------------
    def _pod_event(self, event: str, old: dict[str, Any] | None, new: dict[str, Any] | None) -> None:
        if event == "delete":
            pod = old or new or {}
            uid = pod.get("metadata", {}).get("uid", "")
            deleting = self._deletes.pop(uid, None)
            if deleting is not None:
                deleting.cancel()
            worker = self.workers.pop(uid, None)
            if worker is not None:
                asyncio.create_task(worker.stop())
            return
        assert new is not None
        uid = new["metadata"]["uid"]
        worker = self.workers.get(uid)
        if worker is not None:
            worker.update(new)
            return
        phase = (new.get("status") or {}).get("phase")
        if new["metadata"].get("deletionTimestamp") and phase in ("Succeeded", "Failed"):
            if uid not in self._deletes:
                self._deletes[uid] = asyncio.create_task(final_delete(self.client, new))
                self._deletes[uid].add_done_callback(lambda _: self._deletes.pop(uid, None))
            return
        if phase in ("Succeeded", "Failed"):
            return  # finished before this kubelet started: never run again
        self.workers[uid] = PodWorker(self, new)
        if new["metadata"].get("deletionTimestamp"):
            self.workers[uid].update(new)
