"""Graceful deletion, as upstream's rest.BeforeDelete: whether a DELETE starts a grace period (Pods on a node),
shortens one under way, or finds one pending that it leaves alone. Kinds with no grace period (all but Pods)
answer None from `Strategy.grace_period` and are deleted at once unless finalizers hold them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from mini_kube.machinery.times import format_time, parse_time

from .. import errors


@dataclass(slots=True)
class Decision:
    """What a DELETE does to the object before (or instead of) removing it."""

    pending: bool = False  # a grace period is under way and this request does not shorten it: nothing to do
    period: int | None = None  # graceful: the deletionGracePeriodSeconds to record
    timestamp: str | None = None  # ... and the deletionTimestamp (when the grace period ends)

    @property
    def waits(self) -> bool:
        """The object stays (terminating) for someone else (the kubelet) to make the final delete."""
        return bool(self.period)


def requested_period(options: dict[str, Any]) -> int | None:
    """DeleteOptions.gracePeriodSeconds as a number (the query gives a string); negative means 1, as upstream."""
    value = options.get("gracePeriodSeconds")
    if value is None:
        return None
    try:
        period = int(value)
    except (TypeError, ValueError):
        raise errors.bad_request(f"invalid gracePeriodSeconds {value!r}") from None
    return 1 if period < 0 else period


def before_delete(strategy: Any, obj: dict[str, Any], options: dict[str, Any]) -> Decision:
    """Upstream's BeforeDelete for `obj` under `options` (`strategy.grace_period` is CheckGracefulDelete)."""
    meta = obj.get("metadata") or {}
    requested = requested_period(options)
    now = datetime.now(UTC).replace(microsecond=0)
    deleting_since = parse_time(meta.get("deletionTimestamp"))
    if deleting_since is not None:
        current = meta.get("deletionGracePeriodSeconds")
        if not current:
            return Decision()  # at zero already (or never set): delete now, finalizers permitting
        if requested is None or requested >= current:
            return Decision(pending=True)  # only a shorter grace period may be asked for
        start = _shift(deleting_since, -current)
        end = _shift(start, requested)
        if end < now:  # the whole period has passed: as short as possible, yet still graceful unless zero
            end, requested = now, (1 if requested else 0)
        return Decision(period=requested, timestamp=format_time(end))
    period = strategy.grace_period(obj, requested)
    if period is None:
        return Decision()
    return Decision(period=period, timestamp=format_time(_shift(now, period)))


def _shift(moment: datetime, seconds: int) -> datetime:
    """`moment` plus `seconds`, held within the years datetime can hold (a grace period may be any int64)."""
    try:
        return moment + timedelta(seconds=seconds)
    except OverflowError:
        return datetime.max.replace(tzinfo=UTC) if seconds > 0 else datetime.min.replace(tzinfo=UTC)


