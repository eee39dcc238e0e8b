"""How many replicas each of a Deployment's ReplicaSets should have, as kube-controller-manager works it out:
proportional scaling when the Deployment's size changes mid-rollout (scale), and the rolling update's steps
(reconcileNewReplicaSet, reconcileOldReplicaSets with cleanupUnhealthyReplicas). Pure functions over the
objects; the controller applies the sizes."""

from __future__ import annotations

import math
from typing import Any

from mini_kube.machinery.meta import meta

DESIRED = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS = "deployment.kubernetes.io/max-replicas"


def resolve(value: Any, total: int, round_up: bool) -> int:
    """An int-or-percent of `total`, rounded as upstream rounds it."""
    if isinstance(value, str) and value.endswith("%"):
        exact = int(value[:-1]) * total / 100
        return math.ceil(exact) if round_up else math.floor(exact)
    return int(value or 0)


def wanted(d: dict[str, Any]) -> int:
    """The Deployment's spec.replicas."""
    return int((d.get("spec") or {}).get("replicas", 1))


def surge_and_unavailable(d: dict[str, Any]) -> tuple[int, int]:
    """maxSurge (rounded up) and maxUnavailable (rounded down, at most replicas) of a RollingUpdate Deployment;
    both 0 means 1 unavailable. A Recreate Deployment has neither."""
    spec = d.get("spec") or {}
    if ((spec.get("strategy") or {}).get("type") or "RollingUpdate") != "RollingUpdate":
        return 0, 0
    replicas = wanted(d)
    rolling = ((spec.get("strategy") or {}).get("rollingUpdate") or {})
    surge = resolve(rolling.get("maxSurge", "25%"), replicas, True)
    unavailable = resolve(rolling.get("maxUnavailable", "25%"), replicas, False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, min(unavailable, replicas)


def size(rs: dict[str, Any]) -> int:
    """A ReplicaSet's spec.replicas."""
    return int((rs.get("spec") or {}).get("replicas", 0) or 0)


def available(rs: dict[str, Any]) -> int:
    return int((rs.get("status") or {}).get("availableReplicas") or 0)


def _annotation(rs: dict[str, Any], key: str) -> int | None:
    value = (meta(rs).get("annotations") or {}).get(key)
    return int(value) if value is not None and value.lstrip("-").isdigit() else None


def _created(rs: dict[str, Any]) -> tuple[str, str]:
    return meta(rs).get("creationTimestamp") or "", meta(rs).get("name") or ""


def is_scaling_event(d: dict[str, Any], replicasets: list[dict[str, Any]]) -> bool:
    """An active ReplicaSet remembers another desired size than the Deployment's (isScalingEvent)."""
    return any(_annotation(rs, DESIRED) not in (None, wanted(d)) for rs in replicasets if size(rs) > 0)


def _fraction(rs: dict[str, Any], d: dict[str, Any]) -> int:
    """The change this ReplicaSet's share of the new maximum means (getReplicaSetFraction)."""
    if wanted(d) == 0:
        return -size(rs)
    maximum = wanted(d) + surge_and_unavailable(d)[0]
    before = _annotation(rs, MAX_REPLICAS) or int((d.get("status") or {}).get("replicas") or 0)
    if not before:
        return 0
    exact = size(rs) * maximum / before
    return int(math.floor(exact + 0.5)) - size(rs)  # round half away from zero (positive here)


def proportional_sizes(d: dict[str, Any], new: dict[str, Any] | None,
                       old: list[dict[str, Any]]) -> list[tuple[dict[str, Any], int]]:
    """The sizes `scale` gives: the one active (or else the newest) ReplicaSet takes the whole size; a saturated
    new one leaves the old at 0; otherwise a rolling Deployment's new maximum (replicas + surge) is shared in
    proportion to each active ReplicaSet's size, the rounding leftover going to the largest."""
    replicas = wanted(d)
    active = [rs for rs in ([new] if new else []) + old if size(rs) > 0]
    if not active:
        newest = new or max(old, key=_created, default=None)
        return [(newest, replicas)] if newest is not None else []
    if len(active) == 1:
        return [(active[0], replicas)]
    if new is not None and size(new) == replicas and _annotation(new, DESIRED) == replicas \
            and available(new) == replicas:
        return [(rs, 0) for rs in old if size(rs) > 0]
    if ((d.get("spec") or {}).get("strategy") or {}).get("type") == "Recreate":
        return []
    allowed = replicas + surge_and_unavailable(d)[0] if replicas > 0 else 0
    to_add = allowed - sum(size(rs) for rs in active)
    if to_add > 0:  # larger first; among equals, newer first when growing, older first when shrinking
        active.sort(key=_created, reverse=True)
    else:
        active.sort(key=_created)
    active.sort(key=size, reverse=True)
    added = 0
    sizes = []
    for rs in active:
        share = 0
        if to_add and added != to_add:
            fraction = _fraction(rs, d)
            share = min(fraction, to_add - added) if to_add > 0 else max(fraction, to_add - added)
        sizes.append(size(rs) + share)
        added += share
    if to_add:
        sizes[0] = max(sizes[0] + to_add - added, 0)
    return list(zip(active, sizes, strict=True))


def new_replicaset_size(d: dict[str, Any], every: list[dict[str, Any]], new: dict[str, Any]) -> int:
    """The new ReplicaSet's next size in a rolling update (NewRSNewReplicas): grown while the total stays within
    replicas + maxSurge, never past replicas."""
    replicas = wanted(d)
    if size(new) >= replicas:
        return replicas
    surge, _ = surge_and_unavailable(d)
    room = replicas + surge - sum(size(rs) for rs in every)
    return size(new) + max(0, min(room, replicas - size(new)))


def old_replicaset_sizes(d: dict[str, Any], new: dict[str, Any],
                         old: list[dict[str, Any]]) -> list[tuple[dict[str, Any], int]]:
    """The old ReplicaSets' next sizes in a rolling update (reconcileOldReplicaSets): first their Pods that are not
    available, then available ones while the availability stays at least replicas - maxUnavailable; never more
    than the Pods there are beyond that minimum plus the new ReplicaSet's unavailable ones, oldest first."""
    active = sorted((rs for rs in old if size(rs) > 0), key=_created)
    if not active:
        return []
    _, unavailable = surge_and_unavailable(d)
    minimum = wanted(d) - unavailable
    every = [new, *old]
    budget = sum(size(rs) for rs in every) - minimum - (size(new) - available(new))
    if budget <= 0:
        return []
    sizes = {meta(rs)["name"]: size(rs) for rs in active}
    cleaned = 0
    for rs in active:  # cleanupUnhealthyReplicas
        if cleaned >= budget:
            break
        cut = min(budget - cleaned, max(size(rs) - available(rs), 0))
        sizes[meta(rs)["name"]] -= cut
        cleaned += cut
    removable = sum(available(rs) for rs in every) - minimum  # scaleDownOldReplicaSetsForRollingUpdate
    removed = 0
    for rs in active:
        if removed >= removable:
            break
        cut = min(sizes[meta(rs)["name"]], removable - removed)
        sizes[meta(rs)["name"]] -= cut
        removed += cut
    return [(rs, sizes[meta(rs)["name"]]) for rs in active if sizes[meta(rs)["name"]] != size(rs)]
