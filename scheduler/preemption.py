"""DefaultPreemption's PostFilter: when no node fits, could evicting lower-priority Pods make room?

Per rejected node: a rejection that eviction cannot fix (taints, node affinity, ...) is "Preemption is not
helpful for scheduling"; a node without lower-priority Pods is "No preemption victims found for incoming pod";
otherwise the node is tried without those Pods, and the ones that may stay are reprieved (highest priority
first). The best candidate (lowest highest-victim priority, then lowest priority sum, then fewest victims)
is returned for the scheduler to evict; with none, the message explains why."""

from __future__ import annotations

from dataclasses import dataclass

from .cache import Cache, NodeInfo, PodInfo
from .diagnosis import NEVER, NO_VICTIMS, NOT_HELPFUL, TERMINATING, nodes_unavailable
from .filters import Candidate, Failure, run_filters


@dataclass(slots=True)
class Plan:
    """Evict `victims` from `node` so the Pod fits there."""

    node: str
    victims: list[PodInfo]


def _without(node: NodeInfo, removed: list[PodInfo]) -> NodeInfo:
    copy = NodeInfo(node.name)
    if node.node is not None:
        copy.set_node(node.node)
    gone = {p.key for p in removed}
    for info in node.pods.values():
        if info.key not in gone:
            copy.add(info)
    return copy


def _victims_on(c: Candidate, node: NodeInfo, priority: int) -> tuple[list[PodInfo] | None, Failure]:
    lower = sorted((p for p in node.pods.values() if p.priority < priority and not p.terminating),
                   key=lambda p: -p.priority)
    if not lower:
        return None, Failure((NO_VICTIMS,), True)
    failure = run_filters(c, _without(node, lower))
    if failure is not None:
        return None, failure
    victims: list[PodInfo] = []
    for index, pod in enumerate(lower):  # reprieve whoever can stay, highest priority first
        if run_filters(c, _without(node, victims + lower[index + 1:])) is not None:
            victims.append(pod)
    return victims, Failure(())


def evaluate(c: Candidate, failures: dict[str, Failure], cache: Cache) -> tuple[str, Plan | None]:
    """(the `preemption: ...` message, or "" when a plan was found; the plan)."""
    spec = c.pod.get("spec") or {}
    if spec.get("preemptionPolicy") == "Never":
        return NEVER, None
    priority = int(spec.get("priority") or 0)
    nominated = cache.nodes.get((c.pod.get("status") or {}).get("nominatedNodeName") or "")
    if nominated is not None and any(p.terminating and p.priority < priority for p in nominated.pods.values()):
        return TERMINATING, None  # the victims of an earlier preemption are still going
    statuses: list[Failure] = []
    plans: list[Plan] = []
    for name, failure in failures.items():
        if failure.unresolvable:
            statuses.append(Failure((NOT_HELPFUL,), True))
            continue
        victims, status = _victims_on(c, cache.nodes[name], priority)
        if victims is None:
            statuses.append(status)
        else:
            plans.append(Plan(name, victims))
    if plans:
        best = min(plans, key=lambda p: (max((v.priority for v in p.victims), default=-(2**31)),
                                         sum(v.priority for v in p.victims), len(p.victims)))
        return "", best
    return "preemption: " + nodes_unavailable(len(failures), statuses), None
