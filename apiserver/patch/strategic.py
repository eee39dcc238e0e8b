"""Strategic merge patch, applied server-side as k8s.io/apimachinery's strategicpatch does it.

Maps merge key by key and `null` deletes; a list whose field has patch strategy `merge` merges by its
merge key (lists of objects) or as a set (lists of scalars); other lists are replaced. Directives:
`$patch: replace|delete` on maps and list items, `$patch: replace` inside a list, `$retainKeys`,
`$deleteFromPrimitiveList/<field>` and `$setElementOrder/<field>`. The order of merged lists follows
upstream: patch order first, with server-only items kept next to their neighbours.

Errors carry upstream's status: malformed directives are 400, lists of lists 422, anything else the
plain 500 a Go error becomes. Custom resources take no strategic merge patch at all (415).
"""

from __future__ import annotations

from typing import Any

import orjson
from mini_kube.apiserver.gofmt import go_reflect_type, go_v, json_kind
from mini_kube.apiserver.patch.errors import (
    PatchError,
    bad_request,
    internal,
    unprocessable,
    unsupported_patch_type,
)
from mini_kube.apiserver.patch.schema_walk import SchemaNode, deduced

DIRECTIVE = "$patch"
DELETE_FROM = "$deleteFromPrimitiveList"
SET_ORDER = "$setElementOrder"
RETAIN_KEYS = "$retainKeys"

BAD_PRIMITIVE_LIST = "invalid patch format of primitive list"
BAD_RETAIN_KEYS = "invalid patch format of retainKeys"
BAD_SET_ORDER = "invalid patch format of setElementOrder list"
NO_LIST_OF_LISTS = "lists of lists are not supported"


class _SmpError(Exception):
    """An upstream strategicpatch error before it is turned into a Status."""


def strategic_merge_patch(doc: dict[str, Any], patch: Any, schema: SchemaNode | None) -> dict[str, Any]:
    """Apply a strategic merge patch to a copy of `doc` using the patch metadata in `schema`.

    `schema` must be a built-in definition's node; a custom resource (structural or schema-less) is
    refused with the 415 upstream answers.
    """
    if schema is None or schema.origin != "builtin":
        raise unsupported_patch_type()
    if not isinstance(patch, dict):
        raise bad_request(f"json: cannot unmarshal {json_kind(patch, null='number')} into Go value of type map[string]interface {{}}")
    original = orjson.loads(orjson.dumps(doc))
    patch = orjson.loads(orjson.dumps(patch))
    try:
        return _merge_map(original, patch, schema)
    except PatchError:
        raise
    except _SmpError as err:
        raise _status(str(err)) from err


def _status(message: str) -> PatchError:
    if message in (BAD_PRIMITIVE_LIST, BAD_RETAIN_KEYS, BAD_SET_ORDER):
        return bad_request(message)
    if message == NO_LIST_OF_LISTS:
        return unprocessable()
    return internal(message)


# -- metadata ---------------------------------------------------------------------------------------

def _lookup(schema: SchemaNode, key: str) -> tuple[SchemaNode, str, str]:
    """(child schema, list/map strategy without retainKeys, merge key) for a field of `schema`."""
    node = schema.field(key)
    if node is None:
        node = schema.map_values() or deduced()
        return node, "", ""
    return node, _strategy(node.patch_strategy), node.merge_key


def _strategy(value: str) -> str:
    parts = value.split(",") if value else []
    if len(parts) <= 1:
        return "" if not parts or parts[0] == "retainKeys" else parts[0]
    if len(parts) == 2 and "retainKeys" in parts:
        return parts[1] if parts[0] == "retainKeys" else parts[0]
    raise _SmpError(f"unexpected patch strategy: [{' '.join(parts)}]")


def _items(node: SchemaNode) -> SchemaNode:
    return node.items() or deduced()


# -- maps ---------------------------------------------------------------------------------------------

def _merge_map(original: dict[str, Any] | None, patch: dict[str, Any], schema: SchemaNode) -> dict[str, Any]:
    if DIRECTIVE in patch:
        return _map_directive(patch[DIRECTIVE], patch)
    if original is None:
        original = {}
    _apply_retain_keys(original, patch)
    _merge_set_element_order(original, patch, schema)
    for key in list(patch):
        value = patch[key]
        delete_list = False
        if key.startswith(DELETE_FROM):
            key = _extract_key(key, DELETE_FROM, BAD_PRIMITIVE_LIST)
            delete_list = True
        if value is None:
            original.pop(key, None)
            continue
        if key not in original:
            if not delete_list:
                _discard_nulls(value)
                kept, keep = _remove_directives(value)
                if keep:
                    original[key] = kept
            continue
        current = original[key]
        if _shape(current) != _shape(value):
            if not delete_list:
                _discard_nulls(value)
                kept, keep = _remove_directives(value)
                if keep:
                    original[key] = kept
                else:
                    del original[key]
            continue
        if isinstance(current, dict):
            sub, strategy, _ = _lookup(schema, key)
            original[key] = value if strategy == "replace" else _merge_map(current, value, sub)
        elif isinstance(current, list):
            sub, strategy, merge_key = _lookup(schema, key)
            if strategy == "merge" or delete_list:
                original[key] = _merge_list(current, value, _items(sub), merge_key, delete_list)
            else:
                original[key] = value
        else:
            kept, keep = _remove_directives(value)
            if keep:
                original[key] = kept
            else:
                del original[key]
    return original


def _shape(value: Any) -> type:
    return type(value) if isinstance(value, dict | list) else _SCALAR_SHAPES.get(type(value), type(value))


_SCALAR_SHAPES = {bool: bool, int: int, float: float, str: str}


def _map_directive(directive: Any, patch: dict[str, Any]) -> dict[str, Any]:
    if directive == "replace":
        del patch[DIRECTIVE]
        return patch
    if directive == "delete":
        return {}
    raise _SmpError(f"unknown patch type: {go_v(directive)} in map: {go_v(patch)}")


def _extract_key(key: str, prefix: str, error: str) -> str:
    head, sep, rest = key.partition("/")
    if not sep or head != prefix:
        raise _SmpError(error)
    return rest


def _apply_retain_keys(original: dict[str, Any], patch: dict[str, Any]) -> None:
    if RETAIN_KEYS not in patch:
        return
    retain = patch.pop(RETAIN_KEYS)
    if not isinstance(retain, list):
        raise _SmpError(BAD_RETAIN_KEYS)
    keep = set()
    for item in retain:
        if isinstance(item, str):
            keep.add(item)
    for key, value in patch.items():
        if value is None or key.startswith((DELETE_FROM, SET_ORDER)):
            continue
        if key not in keep:
            raise _SmpError(BAD_RETAIN_KEYS)
    for key in list(original):
        if key not in keep:
            del original[key]


def _discard_nulls(value: Any) -> None:
    if isinstance(value, dict):
        for key in [k for k, v in value.items() if v is None]:
            del value[key]
        for v in value.values():
            _discard_nulls(v)
    elif isinstance(value, list):
        for v in value:
            _discard_nulls(v)


def _remove_directives(value: Any) -> tuple[Any, bool]:
    """Drop maps carrying `$patch` (and list items that are such maps); False when `value` is one."""
    if isinstance(value, dict):
        if DIRECTIVE in value:
            return None, False
        for key in list(value):
            kept, keep = _remove_directives(value[key])
            if keep:
                value[key] = kept
            else:
                del value[key]
        return value, True
    if isinstance(value, list):
        out = []
        for item in value:
            kept, keep = _remove_directives(item)
            if keep:
                out.append(kept)
        return out, True
    return value, True


# -- $setElementOrder -----------------------------------------------------------------------------

def _merge_set_element_order(original: dict[str, Any], patch: dict[str, Any], schema: SchemaNode) -> None:
    for directive in [k for k in patch if k.startswith(SET_ORDER)]:
        order = patch.pop(directive)
        if not isinstance(order, list):
            raise _SmpError(f"expected a []interface {{}}, but received a {go_reflect_type(order)}")
        key = _extract_key(directive, SET_ORDER, BAD_SET_ORDER)
        found_original, found_patch = key in original, key in patch
        original_value, patch_value = original.get(key), patch.get(key)
        if found_original and not isinstance(original_value, list):
            raise _SmpError(f"expected a []interface {{}}, but received a {go_reflect_type(original_value)}")
        if found_patch and not isinstance(patch_value, list):
            raise _SmpError(f"expected a []interface {{}}, but received a {go_reflect_type(patch_value)}")
        original_list: list[Any] = original_value if isinstance(original_value, list) else []
        patch_list: list[Any] = patch_value if isinstance(patch_value, list) else []
        sub, strategy, merge_key = _lookup(schema, key)
        _validate_set_order(patch_list, order, merge_key)
        if found_original and not found_patch:
            merged = original_list
        elif found_patch and not found_original:
            merged, _ = _remove_directives(patch_list)
        elif found_original and found_patch:
            if strategy == "merge":
                merged = _merge_list(original_list, patch_list, _items(sub), merge_key, False)
            else:
                merged = patch_list
        else:
            continue
        if merge_key:
            patch_items, server_only = _partition_maps(merged, order, merge_key)
        else:
            patch_items, server_only = _partition_scalars(merged, order)
        kind = _element_kind(original_list, patch_list)
        original[key] = _normalize_order(patch_items, server_only, order, original_list, merge_key, kind)
        patch.pop(key, None)


def _validate_set_order(patch_list: list[Any], order: list[Any], merge_key: str) -> None:
    if not order or not patch_list:
        return
    items = _split_deletes(patch_list)[0] if merge_key else patch_list
    pi = oi = 0
    while pi < len(items) and oi < len(order):
        if isinstance(items[pi], dict) and DIRECTIVE in items[pi]:
            pi += 1
            continue
        if _merge_key_equal(items[pi], order[oi], merge_key):
            pi += 1
        oi += 1
    if pi < len(items) and oi >= len(order):
        raise _SmpError(f"The order in patch list:\n{go_v(patch_list)}\n doesn't match {SET_ORDER} list:\n"
                        f"{go_v(order)}\n")


def _merge_key_equal(left: Any, right: Any, merge_key: str) -> bool:
    if not merge_key:
        return _same(left, right)
    if not isinstance(left, dict):
        raise _SmpError(f"expected a map[string]interface {{}}, but received a {go_reflect_type(left)}")
    if not isinstance(right, dict):
        raise _SmpError(f"expected a map[string]interface {{}}, but received a {go_reflect_type(right)}")
    if merge_key not in left:
        raise _no_merge_key(left, merge_key)
    if merge_key not in right:
        raise _no_merge_key(right, merge_key)
    return _same(left[merge_key], right[merge_key])


# -- lists ----------------------------------------------------------------------------------------

def _merge_list(original: list[Any], patch: list[Any], items: SchemaNode, merge_key: str,
                delete_list: bool) -> list[Any]:
    if not original and not patch:
        return original
    kind = _element_kind(original, patch)
    if kind is not dict:
        if delete_list:
            drop = {_skey(v) for v in patch}
            return [v for v in original if _skey(v) not in drop]
        merged = _dedupe(original + patch)
    else:
        if not merge_key:
            raise _SmpError(f"cannot merge lists without merge key for {_type_name(items)}")
        original, patch = _special_elements(original, patch, merge_key)
        merged = _merge_by_key(list(original), patch, merge_key, items)
    if merge_key:
        patch_items, server_only = _partition_maps(merged, patch, merge_key)
    else:
        patch_items, server_only = _partition_scalars(merged, patch)
    return _normalize_order(patch_items, server_only, patch, original, merge_key, kind)


def _type_name(node: SchemaNode) -> str:
    return "struct" if node.kind == "map" else node.kind


def _element_kind(*slices: list[Any]) -> type:
    kind: type | None = None
    for v in (v for values in slices for v in values):
        shape = _shape(v)
        if kind is None:
            if shape is list:
                raise _SmpError(NO_LIST_OF_LISTS)
            kind = shape
        elif shape is not kind:
            raise _SmpError("list element types are not identical: " + go_v(list(slices)))
    if kind is None:
        raise _SmpError("no elements in any of the given slices")
    return kind


def _special_elements(original: list[Any], patch: list[Any], merge_key: str) -> tuple[list[Any], list[Any]]:
    plain: list[Any] = []
    deleted: set[Any] = set()
    replace = False
    for item in patch:
        directive = item.get(DIRECTIVE, _ABSENT) if isinstance(item, dict) else _ABSENT
        if directive is _ABSENT:
            plain.append(item)
        elif directive == "delete":
            if merge_key not in item:
                raise _no_merge_key(item, merge_key)
            deleted.add(_skey(item[merge_key]))
        elif directive == "replace":
            replace = True
        elif directive == "merge":
            raise _SmpError("merging lists cannot yet be specified in the patch")
        else:
            raise _SmpError(f"unknown patch type: {go_v(directive)} in map: {go_v(item)}")
    if deleted:  # one pass, however many items the patch deletes
        original = [o for o in original if not (isinstance(o, dict) and merge_key in o
                                                 and _skey(o[merge_key]) in deleted)]
    if replace:
        return plain, []
    return original, plain


_ABSENT = object()


def _merge_by_key(original: list[Any], patch: list[Any], merge_key: str, items: SchemaNode) -> list[Any]:
    index = _KeyIndex(original, merge_key)
    for item in patch:
        if merge_key not in item:
            raise _no_merge_key(item, merge_key)
        at = index.find(item[merge_key])
        if at < 0:
            index.add(item)
            original.append(item)
        else:
            original[at] = _merge_map(original[at], item, items)
    return original


class _KeyIndex:
    """findMapInSliceBasedOnKeyValue in O(1): the first map whose merge key equals the target, an error when a
    non-map comes before it (or there is none); a linear scan per item made large patches quadratic."""

    def __init__(self, values: list[Any], merge_key: str) -> None:
        self.merge_key, self.size = merge_key, len(values)
        self.first: dict[Any, int] = {}
        self.bad = next((i for i, v in enumerate(values) if not isinstance(v, dict)), -1)
        for i, v in enumerate(values):
            if isinstance(v, dict) and merge_key in v:
                self.first.setdefault(_skey(v[merge_key]), i)

    def find(self, target: Any) -> int:
        at = self.first.get(_skey(target), -1)
        if self.bad >= 0 and (at < 0 or self.bad < at):
            raise _SmpError(f"value for key {self.bad} is not a map")
        return at

    def add(self, value: dict[str, Any]) -> None:
        """`value` appended to the indexed list."""
        if self.merge_key in value:
            self.first.setdefault(_skey(value[self.merge_key]), self.size)
        self.size += 1


def _partition_scalars(merged: list[Any], by: list[Any]) -> tuple[list[Any], list[Any]]:
    wanted = {_skey(v) for v in by}
    in_patch = [v for v in merged if _skey(v) in wanted]
    server_only = [v for v in merged if _skey(v) not in wanted]
    return in_patch, server_only


def _partition_maps(merged: list[Any], by: list[Any], merge_key: str) -> tuple[list[Any], list[Any]]:
    in_patch: list[Any] = []
    server_only: list[Any] = []
    index = _KeyIndex(by, merge_key)
    for v in merged:
        if not isinstance(v, dict):
            raise _SmpError(f"expected a map[string]interface {{}}, but received a {go_reflect_type(v)}")
        if merge_key not in v:
            raise _no_merge_key(v, merge_key)
        (in_patch if index.find(v[merge_key]) >= 0 else server_only).append(v)
    return in_patch, server_only


def _normalize_order(patch_items: list[Any], server_only: list[Any], patch_order: list[Any],
                     server_order: list[Any], merge_key: str, kind: type) -> list[Any]:
    """Patch items in patch order, server-only items in live order, interleaved as upstream does."""
    patch_items = _sort_by(patch_items, patch_order, merge_key, kind)
    server_only = _sort_by(server_only, server_order, merge_key, kind)
    positions = _positions(server_order, merge_key, kind)
    out: list[Any] = []
    i = j = 0
    while i < len(server_only) or j < len(patch_items):
        if i >= len(server_only):
            out.append(patch_items[j])
            j += 1
        elif j >= len(patch_items):
            out.append(server_only[i])
            i += 1
        else:
            li = positions.get(_ident(server_only[i], merge_key, kind))
            ri = positions.get(_ident(patch_items[j], merge_key, kind))
            if li is not None and ri is not None and li < ri:
                out.append(server_only[i])
                i += 1
            else:
                out.append(patch_items[j])
                j += 1
    return out


def _sort_by(values: list[Any], order: list[Any], merge_key: str, kind: type) -> list[Any]:
    deletes: list[Any] = []
    if kind is dict:
        for v in values + order:
            if not isinstance(v, dict):
                raise _SmpError(f"expected a map[string]interface {{}}, but received a {go_reflect_type(v)}")
            if merge_key not in v:
                raise _no_merge_key(v, merge_key)
        values, deletes = _split_deletes(values)
    positions = _positions(order, merge_key, kind)
    far = len(order)
    ranked = sorted(range(len(values)),
                    key=lambda n: (positions.get(_ident(values[n], merge_key, kind), far), n))
    return [values[n] for n in ranked] + deletes


def _split_deletes(values: list[Any]) -> tuple[list[Any], list[Any]]:
    keep: list[Any] = []
    deletes: list[Any] = []
    for v in values:
        if not isinstance(v, dict):
            raise _SmpError(f"expected a map[string]interface {{}}, but received a {go_reflect_type(v)}")
        (deletes if v.get(DIRECTIVE) == "delete" else keep).append(v)
    return keep, deletes


def _positions(order: list[Any], merge_key: str, kind: type) -> dict[Any, int]:
    positions: dict[Any, int] = {}
    for n, v in enumerate(order):
        positions.setdefault(_ident(v, merge_key, kind), n)
    return positions


def _ident(value: Any, merge_key: str, kind: type) -> Any:
    if kind is dict:
        return _skey(value.get(merge_key)) if isinstance(value, dict) else None
    return _skey(value)


def _dedupe(values: list[Any]) -> list[Any]:
    seen: set[Any] = set()
    out = []
    for v in values:
        k = _skey(v)
        if k not in seen:
            seen.add(k)
            out.append(v)
    return out


def _skey(value: Any) -> Any:
    """A hashable identity that keeps Go's distinctions (true is not 1, 1 is not 1.0)."""
    if isinstance(value, dict | list):
        return ("json", orjson.dumps(value, option=orjson.OPT_SORT_KEYS))
    return (type(value).__name__, value)


def _same(left: Any, right: Any) -> bool:
    return _skey(left) == _skey(right)


def _no_merge_key(item: Any, merge_key: str) -> _SmpError:
    return _SmpError(f"map: {go_v(item)} does not contain declared merge key: {merge_key}")
