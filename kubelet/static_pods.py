"""Static Pods and their mirror Pods. Upstream's kubelet runs the control plane from its manifest directory and
shows each of those static Pods in the API as a mirror Pod: `kube-system/<component>-<node>`, annotated
`kubernetes.io/config.mirror`, owned by its Node, never run from the API, made again when deleted. mini-kube
runs its components inside the `serve` process rather than as processes of their own, so the composer tells the
kubelet which run there (`StaticPod`: the component and the CRI-format log file it writes) and the kubelet
shows them the same way: Running and Ready while it runs, `kubectl logs` the component's own log."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
from dataclasses import dataclass
from typing import Any

from mini_kube.client import AlreadyExists, ApiClient, ApiError, NotFound
from mini_kube.machinery.refs import PODS
from mini_kube.machinery.times import now_rfc3339

log = logging.getLogger("mini-kube.kubelet")

MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
NAMESPACE = "kube-system"
IMAGE = "mini-kube/mini-kube:0.1.0"  # the installation that serves the cluster, which these components are
CONTROL_PLANE = ("kube-apiserver", "kube-controller-manager", "kube-scheduler", "cloud-controller-manager")
LABELS = {"kube-proxy": {"k8s-app": "kube-proxy"}, "coredns": {"k8s-app": "coredns"}}
RETRY = 2.0  # seconds between tries while the API refuses a mirror Pod


@dataclass(frozen=True)
class StaticPod:
    """A component this node's process runs, and the CRI-format log file its records go to."""

    component: str
    log_path: str


def is_mirror(pod: dict[str, Any]) -> bool:
    return MIRROR_ANNOTATION in ((pod.get("metadata") or {}).get("annotations") or {})


def mirror_name(component: str, node: str) -> str:
    return f"{component}-{node}"


def manifest(static: StaticPod, node: dict[str, Any]) -> dict[str, Any]:
    """The mirror Pod of `static` on `node`, as upstream's kubelet writes one (hostNetwork, system-node-critical,
    tolerating every NoExecute taint, owned by the Node)."""
    name = node["metadata"]["name"]
    config_hash = hashlib.sha256(f"{static.component}/{name}".encode()).hexdigest()[:32]
    labels = LABELS.get(static.component) or {"component": static.component, "tier": "control-plane"}
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "name": mirror_name(static.component, name), "namespace": NAMESPACE, "labels": dict(labels),
            "annotations": {MIRROR_ANNOTATION: config_hash, "kubernetes.io/config.hash": config_hash,
                            "kubernetes.io/config.source": "file", "kubernetes.io/config.seen": now_rfc3339()},
            "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": name, "uid": node["metadata"]["uid"],
                                 "controller": True}]},
        "spec": {
            "nodeName": name, "hostNetwork": True, "priorityClassName": "system-node-critical",
            "priority": 2000001000, "enableServiceLinks": True,
            "tolerations": [{"operator": "Exists", "effect": "NoExecute"}],
            "containers": [{"name": static.component, "image": IMAGE, "imagePullPolicy": "IfNotPresent",
                            "command": ["mini-kube", "serve"],
                            "terminationMessagePath": "/dev/termination-log",
                            "terminationMessagePolicy": "File"}]}}


def running_status(pod: dict[str, Any], address: str, started: str) -> dict[str, Any]:
    """Running and Ready since `started` (when the kubelet, and so the component, was running)."""
    container = pod["spec"]["containers"][0]
    conditions = [{"type": kind, "status": "True", "lastProbeTime": None, "lastTransitionTime": started}
                  for kind in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady",
                               "PodScheduled")]
    return {
        "phase": "Running", "conditions": conditions, "hostIP": address, "hostIPs": [{"ip": address}],
        "podIP": address, "podIPs": [{"ip": address}], "startTime": started, "qosClass": "BestEffort",
        "containerStatuses": [{"name": container["name"], "image": f"docker.io/{IMAGE}", "imageID": "",
                               "containerID": f"mini-kube://{pod['metadata']['name']}", "ready": True,
                               "started": True, "restartCount": 0, "lastState": {},
                               "state": {"running": {"startedAt": started}}}]}


class MirrorPods:
    """Keeps the mirror Pods of a node's static Pods in the API: made at start, made again when deleted."""

    def __init__(self, client: ApiClient, static: tuple[StaticPod, ...], address: str) -> None:
        self.client = client
        self.static = static
        self.address = address
        self.started = now_rfc3339()
        self._wanted = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def logs(self, node_name: str) -> dict[tuple[str, str, str], str]:
        """(namespace, pod, container) -> the log file that `kubectl logs` of that mirror Pod reads."""
        return {(NAMESPACE, mirror_name(s.component, node_name), s.component): s.log_path for s in self.static}

    def start(self, node: dict[str, Any]) -> None:
        if self.static:
            self._wanted.set()
            self._task = asyncio.create_task(self._keep(node), name=f"mirror pods {node['metadata']['name']}")

    def deleted(self) -> None:
        """A mirror Pod went: make it again (upstream's kubelet does, while the static Pod runs)."""
        self._wanted.set()

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    async def _keep(self, node: dict[str, Any]) -> None:
        while True:
            await self._wanted.wait()
            self._wanted.clear()
            try:
                await self._remove_orphans(node["metadata"]["name"])
                for static in self.static:
                    await self._ensure(manifest(static, node))
            except (ApiError, OSError) as exc:
                log.warning("mirror pods of node %s: %s", node["metadata"]["name"], exc)
                self._wanted.set()
                await asyncio.sleep(RETRY)

    async def _remove_orphans(self, node_name: str) -> None:
        """Delete this node's mirror Pods whose component no longer runs here (a restart with fewer), as
        upstream's kubelet deletes orphaned mirror Pods."""
        wanted = {mirror_name(s.component, node_name) for s in self.static}
        listed = await self.client.list(PODS, NAMESPACE, fieldSelector=f"spec.nodeName={node_name}")
        for pod in listed["items"]:
            if is_mirror(pod) and pod["metadata"]["name"] not in wanted:
                with contextlib.suppress(NotFound):
                    await self.client.delete(PODS, pod["metadata"]["name"], NAMESPACE)

    async def _ensure(self, pod: dict[str, Any]) -> None:
        name = pod["metadata"]["name"]
        try:
            live = await self.client.create(PODS, pod, NAMESPACE)
        except AlreadyExists:
            live = await self.client.get(PODS, name, NAMESPACE)
            if not is_mirror(live) or (live.get("status") or {}).get("startTime") == self.started:
                return  # already shown running since this start (or someone else's Pod of that name: left alone)
        live["status"] = running_status(live, self.address, self.started)
        with contextlib.suppress(NotFound):  # deleted meanwhile: the delete event asks for it again
            await self.client.replace_status(PODS, live, NAMESPACE)
