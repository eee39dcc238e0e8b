"""The kubelet of one node: registers the Node, renews its Lease in kube-node-lease, posts node status, and runs
the Pods bound to it (one PodWorker each) through its runtime."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mini_kube.client import AlreadyExists, ApiClient, ApiError, Conflict, NotFound
from mini_kube.client.events import EventRecorder
from mini_kube.client.informer import Informer
from mini_kube.machinery.refs import LEASES, NODES, PODS, SERVICES
from mini_kube.machinery.times import now_micro

from . import apparmor, sysctls
from .actions import Dialer
from .admission import refusal, reject
from .deletion import final_delete
from .imagestore.node_images import NodeImages
from .ipam import Ipam
from .node_status import default_capacity, node_object, node_status, status_events
from .pod_worker import PodWorker
from .registration import NodeNameTaken, live_kubelet
from .runtime.base import Runtime
from .server import KubeletServer
from .static_pods import MirrorPods, StaticPod, is_mirror
from .worker_env import NodeEvents, WorkerEnv, WorkerSettings

log = logging.getLogger("mini-kube.kubelet")


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
    housekeeping_interval: float = 10.0  # seconds between measures of Pods' local storage against their limits
    sync_frequency: float = 60.0  # seconds between syncs of running Pods' ConfigMap, Secret, downward API volumes
    unknown_images: str = "standin"  # an image not built in: "fail" its pull (serve's default) or run "standin"
    container_log_max_size: int = 10 * 1024 * 1024  # --container-log-max-size: a log file is rotated at this
    container_log_max_files: int = 5  # --container-log-max-files: the files a container's log keeps
    image_map: str | dict[str, Any] | list[Any] | None = None  # --image-map: a file, or its YAML parsed
    image_store: str = ""  # where `mini-kube image load` keeps images ("": no loaded images)
    static_pods: tuple[StaticPod, ...] = ()  # components this node's process runs, shown as mirror Pods


class Kubelet:
    """The node's agent. It owns every task it starts (lease, status, final deletes, workers being stopped) and
    ends them on `stop`; each Pod's worker gets the node's `env`, never the kubelet itself."""

    def __init__(self, client: ApiClient, config: KubeletConfig, runtime: Runtime, *,
                 dialer: Dialer | None = None, api_token: str = "", network_netns: str | None = None) -> None:
        self.client = client
        self.config = config
        self.runtime = runtime
        self.name = config.node_name
        self.address = config.address
        self.root = Path(config.root)
        self.events = NodeEvents(EventRecorder(client, "kubelet", config.node_name))
        self.workers: dict[str, PodWorker] = {}
        self.node: dict[str, Any] | None = None
        self.api_token = api_token
        self.network_netns = network_netns
        self.pods = Informer(client, PODS, field_selector=f"spec.nodeName={config.node_name}")
        self.services_informer = Informer(client, SERVICES)
        self.env = WorkerEnv(client=client, runtime=runtime, events=self.events, ipam=Ipam(config.pod_cidr),
                             root=self.root, address=config.address, allocatable=dict(config.capacity),
                             services=self.services_informer.list,
                             settings=WorkerSettings(config.backoff_base, config.config_retry,
                                                     config.housekeeping_interval,
                                                     container_log_max_size=config.container_log_max_size,
                                                     container_log_max_files=config.container_log_max_files,
                                                     unknown_images=config.unknown_images,
                                                     volume_sync=config.sync_frequency),
                             dialer=dialer, images=NodeImages.from_config(config.image_map, config.image_store))
        self._tasks: list[asyncio.Task[None]] = []
        self._deletes: dict[str, asyncio.Task[None]] = {}  # final deletes of Pods that ended before this kubelet
        self._rejecting: dict[str, asyncio.Task[None]] = {}  # status writes of Pods admission refused
        self._stopping: set[asyncio.Task[None]] = set()  # workers of Pods gone from the API, being stopped
        self.server: KubeletServer | None = None
        self.mirrors = MirrorPods(client, config.static_pods, config.address)

    # -- lifecycle ---------------------------------------------------------------------------------------------
    async def start(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        if self.api_token:
            self.server = KubeletServer(self.workers, self.runtime, self.api_token, self.network_netns)
            try:
                self.config.port = await self.server.start(self.address, self.config.port)
            except OSError:  # the port is taken on this address: any free one (daemonEndpoints says which)
                self.config.port = await self.server.start(self.address, 0)
        self.events.emit(self.node_ref, "Starting", "Starting kubelet.")
        try:
            await self.register()
        except NodeNameTaken:  # nothing of this kubelet is left running
            if self.server is not None:
                await self.server.stop()
            await self.events.recorder.close()
            await self.runtime.close()
            await self.client.close()
            raise
        if self.runtime.unenforced and self.node is not None:
            self.events.emit(self.node_ref, "ResourceLimitsNotEnforced",
                             f"resources.limits of this node's Pods are not enforced: {self.runtime.unenforced}",
                             "Warning")
        if self.server is not None:
            self.server.static_logs = self.mirrors.logs(self.name)
        if self.node is not None:
            self.mirrors.start(self.node)
        self.services_informer.start()
        self.pods.add_handler(self._pod_event)
        self.pods.start()
        self._tasks = [asyncio.create_task(self._renew_lease(), name=f"lease {self.name}"),
                       asyncio.create_task(self._post_status(), name=f"node status {self.name}")]

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self.mirrors.stop()
        await self.pods.stop()
        for task in [*self._deletes.values(), *self._rejecting.values()]:
            task.cancel()
        await asyncio.gather(*self._deletes.values(), *self._rejecting.values(), return_exceptions=True)
        await self.services_informer.stop()
        await asyncio.gather(*(w.stop() for w in list(self.workers.values())), *self._stopping,
                             return_exceptions=True)
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
            holder = await live_kubelet(current, (self.address, config.port)) if self.server is not None else None
            if holder:
                raise NodeNameTaken(f"node {self.name} is already run by a live kubelet at {holder}; "
                                    "stop it or choose another name") from None
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
                "renewTime": now_micro()}
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
        if is_mirror(new or old or {}):  # the API's view of a static Pod: never run from here
            if event == "delete":
                self.mirrors.deleted()  # made again, as upstream's kubelet does while the static Pod runs
            elif new is not None and new["metadata"].get("deletionTimestamp"):
                uid = new["metadata"]["uid"]
                if uid not in self._deletes:  # a graceful delete: the static Pod runs on, the mirror goes at once
                    self._deletes[uid] = asyncio.create_task(final_delete(self.client, new))
                    self._deletes[uid].add_done_callback(lambda _: self._deletes.pop(uid, None))
            return
        if event == "delete":
            pod = old or new or {}
            uid = pod.get("metadata", {}).get("uid", "")
            deleting = self._deletes.pop(uid, None)
            if deleting is not None:
                deleting.cancel()
            worker = self.workers.pop(uid, None)
            if worker is not None:
                stopping = asyncio.create_task(worker.stop(), name=f"stop pod {uid}")
                self._stopping.add(stopping)
                stopping.add_done_callback(self._stopping.discard)
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
        rejected = refusal(new, (w.pod for w in self.workers.values() if not w.finished.is_set())) or \
            apparmor.refusal(new) or sysctls.refusal(new)
        if rejected is not None:
            if uid not in self._rejecting:
                self.events.emit(new, rejected[0], rejected[1], "Warning")
                self._rejecting[uid] = asyncio.create_task(reject(self.client, new, *rejected))
                self._rejecting[uid].add_done_callback(lambda _: self._rejecting.pop(uid, None))
            return
        worker = self.workers[uid] = PodWorker(new, self.env)
        worker.start()
        if new["metadata"].get("deletionTimestamp"):
            worker.update(new)
