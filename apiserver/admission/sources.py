"""Admission configuration read from the server's object cache, recompiled only when it changes.

A `Compiled` value watches its cache collections (a cache watcher is fed synchronously after every commit) and
rebuilds itself on the next use after any change; an unchanged configuration costs one queue check per request.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

from ..registry.cache import CacheWatcher, ObjectCache

T = TypeVar("T")


class CollectionWatch:
    """Whether one cache collection changed since the last call."""

    def __init__(self, cache: ObjectCache, collection: str) -> None:
        self.cache = cache
        self.collection = collection
        self._watcher: CacheWatcher | None = None

    def changed(self) -> bool:
        watcher = self._watcher
        if watcher is None or watcher.ended:
            self._watcher = self.cache.watch(self.collection, None)
            return True
        queue, changed = watcher.queue, False
        while not queue.empty():
            if queue.get_nowait() is None:  # the watcher was ended (overflow, shutdown): start afresh
                self._watcher = self.cache.watch(self.collection, None)
                return True
            changed = True
        return changed

    def objects(self) -> list[dict[str, Any]]:
        return [entry.obj for entry in self.cache.list(self.collection)]


class Compiled(Generic[T]):
    """`build()` over some collections, rebuilt when any of them changed."""

    def __init__(self, watches: list[CollectionWatch], build: Callable[[], T]) -> None:
        self.watches = watches
        self.build = build
        self._value: T | None = None

    def get(self) -> T:
        changed = [w.changed() for w in self.watches]  # drain every watch, not just the first that changed
        if any(changed) or self._value is None:
            self._value = self.build()
        return self._value
