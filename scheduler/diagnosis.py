"""Why a Pod could not be scheduled, worded as upstream's FitError: `0/3 nodes are available: 1 node(s) had
untolerated taint {k: v}, 2 Insufficient cpu. preemption: 0/3 nodes are available: 1 Preemption is not helpful
for scheduling, 2 No preemption victims found for incoming pod.`"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from .filters import Failure

NO_NODES = "no nodes available to schedule pods"
NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_VICTIMS = "No preemption victims found for incoming pod"
NEVER = "preemption: not eligible due to preemptionPolicy=Never."
TERMINATING = "preemption: not eligible due to a terminating pod on the nominated node."


def histogram(reasons: Iterable[str]) -> str:
    """`N reason` per distinct reason, sorted as strings (as Go's sort.Strings orders them)."""
    return ", ".join(sorted(f"{count} {reason}" for reason, count in Counter(reasons).items()))


def nodes_unavailable(total: int, failures: Iterable[Failure]) -> str:
    """`0/N nodes are available: <histogram>.`"""
    message = f"0/{total} nodes are available:"
    summary = histogram(reason for failure in failures for reason in failure.reasons)
    return f"{message} {summary}." if summary else message


def fit_error(total: int, failures: Iterable[Failure], preemption: str = "") -> str:
    """The FailedScheduling message; `preemption` is the PostFilter's (`preemption: ...`), if any."""
    message = nodes_unavailable(total, failures)
    return f"{message} {preemption}" if preemption else message


def truncate(message: str, limit: int = 1024) -> str:
    """Event messages are cut to 1024 characters, as upstream's truncateMessage does."""
    return message if len(message) <= limit else message[:limit - 3] + "..."
