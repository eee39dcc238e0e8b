"""`metadata.managedFields` entries: decoding, encoding in upstream's order, and the cap on updaters.

Entries are keyed like upstream's manager identifier: manager, operation, subresource, and for
`Update` entries the apiVersion (an applier keeps one entry whatever version it applies with).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from mini_kube.apiserver.patch import fieldpath
from mini_kube.apiserver.patch.fieldpath import Trie
from mini_kube.machinery import times

APPLY = "Apply"
UPDATE = "Update"
MAX_UPDATE_MANAGERS = 10
ANCIENT = "ancient-changes"

ManagerKey = tuple[str, str, str, str]


@dataclass(slots=True)
class ManagerEntry:
    """One manager's owned fields."""

    manager: str
    operation: str
    api_version: str
    fields: Trie = field(default_factory=dict)
    time: str | None = None
    subresource: str = ""
    raw: dict[str, Any] | None = None  # the decoded entry, reused when nothing in it changed

    @property
    def key(self) -> ManagerKey:
        return manager_key(self.manager, self.operation, self.api_version, self.subresource)

    @property
    def applied(self) -> bool:
        return self.operation == APPLY


Managed = dict[ManagerKey, ManagerEntry]


def manager_key(manager: str, operation: str, api_version: str, subresource: str = "") -> ManagerKey:
    return (manager, operation, api_version if operation != APPLY else "", subresource)


def format_time(now: datetime | str | None) -> str:
    """RFC 3339 at second precision in UTC, as metav1.Time serializes: `2026-11-22T02:12:57Z`."""
    if isinstance(now, str):
        return now
    return times.now_rfc3339() if now is None else times.format_time(now)


def decode(entries: Any) -> Managed:
    """The managers of an object's managedFields; raises ValueError on anything upstream rejects."""
    managed: Managed = {}
    if entries is None:
        return managed
    if not isinstance(entries, list):
        raise ValueError("managedFields must be a list")
    for i, raw in enumerate(entries):
        if not isinstance(raw, dict):
            raise ValueError(f"managed fields entry {i} is not an object")
        operation = raw.get("operation")
        if operation not in (APPLY, UPDATE):
            raise ValueError("operation must be `Apply` or `Update`")
        api_version = raw.get("apiVersion")
        if not isinstance(api_version, str) or not api_version:
            raise ValueError("apiVersion must not be empty")
        fields_type = raw.get("fieldsType")
        if not fields_type:
            raise ValueError(f"missing fieldsType in managed fields entry {i}")
        if fields_type != "FieldsV1":
            raise ValueError(f"invalid fieldsType {fields_type!r} in managed fields entry {i}")
        fields = raw.get("fieldsV1")
        time = raw.get("time")
        manager = raw.get("manager") or ""
        subresource = raw.get("subresource") or ""
        if not isinstance(manager, str) or not isinstance(subresource, str) or \
                (time is not None and not isinstance(time, str)):
            raise ValueError(f"malformed managed fields entry {i}")
        entry = ManagerEntry(manager, operation, api_version,
                             fieldpath.decode(fields) if fields is not None else {}, time, subresource, raw)
        managed[entry.key] = entry
    return managed


def is_reset(entries: Any) -> bool:
    """True when a request asks to clear managedFields: an empty list, or one empty entry."""
    if not isinstance(entries, list):
        return False
    if not entries:
        return True
    return len(entries) == 1 and entries[0] == {}


def _time_order(value: str | None) -> float:
    when = times.try_parse_time(value)
    return when.timestamp() if when is not None else 0.0


def encode(managed: Managed) -> list[dict[str, Any]] | None:
    """managedFields entries in upstream's order (operation, time, manager, apiVersion, subresource)."""
    if not managed:
        return None
    entries = sorted(managed.values(), key=lambda e: (e.operation, _time_order(e.time), e.manager,
                                                       e.api_version, e.subresource))
    out = []
    for e in entries:
        if e.raw is not None and e.fields is e.raw.get("fieldsV1") and e.time == e.raw.get("time"):
            out.append(e.raw)
            continue
        item: dict[str, Any] = {}
        if e.manager:
            item["manager"] = e.manager
        item["operation"] = e.operation
        item["apiVersion"] = e.api_version
        if e.time:
            item["time"] = e.time
        item["fieldsType"] = "FieldsV1"
        item["fieldsV1"] = fieldpath.encode(e.fields)
        if e.subresource:
            item["subresource"] = e.subresource
        out.append(item)
    return out


def cap_update_managers(managed: Managed, limit: int = MAX_UPDATE_MANAGERS) -> None:
    """Merge the oldest Update entries into per-version `ancient-changes` entries beyond `limit`."""
    updaters = [k for k, e in managed.items() if not e.applied]
    if len(updaters) <= limit:
        return
    updaters.sort(key=lambda k: (int(_time_order(managed[k].time)), k))
    first_by_version: dict[str, ManagerKey] = {}
    length = len(updaters)
    for key in updaters:
        if length <= limit:
            break
        entry = managed[key]
        bucket = manager_key(ANCIENT, UPDATE, entry.api_version)
        if entry.api_version not in first_by_version:
            first_by_version[entry.api_version] = key
            continue
        if bucket not in managed:
            first = managed.pop(first_by_version[entry.api_version])
            managed[bucket] = ManagerEntry(ANCIENT, UPDATE, entry.api_version, first.fields, first.time)
        holder = managed[bucket]
        managed[bucket] = ManagerEntry(ANCIENT, UPDATE, entry.api_version,
                                       fieldpath.union(entry.fields, holder.fields), entry.time)
        del managed[key]
        length -= 1
