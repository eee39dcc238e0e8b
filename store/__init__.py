"""mini-kube store: an etcd-v3-like revisioned key-value store with watch, on SQLite (aiosqlite).

See :class:`Store`. The API server persists through it and builds resourceVersion semantics on its
revisions.
"""

from .errors import (
    CompactedError,
    ConflictError,
    FutureRevisionError,
    KeyExistsError,
    KeyNotFoundError,
    StoreClosedError,
    StoreError,
    ValueTooLargeError,
    WatchOverflowError,
)
from .store import Store
from .types import Event, KeyValue, Op, RangeResult, Value
from .watch import Watch

__all__ = [
    "CompactedError",
    "ConflictError",
    "Event",
    "FutureRevisionError",
    "KeyExistsError",
    "KeyNotFoundError",
    "KeyValue",
    "Op",
    "RangeResult",
    "Store",
    "StoreClosedError",
    "StoreError",
    "ValueTooLargeError",
    "Value",
    "Watch",
    "WatchOverflowError",
]
