"""What the workload controllers share: label selectors, controller references, Pod states and ranking,
pod-template hashes, and expectations (so a slow watch never causes extra Pods)."""

from __future__ import annotations

import datetime as dt
import time
from typing import Any

import orjson
from mini_kube.machinery import labels as labelselector
from mini_kube.machinery.meta import meta
from mini_kube.machinery.times import parse_time

SAFE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
EXPECTATIONS_TIMEOUT = 300.0


def selector_matches(selector: dict[str, Any] | None, labels: dict[str, str] | None) -> bool:
    """A metav1.LabelSelector against labels (an empty selector selects nothing here, as controllers treat it)."""
    if not selector or not (selector.get("matchLabels") or selector.get("matchExpressions")):
        return False
    return labelselector.matches(selector, labels)


def controller_of(obj: dict[str, Any]) -> dict[str, Any] | None:
    return next((r for r in meta(obj).get("ownerReferences") or () if r.get("controller")), None)


def is_active(pod: dict[str, Any]) -> bool:
    return (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed") and \
        not meta(pod).get("deletionTimestamp")


def is_ready(pod: dict[str, Any]) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or ())


def is_available(pod: dict[str, Any], min_ready_seconds: float) -> bool:
    """Ready for at least `min_ready_seconds`."""
    for condition in (pod.get("status") or {}).get("conditions") or ():
        if condition.get("type") == "Ready" and condition.get("status") == "True":
            if min_ready_seconds <= 0:
                return True
            since = parse_time(condition.get("lastTransitionTime"))
            return since is not None and (dt.datetime.now(dt.UTC) - since).total_seconds() >= min_ready_seconds
    return False


def deletion_rank(pod: dict[str, Any]) -> tuple[Any, ...]:
    """Sort key: the Pods to delete first come first (unscheduled, pending, not ready, then the newest)."""
    status = pod.get("status") or {}
    phase_rank = {"Pending": 0, "Unknown": 1, "Running": 2}.get(status.get("phase", "Pending"), 0)
    created = meta(pod).get("creationTimestamp") or ""
    restarts = sum(c.get("restartCount", 0) for c in status.get("containerStatuses") or ())
    return (bool((pod.get("spec") or {}).get("nodeName")), phase_rank, is_ready(pod), -restarts,
            _negated(created))


def _negated(stamp: str) -> tuple[int, ...]:
    return tuple(-ord(c) for c in stamp)  # newer (larger) timestamps sort first


def fnv32a(data: bytes) -> int:
    value = 0x811C9DC5
    for byte in data:
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    return value


def template_hash(template: dict[str, Any], collisions: int = 0) -> str:
    """The `pod-template-hash` of a Pod template: a short, stable, safe-alphabet hash."""
    value = fnv32a(orjson.dumps(template, option=orjson.OPT_SORT_KEYS) + (str(collisions).encode()
                                                                         if collisions else b""))
    text = str(value)
    return "".join(SAFE_ALPHABET[ord(c) % len(SAFE_ALPHABET)] for c in text)[:10]


class Expectations:
    """How many Pod creations and deletions a controller still waits to see in its cache, per owner key (as
    client-go's ControllerExpectations): while any are outstanding the owner is not synced again, so a slow
    watch never leads to extra Pods. Counts, not names: a watch event may arrive before the create returns."""

    def __init__(self, timeout: float = EXPECTATIONS_TIMEOUT) -> None:
        self._pending: dict[str, list[float]] = {}  # key -> [adds, deletes, since]
        self.timeout = timeout

    def expect(self, key: str, adds: int = 0, deletes: int = 0) -> None:
        self._pending[key] = [adds, deletes, time.monotonic()]

    def lower(self, key: str, adds: int = 0, deletes: int = 0) -> None:
        entry = self._pending.get(key)
        if entry is not None:
            entry[0] -= adds
            entry[1] -= deletes

    def satisfied(self, key: str) -> bool:
        entry = self._pending.get(key)
        if entry is None:
            return True
        if (entry[0] <= 0 and entry[1] <= 0) or time.monotonic() - entry[2] > self.timeout:
            self._pending.pop(key, None)
            return True
        return False

    def remaining(self, key: str) -> float:
        """Seconds until outstanding expectations of `key` lapse (0 when there are none): the owner is synced
        again by then even if no event comes."""
        entry = self._pending.get(key)
        return 0.0 if entry is None else max(0.0, entry[2] + self.timeout - time.monotonic())

    def forget(self, key: str) -> None:
        self._pending.pop(key, None)
