"""What the Job controller computes from Pods, as kube-controller-manager's: completion indexes and their
interval strings ("0-2,5"), the pod failure policy, the exponential back-off before re-creating failed
Pods, finish times, and Job conditions."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from mini_kube.machinery.meta import meta
from mini_kube.machinery.times import format_time, parse_time

TRACKING_FINALIZER = "batch.kubernetes.io/job-tracking"
INDEX_ANNOTATION = "batch.kubernetes.io/job-completion-index"
INDEX_LABEL = "batch.kubernetes.io/job-completion-index"
INDEX_ENV = "JOB_COMPLETION_INDEX"
JOB_CONTROLLER = "kubernetes.io/job-controller"


# -- conditions ------------------------------------------------------------------------------------------------
def condition(status: dict[str, Any], kind: str) -> dict[str, Any] | None:
    return next((c for c in status.get("conditions") or () if c.get("type") == kind), None)


def is_true(status: dict[str, Any], kind: str) -> bool:
    found = condition(status, kind)
    return found is not None and found.get("status") == "True"


def is_finished(job: dict[str, Any]) -> bool:
    status = job.get("status") or {}
    return is_true(status, "Complete") or is_true(status, "Failed")


def finished_condition(job: dict[str, Any]) -> dict[str, Any] | None:
    """The Complete or Failed condition (True) of a finished Job."""
    status = job.get("status") or {}
    for kind in ("Complete", "Failed"):
        if is_true(status, kind):
            return condition(status, kind)
    return None


def new_condition(kind: str, status: str, reason: str, message: str, now: dt.datetime) -> dict[str, Any]:
    stamp = format_time(now)
    return {"type": kind, "status": status, "lastProbeTime": stamp, "lastTransitionTime": stamp,
            "reason": reason, "message": message}


def ensure_condition(status: dict[str, Any], kind: str, value: str, reason: str, message: str,
                     now: dt.datetime) -> bool:
    """Set a condition (a new False one is not added); returns whether the list changed."""
    conditions = status.setdefault("conditions", [])
    for i, found in enumerate(conditions):
        if found.get("type") == kind:
            if (found.get("status"), found.get("reason"), found.get("message")) != (value, reason, message):
                conditions[i] = new_condition(kind, value, reason, message, now)
                return True
            return False
    if value != "False":
        conditions.append(new_condition(kind, value, reason, message, now))
        return True
    return False


# -- pods -----------------------------------------------------------------------------------------------------
def has_finalizer(pod: dict[str, Any]) -> bool:
    return TRACKING_FINALIZER in (meta(pod).get("finalizers") or ())


def phase(pod: dict[str, Any]) -> str:
    return (pod.get("status") or {}).get("phase") or ""


def only_replace_failed(job: dict[str, Any]) -> bool:
    spec = job.get("spec") or {}
    return spec.get("podReplacementPolicy") == "Failed" or spec.get("podFailurePolicy") is not None


def is_pod_failed(pod: dict[str, Any], job: dict[str, Any]) -> bool:
    """Failed, or (unless only failed Pods are replaced) deleted before it succeeded."""
    if phase(pod) == "Failed":
        return True
    if only_replace_failed(job):
        return False
    return bool(meta(pod).get("deletionTimestamp")) and phase(pod) != "Succeeded"


def is_terminating(pod: dict[str, Any]) -> bool:
    return bool(meta(pod).get("deletionTimestamp")) and phase(pod) not in ("Succeeded", "Failed")


def completion_index(pod: dict[str, Any]) -> int:
    """The Pod's completion index, or -1 when it has none (or a malformed one)."""
    value = (meta(pod).get("annotations") or {}).get(INDEX_ANNOTATION)
    if value is None:
        value = (meta(pod).get("labels") or {}).get(INDEX_LABEL)
    try:
        index = int(value) if value is not None else -1
    except ValueError:
        return -1
    return index if index >= 0 else -1


def finished_time(pod: dict[str, Any]) -> dt.datetime:
    """When a Pod finished: its containers' last finishedAt, its Ready=False transition, its deletion time less
    the grace period, or (no better idea) its creation."""
    status = pod.get("status") or {}
    latest: dt.datetime | None = None
    statuses = status.get("containerStatuses") or []
    for container in statuses:
        finished = parse_time(((container.get("state") or {}).get("terminated") or {}).get("finishedAt"))
        if finished is None:
            latest = None
            break
        latest = finished if latest is None or finished > latest else latest
    if latest is not None:
        return latest
    for cond in status.get("conditions") or ():
        if cond.get("type") == "Ready" and cond.get("status") == "False" and cond.get("lastTransitionTime"):
            return parse_time(cond["lastTransitionTime"])  # type: ignore[return-value]
    deleted = parse_time(meta(pod).get("deletionTimestamp"))
    if deleted is not None:
        return deleted - dt.timedelta(seconds=meta(pod).get("deletionGracePeriodSeconds") or 0)
    return parse_time(meta(pod).get("creationTimestamp")) or dt.datetime.now(dt.UTC)


# -- pod failure policy ---------------------------------------------------------------------------------------
def _exit_code_match(pod: dict[str, Any], rule: dict[str, Any]) -> dict[str, Any] | None:
    status = pod.get("status") or {}
    for statuses in (status.get("containerStatuses") or [], status.get("initContainerStatuses") or []):
        for container in statuses:
            terminated = (container.get("state") or {}).get("terminated")
            if not terminated or (rule.get("containerName") and rule["containerName"] != container.get("name")):
                continue
            code = terminated.get("exitCode", 0)
            if code == 0:
                continue
            inside = code in (rule.get("values") or ())
            if (rule.get("operator") == "In" and inside) or (rule.get("operator") == "NotIn" and not inside):
                return {**container, "exitCode": code}
    return None


def _condition_match(pod: dict[str, Any], patterns: list[dict[str, Any]]) -> dict[str, Any] | None:
    for cond in (pod.get("status") or {}).get("conditions") or ():
        for pattern in patterns:
            if cond.get("type") == pattern.get("type") and cond.get("status") == (pattern.get("status") or "True"):
                return cond
    return None


def match_failure_policy(job: dict[str, Any], pod: dict[str, Any]) -> tuple[str | None, bool, str | None]:
    """(message when a FailJob rule matches, whether the failure counts towards backoffLimit, the action)."""
    policy = (job.get("spec") or {}).get("podFailurePolicy")
    if not policy:
        return None, True, None
    for index, rule in enumerate(policy.get("rules") or ()):
        action = rule.get("action")
        if rule.get("onExitCodes") is not None:
            matched = _exit_code_match(pod, rule["onExitCodes"])
            message = (f"Container {matched['name']} for pod {meta(pod).get('namespace')}/{meta(pod).get('name')} "
                       f"failed with exit code {matched['exitCode']} matching {action} rule at index {index}"
                       if matched else None)
        elif rule.get("onPodConditions") is not None:
            matched = _condition_match(pod, rule["onPodConditions"])
            message = (f"Pod {meta(pod).get('namespace')}/{meta(pod).get('name')} has condition "
                       f"{matched.get('type')} matching {action} rule at index {index}" if matched else None)
        else:
            continue
        if matched is None:
            continue
        if action == "Ignore":
            return None, False, action
        if action in ("Count", "FailIndex"):
            return None, True, action
        if action == "FailJob":
            return message, True, action
    return None, True, None


# -- back-off -------------------------------------------------------------------------------------------------
@dataclass(slots=True)
class Backoff:
    """Failures since the last success and when the last one happened."""

    failures: int = 0
    last_failure: dt.datetime | None = None

    def after(self, succeeded: list[dict[str, Any]], failed: list[dict[str, Any]]) -> Backoff:
        """The record once these newly finished Pods are taken into account."""
        if not failed:
            return Backoff() if succeeded else Backoff(self.failures, self.last_failure)
        failed_times = sorted(finished_time(p) for p in failed)
        if not succeeded:
            return Backoff(self.failures + len(failed), failed_times[-1])
        last_success = max(finished_time(p) for p in succeeded)
        later = [t for t in failed_times if t > last_success]
        return Backoff(len(later), later[-1] if later else None)

    def remaining(self, now: dt.datetime, base: float, cap: float) -> float:
        """Seconds still to wait before creating a replacement Pod (base doubled per failure, capped)."""
        if not self.failures or self.last_failure is None:
            return 0.0
        delay = min(base * 2 ** (self.failures - 1), cap)
        return max(delay - (now - self.last_failure).total_seconds(), 0.0)


# -- completion indexes ---------------------------------------------------------------------------------------
def parse_indexes(text: str | None, completions: int) -> set[int]:
    """"0-2,5" -> {0, 1, 2, 5}, keeping only indexes below `completions`."""
    result: set[int] = set()
    for part in (text or "").split(","):
        if not part:
            continue
        first, _, last = part.partition("-")
        try:
            low, high = int(first), int(last or first)
        except ValueError:
            continue
        result.update(range(low, min(high, completions - 1) + 1))
    return result


def format_indexes(indexes: Iterable[int]) -> str:
    """{0, 1, 2, 5, 7, 8} -> "0-2,5,7,8"."""
    parts: list[str] = []
    ordered = sorted(set(indexes))
    start = prev = None
    for index in [*ordered, None]:
        if index is not None and prev is not None and index == prev + 1:
            prev = index
            continue
        if start is not None:
            sep = "," if prev == start + 1 else "-"  # two neighbours are written "1,2", as upstream
            parts.append(str(start) if start == prev else f"{start}{sep}{prev}")
        start = prev = index
    return ",".join(parts)


class OwnWrites:
    """The object a controller last wrote, per key: a sync that follows reads it rather than an older cached
    copy (whose status write would only meet a conflict)."""

    def __init__(self) -> None:
        self._objects: dict[str, dict[str, Any]] = {}

    def remember(self, key: str, obj: dict[str, Any]) -> None:
        self._objects[key] = obj

    def fresh(self, key: str, cached: dict[str, Any] | None) -> dict[str, Any] | None:
        mine = self._objects.get(key)
        if mine is None or cached is None or meta(mine).get("uid") != meta(cached).get("uid"):
            self._objects.pop(key, None)
            return cached
        try:
            newer = int(meta(mine)["resourceVersion"]) > int(meta(cached)["resourceVersion"])
        except (KeyError, ValueError):
            newer = False
        if newer:
            return mine
        del self._objects[key]
        return cached
