"""Indexed Jobs whose indexes fail or succeed on their own (upstream's KEP-3850 and KEP-3998).

With `backoffLimitPerIndex` each index is retried on its own: a Pod carries how many Pods of its index failed
before it (`batch.kubernetes.io/job-index-failure-count`, and the failures a podFailurePolicy ignored), an index
whose failures reach the limit (or whose Pod matched a FailIndex rule) is failed for good, and a replacement
waits a back-off grown from its index's failures alone. A failed Pod keeps its tracking finalizer until its
replacement exists, so that the count can be carried over. A `successPolicy` rule met by the succeeded indexes
ends the Job early.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from mini_kube.machinery.meta import meta

from .jobutil import (
    Backoff,
    completion_index,
    finished_time,
    is_pod_failed,
    match_failure_policy,
    parse_indexes,
)

FAILURE_COUNT = "batch.kubernetes.io/job-index-failure-count"
IGNORED_FAILURE_COUNT = "batch.kubernetes.io/job-index-ignored-failure-count"
MAX_INT32 = 2**31 - 1
_INTEGER = re.compile(r"[+-]?[0-9]+")


def has_per_index(job: dict[str, Any]) -> bool:
    spec = job.get("spec") or {}
    return spec.get("completionMode") == "Indexed" and spec.get("backoffLimitPerIndex") is not None


def _count(pod: dict[str, Any], key: str) -> int:
    """An annotation's count; 0 when missing, malformed, negative or past int32 (as upstream reads it)."""
    value = (meta(pod).get("annotations") or {}).get(key)
    if value is None or not _INTEGER.fullmatch(value):
        return 0
    number = int(value)
    return number if 0 <= number <= MAX_INT32 else 0


def failure_count(pod: dict[str, Any]) -> int:
    return _count(pod, FAILURE_COUNT)


def absolute_failure_count(pod: dict[str, Any]) -> int:
    """Failures of the index before this Pod, counted or ignored by the podFailurePolicy."""
    return _count(pod, FAILURE_COUNT) + _count(pod, IGNORED_FAILURE_COUNT)


def _valid(pod: dict[str, Any], completions: int) -> bool:
    index = completion_index(pod)
    return 0 <= index < completions


def is_index_failed(job: dict[str, Any], pod: dict[str, Any]) -> bool:
    """The Pod failed its index for good: a FailIndex rule matched, or a counted failure used the last retry."""
    if not is_pod_failed(pod, job):
        return False
    _, counted, action = match_failure_policy(job, pod)
    if action == "FailIndex":
        return True
    return counted and failure_count(pod) >= int((job.get("spec") or {}).get("backoffLimitPerIndex") or 0)


def failed_indexes(job: dict[str, Any], pods: list[dict[str, Any]], completions: int,
                   has_finalizer: Any) -> set[int]:
    """status.failedIndexes and the indexes that failed since (their Pods still hold the finalizer)."""
    failed = parse_indexes((job.get("status") or {}).get("failedIndexes"), completions)
    for pod in pods:
        if _valid(pod, completions) and has_finalizer(pod) and is_index_failed(job, pod):
            failed.add(completion_index(pod))
    return failed


def delayed_pods(job: dict[str, Any], pods: list[dict[str, Any]], active: list[dict[str, Any]], completions: int,
                 done: set[int], has_finalizer: Any) -> dict[int, dict[str, Any]]:
    """Per index still to run, its latest failed Pod: it keeps its finalizer until a replacement is created
    (which takes over its failure count and waits its back-off). `done`: succeeded and failed indexes."""
    running = {completion_index(p) for p in active}
    latest: dict[int, dict[str, Any]] = {}
    for pod in pods:
        if not has_finalizer(pod) or not is_pod_failed(pod, job) or not _valid(pod, completions):
            continue
        index = completion_index(pod)
        if index in done or index in running:
            continue
        last = latest.get(index)
        if last is None or (absolute_failure_count(last) <= absolute_failure_count(pod)
                            and finished_time(pod) >= finished_time(last)):
            latest[index] = pod
    return latest


def replacement_counts(job: dict[str, Any], replaced: dict[str, Any] | None) -> tuple[int, int]:
    """(failure count, ignored failure count) a new Pod of the index starts with."""
    if replaced is None:
        return 0, 0
    counted, ignored = failure_count(replaced), _count(replaced, IGNORED_FAILURE_COUNT)
    if match_failure_policy(job, replaced)[1]:
        return counted + 1, ignored
    return counted, ignored + 1


def index_annotations(job: dict[str, Any], replaced: dict[str, Any] | None) -> dict[str, str]:
    counted, ignored = replacement_counts(job, replaced)
    annotations = {FAILURE_COUNT: str(counted)}
    if ignored > 0:
        annotations[IGNORED_FAILURE_COUNT] = str(ignored)
    return annotations


def index_backoff(replaced: dict[str, Any] | None, now: dt.datetime, base: float, cap: float) -> float:
    """Seconds before the index of this failed Pod may run again (0 when it has no failed Pod waiting)."""
    if replaced is None:
        return 0.0
    return Backoff(absolute_failure_count(replaced) + 1, finished_time(replaced)).remaining(now, base, cap)


def match_success_policy(job: dict[str, Any], succeeded: set[int]) -> str | None:
    """The SuccessCriteriaMet message when a successPolicy rule is met by the succeeded indexes."""
    spec = job.get("spec") or {}
    policy = spec.get("successPolicy")
    if not policy or not succeeded:
        return None
    completions = int(spec.get("completions") or 0)
    for index, rule in enumerate(policy.get("rules") or ()):
        count = rule.get("succeededCount")
        if rule.get("succeededIndexes") is not None:
            required = parse_indexes(rule["succeededIndexes"], completions)
            if not required:
                continue
            matched = len(required & succeeded)
            if matched == len(required) or (count is not None and matched >= int(count)):
                return f"Matched rules at index {index}"
        elif count is not None and len(succeeded) >= int(count):
            return f"Matched rules at index {index}"
    return None
