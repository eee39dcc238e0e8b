"""Filters: can the Pod run on this node? Each returns None (yes) or a `Failure` with upstream's reasons, in
the default profile's order (NodeUnschedulable, NodeName, TaintToleration, NodeAffinity, NodePorts,
NodeResourcesFit, InterPodAffinity); the first failing filter decides a node's reasons.

`Candidate` holds what is computed once per attempt (requests, tolerations, the topology domains that pod
(anti-)affinity rules forbid or require), so that each node costs a few dictionary lookups."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mini_kube.machinery.hostports import host_ports, ports_conflict
from mini_kube.machinery.labels import matches as label_selector_matches
from mini_kube.machinery.labels import node_selector_matches
from mini_kube.machinery.taints import tolerates

from .cache import Cache, NodeInfo, PodInfo, pod_key
from .resources import CPU, MEMORY, PODS, STORAGE, Resources, pod_requests

UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"
REASON_UNSCHEDULABLE = "node(s) were unschedulable"
REASON_NODE_NAME = "node(s) didn't match the requested node name"
REASON_NODE_AFFINITY = "node(s) didn't match Pod's node affinity/selector"
REASON_PORTS = "node(s) didn't have free ports for the requested pod ports"
REASON_TOO_MANY_PODS = "Too many pods"
REASON_AFFINITY = "node(s) didn't match pod affinity rules"
REASON_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
REASON_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"


@dataclass(frozen=True, slots=True)
class Failure:
    """Why a node was rejected; `unresolvable` when evicting Pods could not help (UnschedulableAndUnresolvable)."""

    reasons: tuple[str, ...]
    unresolvable: bool = False


def _namespace_matcher(term: dict[str, Any], own: str) -> Callable[[str], bool]:
    """Which namespaces an affinity term looks at: its list, its namespace selector (empty: all; the
    `kubernetes.io/metadata.name` label every namespace carries), else the Pod's own namespace."""
    names = set(term.get("namespaces") or ())
    selector = term.get("namespaceSelector")
    if selector is None:
        return (lambda ns: ns in names) if names else (lambda ns: ns == own)
    if not selector.get("matchLabels") and not selector.get("matchExpressions"):
        return lambda ns: True
    return lambda ns: ns in names or label_selector_matches(selector, {"kubernetes.io/metadata.name": ns})


@dataclass(slots=True)
class Term:
    """A PodAffinityTerm ready to match Pods."""

    topology_key: str
    selector: dict[str, Any] | None
    namespaces: Callable[[str], bool]

    @classmethod
    def of(cls, term: dict[str, Any], namespace: str) -> Term:
        return cls(term.get("topologyKey") or "", term.get("labelSelector"), _namespace_matcher(term, namespace))

    def matches(self, namespace: str, labels: dict[str, str]) -> bool:
        return self.namespaces(namespace) and label_selector_matches(self.selector, labels)


@dataclass(slots=True)
class Candidate:
    """The Pod being scheduled, with what every filter needs computed once."""

    pod: dict[str, Any]
    key: str
    namespace: str
    labels: dict[str, str]
    requests: Resources
    ports: list[tuple[str, str, int]]
    tolerations: list[dict[str, Any]]
    node_name: str
    node_selector: dict[str, str]
    required_affinity: dict[str, Any] | None
    affinity_terms: list[Term] = field(default_factory=list)
    affinity_domains: set[tuple[str, str]] = field(default_factory=set)
    matches_own_affinity: bool = False
    anti_domains: set[tuple[str, str]] = field(default_factory=set)
    existing_anti_domains: set[tuple[str, str]] = field(default_factory=set)
    reserved: dict[str, list[PodInfo]] = field(default_factory=dict)  # node -> nominated Pods kept room for
    wanted: tuple[str, ...] = ()  # the resources requested, in the order their reasons are listed
    checks: tuple[Callable[[Candidate, NodeInfo], Failure | None], ...] = ()  # the filters that can fail it

    @classmethod
    def of(cls, pod: dict[str, Any], cache: Cache) -> Candidate:
        meta, spec = pod.get("metadata") or {}, pod.get("spec") or {}
        affinity = spec.get("affinity") or {}
        required = (affinity.get("nodeAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution")
        candidate = cls(pod, pod_key(pod), meta.get("namespace", ""), dict(meta.get("labels") or {}),
                        pod_requests(pod), host_ports(pod), list(spec.get("tolerations") or ()),
                        spec.get("nodeName") or "", dict(spec.get("nodeSelector") or {}), required)
        candidate._pod_affinity(affinity, cache)
        candidate.reserved = cache.reserved(candidate.key, int(spec.get("priority") or 0)) if cache.nominated else {}
        scalar = sorted(k for k, v in candidate.requests.items() if v > 0 and k not in (CPU, MEMORY, STORAGE, PODS))
        candidate.wanted = tuple(k for k in (CPU, MEMORY, STORAGE) if candidate.requests.get(k, 0) > 0) + \
            tuple(scalar)
        candidate.checks = tuple(f for f, needed in (
            (node_unschedulable, True), (node_name, bool(candidate.node_name)), (taint_toleration, True),
            (node_affinity, bool(candidate.node_selector) or candidate.required_affinity is not None),
            (node_ports, bool(candidate.ports)), (node_resources_fit, True),
            (inter_pod_affinity, bool(candidate.affinity_terms or candidate.anti_domains or
                                      candidate.existing_anti_domains))) if needed)
        return candidate

    def _pod_affinity(self, affinity: dict[str, Any], cache: Cache) -> None:
        required = "requiredDuringSchedulingIgnoredDuringExecution"
        self.affinity_terms = [Term.of(t, self.namespace)
                               for t in (affinity.get("podAffinity") or {}).get(required) or ()]
        anti = [Term.of(t, self.namespace) for t in (affinity.get("podAntiAffinity") or {}).get(required) or ()]
        if self.affinity_terms or anti:
            for info in cache.pods.values():
                if info.key == self.key:
                    continue
                labels = _node_labels(cache, info)
                if labels is None:
                    continue
                if self.affinity_terms and all(t.matches(info.namespace, info.labels) for t in self.affinity_terms):
                    for term in self.affinity_terms:
                        if term.topology_key in labels:
                            self.affinity_domains.add((term.topology_key, labels[term.topology_key]))
                for term in anti:
                    if term.topology_key in labels and term.matches(info.namespace, info.labels):
                        self.anti_domains.add((term.topology_key, labels[term.topology_key]))
            self.matches_own_affinity = all(t.matches(self.namespace, self.labels) for t in self.affinity_terms)
        for info in cache.anti_affinity_pods.values():  # existing Pods whose anti-affinity repels this one
            labels = _node_labels(cache, info)
            if labels is None or info.key == self.key:
                continue
            for raw in info.anti_affinity:
                term = Term.of(raw, info.namespace)
                if term.topology_key in labels and term.matches(self.namespace, self.labels):
                    self.existing_anti_domains.add((term.topology_key, labels[term.topology_key]))


def _node_labels(cache: Cache, info: PodInfo) -> dict[str, str] | None:
    node = cache.nodes.get(info.node)
    return node.labels if node is not None and node.node is not None else None


# -- the filters, in the default profile's order -------------------------------------------------------
def node_unschedulable(c: Candidate, node: NodeInfo) -> Failure | None:
    if not node.unschedulable:
        return None
    taint = {"key": UNSCHEDULABLE_TAINT, "effect": "NoSchedule"}
    if any(tolerates(t, taint) for t in c.tolerations):
        return None
    return Failure((REASON_UNSCHEDULABLE,), True)


def node_name(c: Candidate, node: NodeInfo) -> Failure | None:
    if c.node_name and c.node_name != node.name:
        return Failure((REASON_NODE_NAME,), True)
    return None


def taint_toleration(c: Candidate, node: NodeInfo) -> Failure | None:
    if not node.taints:
        return None
    for taint in node.taints:
        if taint.get("effect") not in ("NoSchedule", "NoExecute"):
            continue
        if not any(tolerates(t, taint) for t in c.tolerations):
            return Failure((f"node(s) had untolerated taint {{{taint.get('key', '')}: {taint.get('value') or ''}}}",),
                           True)
    return None


def node_affinity(c: Candidate, node: NodeInfo) -> Failure | None:
    labels = node.labels
    if any(labels.get(k) != v for k, v in c.node_selector.items()) or (
            c.required_affinity is not None and not node_selector_matches(c.required_affinity, node.name, labels)):
        return Failure((REASON_NODE_AFFINITY,), True)
    return None


def node_ports(c: Candidate, node: NodeInfo) -> Failure | None:
    return Failure((REASON_PORTS,)) if ports_conflict(c.ports, node.ports) else None


def node_resources_fit(c: Candidate, node: NodeInfo) -> Failure | None:
    reasons = []
    requests, allocatable, requested = c.requests, node.allocatable, node.requested
    held = c.reserved.get(node.name)
    if held:  # room a preemption made for a Pod of at least this priority is not this Pod's
        requested = dict(requested)
        for info in held:
            requested[PODS] = requested.get(PODS, 0) + 1
            for name, value in info.requests.items():
                requested[name] = requested.get(name, 0) + value
    if requested.get(PODS, 0) + 1 > allocatable.get(PODS, 0):
        reasons.append(REASON_TOO_MANY_PODS)
    for name in c.wanted:
        if requests[name] > allocatable.get(name, 0) - requested.get(name, 0):
            reasons.append(f"Insufficient {name}")
    return Failure(tuple(reasons)) if reasons else None


def inter_pod_affinity(c: Candidate, node: NodeInfo) -> Failure | None:
    labels = node.labels
    if c.affinity_terms:
        if any(t.topology_key not in labels for t in c.affinity_terms):
            return Failure((REASON_AFFINITY,), True)
        if not all((t.topology_key, labels[t.topology_key]) in c.affinity_domains for t in c.affinity_terms) and \
                not (not c.affinity_domains and c.matches_own_affinity):
            return Failure((REASON_AFFINITY,), True)
    if c.anti_domains and any(pair in c.anti_domains for pair in labels.items()):
        return Failure((REASON_ANTI_AFFINITY,))
    if c.existing_anti_domains and any(pair in c.existing_anti_domains for pair in labels.items()):
        return Failure((REASON_EXISTING_ANTI_AFFINITY,))
    return None


FILTERS: tuple[Callable[[Candidate, NodeInfo], Failure | None], ...] = (
    node_unschedulable, node_name, taint_toleration, node_affinity, node_ports, node_resources_fit,
    inter_pod_affinity)


def run_filters(c: Candidate, node: NodeInfo) -> Failure | None:
    for check in c.checks or FILTERS:
        failure = check(c, node)
        if failure is not None:
            return failure
    return None
