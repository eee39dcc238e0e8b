"""A bounded log of relayed connections that costs the relay almost nothing per connection: it keeps the raw
facts (a timestamp and the caller's values) and turns them into records only when someone reads the log."""

from __future__ import annotations

import datetime as dt
import time
from collections import deque
from collections.abc import Callable
from typing import Any

Render = Callable[..., dict[str, Any]]  # (the values given to `add`) -> the record, without its time


def stamp(when: float) -> str:
    """RFC 3339 UTC with microseconds, as Kubernetes' MicroTime."""
    return dt.datetime.fromtimestamp(when, dt.UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


class ConnectionLog:
    """The last `limit` entries; `render(*values)` makes each record, with its `time` first."""

    def __init__(self, render: Render, limit: int) -> None:
        self.render = render
        self.entries: deque[tuple[float, tuple[Any, ...]]] = deque(maxlen=limit)

    def add(self, *values: Any) -> None:
        self.entries.append((time.time(), values))

    def records(self) -> list[dict[str, Any]]:
        return [{"time": stamp(when), **self.render(*values)} for when, values in list(self.entries)]

    def __len__(self) -> int:
        return len(self.entries)
