"""Managed fields for ordinary writes (create, update, JSON/merge/strategic patch).

Follows upstream's field manager chain for an Update: take the request's managedFields (or the live
object's when the request has none or bad ones; an empty list or one empty entry resets them), compare
old and new, give the changed fields to the writer, take changed and removed fields away from everyone
else, drop emptied entries, cap Update entries at 10, and write the entries back in upstream's order.
Objects that have no managedFields stay without them on update (upstream only starts tracking on create
or on the first apply). Type and object metadata (`apiVersion`, `kind`, `metadata.name`, `uid`,
`resourceVersion`, ...) are never owned.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from mini_kube.apiserver.patch import fieldpath, managed
from mini_kube.apiserver.patch.empty import empty_object
from mini_kube.apiserver.patch.fieldpath import Trie
from mini_kube.apiserver.patch.fieldset import MISSING, compare
from mini_kube.apiserver.patch.managed import UPDATE, Managed, ManagerEntry
from mini_kube.apiserver.patch.schema_walk import SchemaNode, deduced

STRIP: Trie = {
    "f:apiVersion": {}, "f:kind": {},
    "f:metadata": {".": {}, "f:name": {}, "f:namespace": {}, "f:creationTimestamp": {}, "f:selfLink": {},
                   "f:uid": {}, "f:clusterName": {}, "f:generation": {}, "f:managedFields": {},
                   "f:resourceVersion": {}},
}


def update_managed_fields(old_obj: dict[str, Any] | None, new_obj: dict[str, Any], manager: str,
                          operation: str = UPDATE, api_version: str = "", now: datetime | str | None = None,
                          subresource: str = "", schema: SchemaNode | None = None,
                          ignored: Iterable[tuple[str, ...]] = ()) -> dict[str, Any]:
    """Return `new_obj` with `metadata.managedFields` recording this write by `manager`.

    `old_obj` is the stored object (None on create: compared with the kind's empty object). `api_version` defaults to new_obj's apiVersion;
    `schema` (default: deduced) decides how lists and maps are owned; `ignored` lists field paths whose
    changes nobody owns through this endpoint (upstream's reset fields, e.g. ("status",) on the main
    resource). A malformed managedFields never fails the write: it is reset as upstream does.
    """
    if operation != UPDATE:
        raise ValueError("update_managed_fields records Update operations; use server_side_apply")
    api_version = api_version or new_obj.get("apiVersion", "")
    new_meta = new_obj.get("metadata")
    if not isinstance(new_meta, dict):
        return new_obj
    old_meta = old_obj.get("metadata") if isinstance(old_obj, dict) else None
    entries = _decode_live_or_new(old_meta, new_meta, bool(subresource))
    result = dict(new_obj)
    result["metadata"] = meta = {k: v for k, v in new_meta.items() if k != "managedFields"}
    creating = not (isinstance(old_meta, dict) and old_meta.get("uid"))
    if not entries and not creating:
        return result
    baseline = old_obj if old_obj is not None else empty_object(schema)
    record_update(entries, baseline, result, manager or "unknown", api_version, now, subresource,
                  schema, ignored)
    managed.cap_update_managers(entries)
    encoded = managed.encode(entries)
    if encoded is not None:
        meta["managedFields"] = encoded
    return result


def _decode_live_or_new(old_meta: Any, new_meta: dict[str, Any], subresource: bool) -> Managed:
    live_entries = old_meta.get("managedFields") if isinstance(old_meta, dict) else None
    if not subresource:
        requested = new_meta.get("managedFields")
        if managed.is_reset(requested):
            return {}
        try:
            entries = managed.decode(requested)
        except ValueError:
            entries = {}
        if entries:
            return entries
    try:
        return managed.decode(live_entries)
    except ValueError:
        return {}


def record_update(entries: Managed, old_obj: dict[str, Any] | None, new_obj: dict[str, Any], manager: str,
                  api_version: str, now: datetime | str | None, subresource: str = "",
                  schema: SchemaNode | None = None, ignored: Iterable[tuple[str, ...]] = ()) -> bool:
    """Apply one Update by `manager` to `entries` in place; True when the writer gained fields."""
    added, modified, removed = compare(_without_managed(old_obj), _without_managed(new_obj),
                                       schema or deduced())
    changed = fieldpath.union(added, modified)
    for path in ignored:
        changed = drop_path(changed, path)
        removed = drop_path(removed, path)
    for key in list(entries):
        entry = entries[key]
        owned = fieldpath.difference(fieldpath.difference(entry.fields, changed), removed)
        if not owned:
            del entries[key]
        elif owned is not entry.fields:
            entry.fields = owned
    mine = fieldpath.difference(changed, STRIP)
    if not mine:
        return False
    key = managed.manager_key(manager, UPDATE, api_version, subresource)
    previous = entries.get(key)
    fields = fieldpath.union(mine, previous.fields) if previous is not None else mine
    entries[key] = ManagerEntry(manager, UPDATE, api_version, fields, managed.format_time(now), subresource)
    return True


def _without_managed(obj: dict[str, Any] | None) -> Any:
    if not isinstance(obj, dict):
        return MISSING
    meta = obj.get("metadata")
    if isinstance(meta, dict) and "managedFields" in meta:
        obj = dict(obj)
        obj["metadata"] = {k: v for k, v in meta.items() if k != "managedFields"}
    return obj


def drop_path(trie: Trie, path: tuple[str, ...]) -> Trie:
    """`trie` without the subtree at a field path (given as plain field names)."""
    if not trie or not path:
        return trie
    pe = "f:" + path[0]
    if pe not in trie:
        return trie
    out = dict(trie)
    if len(path) == 1:
        del out[pe]
        return out
    sub = drop_path({k: v for k, v in trie[pe].items() if k != fieldpath.SELF}, path[1:])
    member = fieldpath.is_member(trie[pe])
    if sub:
        out[pe] = {fieldpath.SELF: {}, **sub} if member else sub
    elif member:
        out[pe] = {}
    else:
        del out[pe]
    return out
