"""Scores: among the feasible nodes, which is best? Each plugin gives 0..100 per node (normalized as upstream
normalizes it) and the weighted sum decides; ties are broken at random, as upstream's selectHost does.

Plugins and weights of the default profile: TaintToleration 3 (fewer untolerated PreferNoSchedule taints),
NodeAffinity 2 (preferred terms), spreading 2 (fewer Pods of the same controller on the node and in its zone,
what SelectorSpread / the default topology spreading do), NodeResourcesFit 1 (least allocated) and
NodeResourcesBalancedAllocation 1."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from mini_kube.machinery.labels import node_term_matches
from mini_kube.machinery.taints import tolerates

from .cache import NodeInfo
from .filters import Candidate
from .resources import CPU, MEMORY, pod_requests

ZONE = "topology.kubernetes.io/zone"
MAX = 100


def resource_scores(nz: tuple[int, int], nodes: Sequence[NodeInfo]) -> list[float]:
    """NodeResourcesFit (least allocated) + NodeResourcesBalancedAllocation, both weight 1, on cpu and memory
    requests counted as upstream's scoring counts them (unset: 100m and 200Mi)."""
    scores = []
    for node in nodes:
        cpu_cap, mem_cap = node.allocatable.get(CPU, 0), node.allocatable.get(MEMORY, 0)
        cpu, memory = node.non_zero_cpu + nz[0], node.non_zero_memory + nz[1]
        least = 0.0
        if cpu_cap > 0 and cpu <= cpu_cap:
            least += (cpu_cap - cpu) * MAX // cpu_cap
        if mem_cap > 0 and memory <= mem_cap:
            least += (mem_cap - memory) * MAX // mem_cap
        cpu_share = min(cpu / cpu_cap, 1.0) if cpu_cap else 1.0
        mem_share = min(memory / mem_cap, 1.0) if mem_cap else 1.0
        scores.append(least / 2 + (1 - abs(cpu_share - mem_share) / 2) * MAX)
    return scores


def taint_toleration(c: Candidate, nodes: Sequence[NodeInfo]) -> list[float]:
    if not any(n.taints for n in nodes):
        return [float(MAX)] * len(nodes)
    tolerations = [t for t in c.tolerations if (t.get("effect") or "PreferNoSchedule") == "PreferNoSchedule"]
    counts = [sum(1 for taint in n.taints if taint.get("effect") == "PreferNoSchedule"
                  and not any(tolerates(t, taint) for t in tolerations)) for n in nodes]
    most = max(counts, default=0)
    return [MAX - count * MAX / most if most else MAX for count in counts]


def node_affinity(c: Candidate, nodes: Sequence[NodeInfo]) -> list[float]:
    preferred = (((c.pod.get("spec") or {}).get("affinity") or {}).get("nodeAffinity") or {}).get(
        "preferredDuringSchedulingIgnoredDuringExecution") or ()
    if not preferred:
        return [0.0] * len(nodes)
    sums = [sum(int(p.get("weight") or 0) for p in preferred
                if node_term_matches(p.get("preference") or {}, n.name, n.labels)) for n in nodes]
    most = max(sums, default=0)
    return [s * MAX / most if most else 0.0 for s in sums]


def spreading(owner: str, nodes: Sequence[NodeInfo]) -> list[float]:
    """Fewer Pods of the same controller score higher; with zones, the zone's count weighs 2/3."""
    if not owner:
        return [float(MAX)] * len(nodes)
    counts = [n.owners.get(owner, 0) for n in nodes]
    most = max(counts, default=0)
    scores = [MAX * (most - count) / most if most else float(MAX) for count in counts]
    zones: dict[str, int] = {}
    for node, count in zip(nodes, counts, strict=True):
        if ZONE in node.labels:
            zones[node.labels[ZONE]] = zones.get(node.labels[ZONE], 0) + count
    if zones:
        most_zone = max(zones.values())
        for i, node in enumerate(nodes):
            zone = node.labels.get(ZONE)
            if zone is not None:
                zone_score = MAX * (most_zone - zones[zone]) / most_zone if most_zone else float(MAX)
                scores[i] = scores[i] / 3 + zone_score * 2 / 3
    return scores


def owner_of(pod: dict[str, Any]) -> str:
    return next((r.get("uid", "") for r in (pod.get("metadata") or {}).get("ownerReferences") or ()
                 if r.get("controller")), "")


def select_host(c: Candidate, nodes: Sequence[NodeInfo], rng: random.Random | None = None) -> NodeInfo:
    """The best-scoring feasible node (one node needs no scoring)."""
    if len(nodes) == 1:
        return nodes[0]
    requests = pod_requests(c.pod, non_zero=True)
    nz = (requests.get(CPU, 0), requests.get(MEMORY, 0))
    totals = [0.0] * len(nodes)
    for weight, scores in ((3, taint_toleration(c, nodes)), (2, node_affinity(c, nodes)),
                           (2, spreading(owner_of(c.pod), nodes)), (1, resource_scores(nz, nodes))):
        for i, score in enumerate(scores):
            totals[i] += weight * score
    best = max(totals)
    winners = [n for n, total in zip(nodes, totals, strict=True) if total >= best - 1e-9]
    return (rng or random).choice(winners)
