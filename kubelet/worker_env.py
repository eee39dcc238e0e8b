"""What a PodWorker uses of its node, built once by the kubelet: the API client, the runtime, the node's event
emitter, its address, Pod IPs and directories, the cluster's Services, and the timings of retries. A worker
reaches nothing else of the kubelet (as upstream's pod workers are given their syncer, recorder and back-off)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mini_kube.client import ApiClient, ApiError, NotFound, ResourceRef
from mini_kube.client.events import EventRecorder
from mini_kube.machinery.refs import SERVICEACCOUNTS

from .actions import Dialer
from .imagestore.node_images import NodeImages
from .ipam import Ipam
from .runtime.base import Runtime

log = logging.getLogger("mini-kube.kubelet")
KINDS = {"configmaps": ResourceRef("", "v1", "configmaps"), "secrets": ResourceRef("", "v1", "secrets")}


class NodeEvents:
    """The kubelet's events (source `kubelet`, its node as host), about Pods, their containers and the Node."""

    def __init__(self, recorder: EventRecorder) -> None:
        self.recorder = recorder

    def emit(self, obj: dict[str, Any], reason: str, message: str, type_: str = "Normal", *,
             field_path: str = "") -> None:
        self.recorder.event(obj, type_, reason, message, field_path)


@dataclass(frozen=True)
class WorkerSettings:
    """Timings of a node's pod workers: the first CrashLoopBackOff delay (doubled up to 5 min), and the seconds
    between tries of a container whose ConfigMap or Secret is missing."""

    backoff_base: float = 10.0
    config_retry: float = 2.0
    housekeeping_interval: float = 10.0  # seconds between measures of Pods' local storage against their limits
    volume_sync: float = 60.0  # syncFrequency: seconds between syncs of running Pods' ConfigMap, Secret... volumes
    unknown_images: str = "standin"  # an image not built in: "fail" to pull it (as a real node), or "standin"
    container_log_max_size: int = 10 * 1024 * 1024  # bytes a container's log file grows to before rotation
    container_log_max_files: int = 5  # files a container's log keeps, the current one included


@dataclass
class WorkerEnv:
    """Everything a PodWorker uses of its node."""

    client: ApiClient
    runtime: Runtime
    events: NodeEvents
    ipam: Ipam  # Pod IPs of the node's podCIDR
    root: Path  # the node's directory: Pods live in root/pods/<uid>
    address: str  # the node's InternalIP (hostIP, and a hostNetwork Pod's IP)
    allocatable: dict[str, str]  # what resourceFieldRef limits default to
    services: Callable[[], list[dict[str, Any]]]  # the cluster's Services (for containers' environments)
    settings: WorkerSettings
    dialer: Dialer | None = None  # connections into the cluster network, where there is one
    images: NodeImages | None = None  # the node's image map and loaded images (besides the built-in ones)

    def pod_directory(self, uid: str) -> Path:
        return self.root / "pods" / uid

    async def dial(self, host: str, port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """A TCP connection to a Pod (inside the cluster network when there is one)."""
        if self.dialer is not None:
            return await self.dialer(host, port)
        return await asyncio.open_connection(host, port)

    async def get_object(self, kind: str, namespace: str, name: str) -> dict[str, Any] | None:
        """A ConfigMap or Secret (`kind` is its plural), None when there is none."""
        try:
            return await self.client.get(KINDS[kind], name, namespace)
        except NotFound:
            return None

    async def request_token(self, pod: dict[str, Any], source: dict[str, Any]) -> str:
        """A token of the Pod's service account bound to the Pod, for a projected serviceAccountToken source
        ("" when none can be had)."""
        account = (pod.get("spec") or {}).get("serviceAccountName") or "default"
        body = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                "spec": {"audiences": [source["audience"]] if source.get("audience") else None,
                         "expirationSeconds": source.get("expirationSeconds", 3607),
                         "boundObjectRef": {"apiVersion": "v1", "kind": "Pod", "name": pod["metadata"]["name"],
                                            "uid": pod["metadata"]["uid"]}}}
        try:
            answer = await self.client.request("POST", SERVICEACCOUNTS.path(
                pod["metadata"]["namespace"], account, "token"), body=body)
            return answer["status"]["token"]
        except ApiError as exc:
            log.info("no token for %s/%s: %s", pod["metadata"]["namespace"], account, exc)
            return ""
