"""Plain data types shared by the store's modules and its callers."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

Value = bytes | Callable[[int], bytes]
"""The bytes to store, or a callable given the revision assigned to this very write that returns them.

The callable is called exactly once, inside the write path, just before the write is committed
(the API server uses it to embed ``metadata.resourceVersion`` in the stored object).
"""

OpKind = Literal["create", "update", "delete"]


@dataclass(frozen=True, slots=True)
class KeyValue:
    """One version of a key.

    ``version`` counts modifications since the key was (re)created, starting at 1; a tombstone
    (the ``kv`` of a DELETE event, or what :meth:`Store.delete` returns) has version 0, as in etcd.
    """

    key: str
    value: bytes
    create_revision: int
    mod_revision: int
    version: int


@dataclass(frozen=True, slots=True)
class Event:
    """A committed change.

    PUT: ``kv`` is the new version, ``prev_kv`` the version it replaced (None for a create).
    DELETE: ``kv`` is the tombstone (``mod_revision`` = the delete's revision, ``value`` and
    ``create_revision`` those of the deleted version, ``version`` 0); ``prev_kv`` the deleted version.
    """

    type: Literal["PUT", "DELETE"]
    kv: KeyValue
    prev_kv: KeyValue | None


@dataclass(frozen=True, slots=True)
class RangeResult:
    """A page of a range read, all at one ``revision``.

    ``count`` is the number of matching keys from the continuation point on, including those
    returned; ``more`` is true when keys beyond the page exist (``count > len(kvs)``).
    """

    kvs: list[KeyValue]
    revision: int
    more: bool
    count: int


@dataclass(frozen=True, slots=True)
class Op:
    """One operation of :meth:`Store.txn`. ``value`` is required for create/update, unused for delete."""

    kind: OpKind
    key: str
    value: Value | None = None
    expected_mod_revision: int | None = None
