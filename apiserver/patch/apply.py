"""Server-side apply: merge an applied configuration into the live object and track who owns what.

The steps follow upstream's field manager for an Apply:
1. the applied object must be of the endpoint's kind and carry no managedFields (400 otherwise), and
   must type-check against the schema (undeclared fields, list-map items without keys, duplicates: the
   500 upstream answers, with its wording);
2. an object that has no managedFields yet is first given a `before-first-apply` Update entry owning
   everything it holds, so fields set by `kubectl create` or client-side apply are not silently taken;
3. the configuration is merged into the live object, the applier's entry becomes the configuration's
   field set, and fields it applied last time but not now, and that nobody else owns, are removed;
4. fields owned by other managers that the merge would change are conflicts: a 409 unless `force`,
   in which case ownership moves to the applier; removed fields leave every owner;
5. for the manager `kubectl`, conflicts on fields whose value still matches the client-side
   `last-applied-configuration` annotation are taken over silently, and that annotation, if present,
   is rewritten to the applied configuration (upstream's client-side to server-side migration).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime
from typing import Any

import orjson
from mini_kube.apiserver.patch import fieldpath, managed
from mini_kube.apiserver.patch.conflicts import Conflict, conflict_error
from mini_kube.apiserver.patch.empty import empty_object
from mini_kube.apiserver.patch.errors import bad_request, internal
from mini_kube.apiserver.patch.fieldpath import Trie
from mini_kube.apiserver.patch.fieldset import compare, ensure_named_fields, to_field_set, validate_applied
from mini_kube.apiserver.patch.managed import APPLY, Managed, ManagerEntry, ManagerKey
from mini_kube.apiserver.patch.schema_walk import SchemaNode, deduced
from mini_kube.apiserver.patch.typed_merge import MISSING, merge, remove_items
from mini_kube.apiserver.patch.update import STRIP, drop_path, record_update

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
BEFORE_FIRST_APPLY = "before-first-apply"
MAX_ANNOTATIONS_SIZE = 256 * 1024


class _Conflicts(Exception):
    def __init__(self, conflicts: list[Conflict]) -> None:
        super().__init__("conflicts")
        self.conflicts = conflicts


def server_side_apply(live_obj: dict[str, Any] | None, applied_obj: dict[str, Any], manager: str,
                      api_version: str, force: bool = False, schema: SchemaNode | None = None,
                      now: datetime | str | None = None, subresource: str = "", kind: str | None = None,
                      ignored: Iterable[tuple[str, ...]] = ()) -> dict[str, Any]:
    """The object after `manager` applies `applied_obj`, with its managedFields; raises PatchError.

    `live_obj` is the stored object, or None when the apply creates it. `schema` is the kind's node
    (None: deduced, as for a CRD without schema); `kind`, when given, is checked against the applied
    object's kind; `ignored` are field paths this endpoint resets (e.g. ("status",)).
    """
    schema = schema or deduced()
    ignored = tuple(ignored)
    _check_applied(applied_obj, api_version, kind, schema)
    live = _without_managed(live_obj) if live_obj is not None else {}
    entries = _decode(live_obj)
    try:
        result, entries = _apply(live, live_obj is not None, applied_obj, entries, manager, api_version,
                                 force, schema, now, subresource, ignored)
    except _Conflicts as err:
        remaining = err.conflicts
        if manager == "kubectl":
            allowed = _allowed_by_last_applied(live, api_version, schema)
            if allowed is not None:
                remaining = [c for c in remaining if not fieldpath.has(allowed, c[1])]
        if remaining:
            raise conflict_error(remaining) from None
        result, entries = _apply(live, live_obj is not None, applied_obj, _decode(live_obj), manager,
                                 api_version, True, schema, now, subresource, ignored)
    except ValueError as err:
        raise internal(f"failed to merge config: {err}") from None
    if manager == "kubectl":
        result = _sync_last_applied(result, applied_obj)
    result = orjson.loads(orjson.dumps(result))  # the result must share nothing with live or applied
    encoded = managed.encode(entries)
    meta = result.setdefault("metadata", {})
    if encoded is not None:
        meta["managedFields"] = encoded
    return result


def _check_applied(applied: dict[str, Any], api_version: str, kind: str | None, schema: SchemaNode) -> None:
    applied_version = applied.get("apiVersion")
    applied_kind = applied.get("kind")
    if applied_version != api_version or (kind is not None and applied_kind != kind):
        raise bad_request(f"invalid object type: {_gvk(applied_version, applied_kind)}")
    meta = applied.get("metadata")
    if isinstance(meta, dict) and meta.get("managedFields") is not None:
        raise bad_request("metadata.managedFields must be nil")
    errors = validate_applied(applied, schema)
    if errors:
        meta = meta if isinstance(meta, dict) else {}
        where = f"{meta.get('namespace') or ''}/{meta.get('name') or ''}; {_gvk(applied_version, applied_kind)}"
        text = errors[0] if len(errors) == 1 else "errors:\n" + "\n".join("  " + e for e in errors)
        raise internal(f"failed to create typed patch object ({where}): {text}")


def _gvk(api_version: Any, kind: Any) -> str:
    group, _, version = (api_version or "").rpartition("/")
    return f"{group}/{version}, Kind={kind or ''}"


def _decode(obj: dict[str, Any] | None) -> Managed:
    """Live managers; a malformed list counts as none (upstream fails the apply with a 500 instead)."""
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    if not isinstance(meta, dict):
        return {}
    try:
        return managed.decode(meta.get("managedFields"))
    except ValueError:
        return {}


def _without_managed(obj: dict[str, Any]) -> dict[str, Any]:
    out = dict(obj)
    meta = obj.get("metadata")
    if isinstance(meta, dict):
        out["metadata"] = {k: v for k, v in meta.items() if k != "managedFields"}
    return out


def _apply(live: dict[str, Any], exists: bool, applied: dict[str, Any], entries: Managed, manager: str,
           api_version: str, force: bool, schema: SchemaNode, now: datetime | str | None,
           subresource: str, ignored: tuple[tuple[str, ...], ...]) -> tuple[dict[str, Any], Managed]:
    entries = {k: ManagerEntry(e.manager, e.operation, e.api_version, e.fields, e.time, e.subresource)
               for k, e in entries.items()}
    if not entries and exists:
        record_update(entries, empty_object(schema), live, BEFORE_FIRST_APPLY, api_version, now, subresource, schema, ignored)
    merged = merge(live, applied, schema)
    key = managed.manager_key(manager, APPLY, api_version, subresource)
    last = entries.get(key)
    config = to_field_set(applied, schema)
    for path in ignored:
        config = drop_path(config, path)
    entries[key] = ManagerEntry(manager, APPLY, api_version, config, last.time if last else None, subresource)
    if last is not None and last.fields:
        merged = _prune(merged, entries, last.fields, schema)
    _take_ownership(live, merged, entries, key, force, schema, ignored)
    mine = fieldpath.difference(entries[key].fields, STRIP)
    if mine:
        entries[key].fields = mine
    else:
        del entries[key]
    if merged == live:
        return dict(live), entries
    if key in entries:
        entries[key].time = managed.format_time(now)
    return merged, entries


def _take_ownership(live: dict[str, Any], merged: dict[str, Any], entries: Managed, key: ManagerKey,
                    force: bool, schema: SchemaNode, ignored: tuple[tuple[str, ...], ...]) -> None:
    added, modified, removed = compare(live, merged, schema)
    changed = fieldpath.union(added, modified)
    for path in ignored:
        changed = drop_path(changed, path)
        removed = drop_path(removed, path)
    conflicts: list[Conflict] = []
    taken: dict[ManagerKey, Trie] = {}
    for other, entry in entries.items():
        if other == key:
            continue
        overlap = fieldpath.intersection(entry.fields, changed)
        if overlap:
            taken[other] = overlap
            conflicts.extend((other, path) for path in fieldpath.paths(overlap))
    if conflicts and not force:
        raise _Conflicts(conflicts)
    for other in [k for k in entries if k != key]:
        entry = entries[other]
        fields = fieldpath.difference(fieldpath.difference(entry.fields, taken.get(other, {})), removed)
        if fields:
            entry.fields = fields
        else:
            del entries[other]


def _prune(merged: dict[str, Any], entries: Managed, last: Trie, schema: SchemaNode) -> dict[str, Any]:
    """Drop what the applier applied last time but not now, unless another manager owns it."""
    last_named = ensure_named_fields(last, schema)
    pruned = _removed(merged, last_named, schema)
    owned: Trie = {}
    for entry in entries.values():
        owned = fieldpath.union(owned, entry.fields)
    merged_set = ensure_named_fields(to_field_set(merged, schema), schema)
    pruned_set = ensure_named_fields(to_field_set(pruned, schema), schema)
    keep = fieldpath.union(pruned_set, ensure_named_fields(owned, schema))
    pruned = _removed(merged, fieldpath.difference(merged_set, keep), schema)
    pruned_set = ensure_named_fields(to_field_set(pruned, schema), schema)
    dangling = fieldpath.intersection(fieldpath.difference(merged_set, pruned_set), last_named)
    return _removed(merged, dangling, schema)


def _removed(obj: dict[str, Any], trie: Trie, schema: SchemaNode) -> dict[str, Any]:
    out = remove_items(obj, trie, schema)
    return {} if out is MISSING else out


def _allowed_by_last_applied(live: dict[str, Any], api_version: str, schema: SchemaNode) -> Trie | None:
    """Fields whose live value still equals the client-side last-applied configuration."""
    annotations = (live.get("metadata") or {}).get("annotations") or {}
    text = annotations.get(LAST_APPLIED) if isinstance(annotations, dict) else None
    if not text or not isinstance(text, str):
        return None
    try:
        last = json.loads(text)
    except ValueError:
        return None
    if not isinstance(last, dict) or last.get("apiVersion") != api_version or validate_applied(last, schema):
        return None
    added, modified, removed = compare(last, live, schema)
    allowed = to_field_set(last, schema)
    for changed in (modified, added, removed):
        allowed = fieldpath.difference(allowed, changed)
    return allowed


def _sync_last_applied(result: dict[str, Any], applied: dict[str, Any]) -> dict[str, Any]:
    """Rewrite an existing last-applied annotation to the configuration kubectl just applied."""
    meta = result.get("metadata")
    if not isinstance(meta, dict):
        return result
    annotations = meta.get("annotations")
    if not isinstance(annotations, dict) or not annotations.get(LAST_APPLIED):
        return result
    config = dict(applied)
    config_meta = config.get("metadata")
    if isinstance(config_meta, dict) and isinstance(config_meta.get("annotations"), dict):
        config["metadata"] = dict(config_meta)
        config["metadata"]["annotations"] = {k: v for k, v in config_meta["annotations"].items()
                                             if k != LAST_APPLIED}
    value = fieldpath.go_json(config) + "\n"
    annotations = dict(annotations)
    annotations[LAST_APPLIED] = value
    if sum(len(k) + len(v) for k, v in annotations.items() if isinstance(v, str)) > MAX_ANNOTATIONS_SIZE:
        del annotations[LAST_APPLIED]
    result = dict(result)
    result["metadata"] = {**meta, "annotations": annotations}
    return result
