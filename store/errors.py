"""The store's exceptions. Every one derives from :class:`StoreError`."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .types import KeyValue


class StoreError(Exception):
    """Base class of every error the store raises on purpose."""


class KeyExistsError(StoreError):
    """create() of a key that exists; ``current`` is its current version."""

    def __init__(self, key: str, current: KeyValue) -> None:
        super().__init__(f"key exists: {key!r} (mod_revision {current.mod_revision})")
        self.key = key
        self.current = current


class KeyNotFoundError(StoreError):
    """update() or delete() of a key that does not exist."""

    def __init__(self, key: str) -> None:
        super().__init__(f"key not found: {key!r}")
        self.key = key


class ConflictError(StoreError):
    """The expected mod_revision did not match; ``current`` is the key's current version."""

    def __init__(self, key: str, expected_mod_revision: int, current: KeyValue) -> None:
        super().__init__(
            f"conflict on {key!r}: expected mod_revision {expected_mod_revision}, current {current.mod_revision}"
        )
        self.key = key
        self.expected_mod_revision = expected_mod_revision
        self.current = current


class CompactedError(StoreError):
    """The requested revision has been compacted away (the API server answers 410 Gone)."""

    def __init__(self, revision: int, compact_revision: int) -> None:
        super().__init__(f"revision {revision} has been compacted (compact revision {compact_revision})")
        self.revision = revision
        self.compact_revision = compact_revision


class FutureRevisionError(StoreError):
    """A read asked for a revision above the store's current revision."""

    def __init__(self, revision: int, current_revision: int) -> None:
        super().__init__(f"revision {revision} is in the future (current revision {current_revision})")
        self.revision = revision
        self.current_revision = current_revision


class ValueTooLargeError(StoreError):
    """The value is larger than the store's ``max_value_size``."""

    def __init__(self, key: str, size: int, limit: int) -> None:
        super().__init__(f"value for {key!r} is {size} bytes, the limit is {limit}")
        self.key = key
        self.size = size
        self.limit = limit


class WatchOverflowError(StoreError):
    """The watcher fell too far behind and was ended; re-watch from ``Watch.revision + 1``."""

    def __init__(self, revision: int, limit: int) -> None:
        super().__init__(
            f"watcher fell more than {limit} events behind (delivered up to revision {revision})"
        )
        self.revision = revision
        self.limit = limit


class StoreClosedError(StoreError):
    """The store is closed (or its writer failed and it can no longer accept writes)."""
