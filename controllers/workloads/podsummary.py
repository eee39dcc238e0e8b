"""A Pod as the workload controllers count it: the few fields they read, kept by the shared Pod informer as a
view (`Informer.add_view`), so a controller goes over a thousand Pods on each change without decoding one, and
decodes only the Pods it writes (adopts or releases)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from mini_kube.machinery.meta import meta
from mini_kube.machinery.times import parse_time

from .common import controller_of, deletion_rank, is_active, is_ready

SUMMARY_VIEW = "workloads-pod-summary"
ORPHANS_INDEX = "workloads-orphans"  # namespace of every Pod without a controller


@dataclass(frozen=True, slots=True)
class PodSummary:
    key: str
    name: str
    controller_uid: str  # "" without a controller
    labels: tuple[tuple[str, str], ...]
    active: bool  # not terminal, not being deleted
    ready: bool
    ready_since: str  # the Ready condition's lastTransitionTime while ready
    rank: tuple[Any, ...]  # deletion_rank: the Pods to delete first sort first

    def label_map(self) -> dict[str, str]:
        return dict(self.labels)

    def available(self, min_ready_seconds: float) -> bool:
        """Ready for at least `min_ready_seconds` (common.is_available on the summary)."""
        if not self.ready:
            return False
        if min_ready_seconds <= 0:
            return True
        since = parse_time(self.ready_since or None)
        return since is not None and (dt.datetime.now(dt.UTC) - since).total_seconds() >= min_ready_seconds


def summarize(pod: dict[str, Any]) -> PodSummary:
    pmeta = meta(pod)
    ready = is_ready(pod)
    since = ""
    if ready:
        since = next((c.get("lastTransitionTime") or "" for c in (pod.get("status") or {}).get("conditions") or ()
                      if c.get("type") == "Ready"), "")
    namespace = pmeta.get("namespace")
    key = f"{namespace}/{pmeta.get('name')}" if namespace else str(pmeta.get("name"))
    return PodSummary(key=key, name=pmeta.get("name", ""), controller_uid=(controller_of(pod) or {}).get("uid", ""),
                      labels=tuple(sorted((pmeta.get("labels") or {}).items())), active=is_active(pod),
                      ready=ready, ready_since=since, rank=deletion_rank(pod))


def orphan_namespace(pod: dict[str, Any]) -> tuple[str, ...]:
    return () if controller_of(pod) is not None else (meta(pod).get("namespace") or "",)
