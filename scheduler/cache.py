"""The scheduler's view of the cluster: each node with the Pods on it and what they use, kept from the
informers' events, plus *assumed* Pods (placed by this scheduler, binding not yet seen through the watch) so
that a burst of Pods never overcommits a node before the watch shows the bindings."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from mini_kube.machinery.hostports import host_ports

from .resources import CPU, MEMORY, PODS, Resources, allocatable, pod_requests

ASSUMED_TTL = 30.0  # seconds an assumed Pod may wait, after its binding returned, for the watch to show it
NOT_READY = "node.kubernetes.io/not-ready"
UNREACHABLE = "node.kubernetes.io/unreachable"


def pod_key(pod: dict[str, Any]) -> str:
    meta = pod.get("metadata") or {}
    return f"{meta.get('namespace')}/{meta.get('name')}"


@dataclass(slots=True)
class PodInfo:
    """What the scheduler keeps of a Pod placed on a node."""

    key: str
    namespace: str
    uid: str
    labels: dict[str, str]
    node: str
    requests: Resources
    non_zero: tuple[int, int]
    ports: list[tuple[str, str, int]]
    owner: str
    priority: int
    anti_affinity: list[dict[str, Any]]
    terminating: bool = False

    @classmethod
    def of(cls, pod: dict[str, Any], node: str) -> PodInfo:
        meta, spec = pod.get("metadata") or {}, pod.get("spec") or {}
        owner = next((r.get("uid", "") for r in meta.get("ownerReferences") or () if r.get("controller")), "")
        non_zero = pod_requests(pod, non_zero=True)
        affinity = (spec.get("affinity") or {}).get("podAntiAffinity") or {}
        return cls(pod_key(pod), meta.get("namespace", ""), meta.get("uid", ""), dict(meta.get("labels") or {}), node,
                   pod_requests(pod), (non_zero.get(CPU, 0), non_zero.get(MEMORY, 0)), host_ports(pod), owner,
                   int(spec.get("priority") or 0),
                   list(affinity.get("requiredDuringSchedulingIgnoredDuringExecution") or ()),
                   bool(meta.get("deletionTimestamp")))


@dataclass(slots=True)
class NodeInfo:
    """One node and the Pods placed on it."""

    name: str
    node: dict[str, Any] | None = None
    labels: dict[str, str] = field(default_factory=dict)
    taints: list[dict[str, Any]] = field(default_factory=list)
    unschedulable: bool = False
    allocatable: Resources = field(default_factory=dict)
    pods: dict[str, PodInfo] = field(default_factory=dict)
    requested: Resources = field(default_factory=dict)
    non_zero_cpu: int = 0
    non_zero_memory: int = 0
    ports: dict[tuple[str, str, int], int] = field(default_factory=dict)
    owners: dict[str, int] = field(default_factory=dict)

    def set_node(self, node: dict[str, Any]) -> None:
        self.node = node
        self.labels = dict((node.get("metadata") or {}).get("labels") or {})
        spec = node.get("spec") or {}
        self.taints = list(spec.get("taints") or ()) + _condition_taints(node, spec.get("taints") or ())
        self.unschedulable = bool(spec.get("unschedulable"))
        self.allocatable = allocatable(node)

    def add(self, info: PodInfo, sign: int = 1) -> None:
        for name, value in info.requests.items():
            self.requested[name] = self.requested.get(name, 0) + sign * value
        self.requested[PODS] = self.requested.get(PODS, 0) + sign
        self.non_zero_cpu += sign * info.non_zero[0]
        self.non_zero_memory += sign * info.non_zero[1]
        for port in info.ports:
            self.ports[port] = self.ports.get(port, 0) + sign
            if self.ports[port] <= 0:
                del self.ports[port]
        if info.owner:
            self.owners[info.owner] = self.owners.get(info.owner, 0) + sign
            if self.owners[info.owner] <= 0:
                del self.owners[info.owner]
        if sign > 0:
            self.pods[info.key] = info
        else:
            self.pods.pop(info.key, None)


def _condition_taints(node: dict[str, Any], taints: Any) -> list[dict[str, Any]]:
    """The NoSchedule taint the node lifecycle controller gives a node whose Ready condition is not True, when
    the node does not carry it yet (a node that never reported Ready is not schedulable)."""
    ready = next((c for c in (node.get("status") or {}).get("conditions") or () if c.get("type") == "Ready"), None)
    status = (ready or {}).get("status")
    if status == "True":
        return []
    key = UNREACHABLE if status == "Unknown" else NOT_READY
    if any(t.get("key") == key and t.get("effect") == "NoSchedule" for t in taints):
        return []
    return [{"key": key, "effect": "NoSchedule"}]


class Cache:
    """Nodes by name, where each Pod sits, and the assumed Pods."""

    def __init__(self) -> None:
        self.nodes: dict[str, NodeInfo] = {}
        self.pods: dict[str, PodInfo] = {}
        self.assumed: dict[str, float] = {}  # key -> deadline (inf while its binding is in flight)
        self.anti_affinity_pods: dict[str, PodInfo] = {}
        self.nominated: dict[str, PodInfo] = {}  # Pods waiting for room made for them by preemption

    # -- nodes -----------------------------------------------------------------------------------------
    def set_node(self, node: dict[str, Any]) -> None:
        name = (node.get("metadata") or {}).get("name", "")
        info = self.nodes.get(name)
        if info is None:
            info = self.nodes[name] = NodeInfo(name)
        info.set_node(node)

    def remove_node(self, name: str) -> None:
        info = self.nodes.get(name)
        if info is None:
            return
        if info.pods:
            info.node = None  # its Pods stay counted until they go (upstream keeps a ghost node too)
        else:
            del self.nodes[name]

    def schedulable_nodes(self) -> list[NodeInfo]:
        return [n for n in self.nodes.values() if n.node is not None]

    # -- pods ------------------------------------------------------------------------------------------
    def _place(self, info: PodInfo) -> None:
        node = self.nodes.get(info.node)
        if node is None:
            node = self.nodes[info.node] = NodeInfo(info.node)
        node.add(info)
        self.pods[info.key] = info
        if info.anti_affinity:
            self.anti_affinity_pods[info.key] = info

    def remove_pod(self, key: str) -> None:
        self.assumed.pop(key, None)
        self.nominated.pop(key, None)
        info = self.pods.pop(key, None)
        self.anti_affinity_pods.pop(key, None)
        if info is None:
            return
        node = self.nodes.get(info.node)
        if node is not None:
            node.add(info, -1)
            if node.node is None and not node.pods:
                del self.nodes[info.node]

    def set_pod(self, pod: dict[str, Any]) -> None:
        """A Pod the watch shows on a node (confirms it if it was assumed)."""
        key = pod_key(pod)
        node = (pod.get("spec") or {}).get("nodeName") or ""
        self.remove_pod(key)
        self._place(PodInfo.of(pod, node))

    def assume(self, pod: dict[str, Any], node: str) -> None:
        key = pod_key(pod)
        self.remove_pod(key)
        self._place(PodInfo.of(pod, node))
        self.assumed[key] = float("inf")

    def finish_binding(self, key: str) -> None:
        if key in self.assumed:
            self.assumed[key] = time.monotonic() + ASSUMED_TTL

    def forget(self, key: str) -> None:
        """Drop an assumed Pod (its binding failed)."""
        if key in self.assumed:
            self.remove_pod(key)

    def nominate(self, pod: dict[str, Any], node: str | None) -> None:
        """Record (or, with no node, drop) the node a preemption made room on for an unscheduled Pod."""
        key = pod_key(pod)
        if node:
            self.nominated[key] = PodInfo.of(pod, node)
        else:
            self.nominated.pop(key, None)

    def reserved(self, key: str, priority: int) -> dict[str, list[PodInfo]]:
        """node -> the nominated Pods (other than `key`) of at least `priority` that it keeps room for."""
        found: dict[str, list[PodInfo]] = {}
        for other, info in self.nominated.items():
            if other != key and info.priority >= priority:
                found.setdefault(info.node, []).append(info)
        return found

    def is_assumed(self, key: str) -> bool:
        return key in self.assumed

    def expire(self) -> list[str]:
        """Forget assumed Pods whose binding the watch never showed; returns their keys."""
        now = time.monotonic()
        gone = [k for k, deadline in self.assumed.items() if deadline < now]
        for key in gone:
            self.remove_pod(key)
        return gone
