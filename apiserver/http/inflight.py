"""Upstream's --max-requests-inflight / --max-mutating-requests-inflight: past the limit a request is answered
429 TooManyRequests with Retry-After at once, instead of queueing without bound. Long-running requests (watch,
exec/attach/port-forward, proxy, followed logs) and the system:masters group are not counted, as upstream."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import errors
from .query import go_bool

MUTATING = {"create", "update", "patch", "delete", "deletecollection"}
LONG_RUNNING_SUBRESOURCES = {"exec", "attach", "portforward", "proxy"}


def long_running(info: Any, query: Any) -> bool:
    if info.verb in ("watch", "proxy") or info.subresource in LONG_RUNNING_SUBRESOURCES:
        return True
    return info.subresource == "log" and go_bool(query.get("follow"))


class InflightLimiter:
    """Counts requests in flight in two pools; `enter` returns the function that leaves."""

    def __init__(self, readonly: int, mutating: int) -> None:
        self.limits = {False: readonly, True: mutating}
        self.current = {False: 0, True: 0}

    def enter(self, info: Any, query: Any, user: Any) -> Callable[[], None] | None:
        if long_running(info, query) or "system:masters" in (getattr(user, "groups", ()) or ()):
            return None
        pool = info.verb in MUTATING
        limit = self.limits[pool]
        if limit > 0 and self.current[pool] >= limit:
            raise errors.StatusError(429, "TooManyRequests", "Too many requests, please try again later.",
                                     {"retryAfterSeconds": 1}, {"Retry-After": "1"})
        self.current[pool] += 1

        def leave() -> None:
            self.current[pool] -= 1

        return leave
