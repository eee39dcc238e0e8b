"""Typed walks that turn objects into field sets, as structured-merge-diff's `typed` package does.

- `to_field_set`: the fields an applied configuration sets (leaves, list items, empty or undeclared maps).
- `compare`: what changed between two versions of an object (added, modified, removed field sets).
- `ensure_named_fields`: a set plus the declared struct fields leading to its members.
- `validate_applied`: the checks upstream runs on an apply configuration (undeclared fields, list-map
  items without keys, duplicates, values of the wrong type), with upstream's wording.

Lists are atomic unless associative: a list-map item is `k:{...}` by its key fields, a set item `v:...`.
A value whose shape disagrees with its schema is treated as an atomic leaf.
"""

from __future__ import annotations

import json
from typing import Any

from mini_kube.apiserver.patch.fieldpath import (
    SELF,
    Trie,
    insert,
    is_member,
    key_element,
    path_string,
    value_element,
)
from mini_kube.apiserver.patch.schema_walk import SchemaNode, deduced

MISSING: Any = object()


def resolved(node: SchemaNode | None) -> SchemaNode:
    """The node that governs a place: its declared one, or the deduced one where nothing is declared."""
    return node if node is not None else deduced()


def shape(node: SchemaNode | None, value: Any) -> str:
    """How to walk `value` here: "map", "list", "set", "listmap" or "leaf"."""
    node = resolved(node)
    kind = node.kind
    if isinstance(value, dict):
        if kind == "map" or kind == "any":
            return "leaf" if node.map_type == "atomic" or node.name == "io.k8s.apimachinery.pkg.runtime.RawExtension" else "map"
        return "leaf"
    if isinstance(value, list):
        if kind == "list" or (kind == "any" and node.list_type):
            rel = node.list_relationship()[0]
            return "leaf" if rel == "atomic" else ("listmap" if rel == "map" else "set")
        return "leaf"
    if value is None and kind in ("map", "list"):
        return "empty"
    return "leaf"


def element_key(node: SchemaNode, list_kind: str, item: Any) -> str:
    """The path element of a list item; raises ValueError with upstream's wording when it has none."""
    if list_kind == "set":
        if isinstance(item, dict):
            raise ValueError("associative list without keys has an element that's a map type")
        if isinstance(item, list):
            raise ValueError("not supported: associative list with lists as elements")
        if item is None:
            raise ValueError("associative list without keys has an element that's an explicit null")
        return value_element(item)
    if item is None:
        raise ValueError("associative list with keys may not have a null element")
    if not isinstance(item, dict):
        raise ValueError("associative list with keys may not have non-map elements")
    keys = node.list_map_keys or node.list_relationship()[1]
    items = node.items()
    defaults = items.key_defaults if items is not None else {}
    fields = {}
    for name in keys:
        if name in item:
            fields[name] = item[name]
        elif name in defaults:
            fields[name] = defaults[name]
    if not fields:
        quoted = "[" + " ".join(f'"{k}"' for k in keys) + "]"
        raise ValueError(f"associative list with keys has an element that omits all key fields {quoted} "
                         "(and doesn't have default values for any key fields)")
    return key_element(fields)


def _item_node(node: SchemaNode) -> SchemaNode:
    return node.items() or deduced()


# -- ToFieldSet -------------------------------------------------------------------------------------

def to_field_set(value: Any, node: SchemaNode | None) -> Trie:
    """The set of fields `value` sets, as owned by the manager that applies it."""
    out: Trie = {}
    _fs(value, node, out)
    return out


def _fs(value: Any, node: SchemaNode | None, out: Trie) -> bool:
    """Fill `out` with the descendants of `value`; True when `value`'s own path is a member."""
    how = shape(node, value)
    if how == "leaf":
        return True
    if how == "empty":
        return False
    if how == "map":
        for key, child in value.items():
            sub_node, declared = node.child(key) if node is not None else (None, False)
            sub: Trie = {}
            member = _fs(child, sub_node, sub)
            if child is None or (type(child) is dict and not child) or not declared:
                member = True
            if sub:
                if member:
                    sub[SELF] = {}
                out["f:" + key] = sub
            elif member:
                out["f:" + key] = {}
        return False
    node = resolved(node)
    items = _item_node(node)
    seen: dict[str, int] = {}
    elements = []
    for item in value:
        try:
            pe = element_key(node, how, item)
        except ValueError:
            continue
        seen[pe] = seen.get(pe, 0) + 1
        elements.append((pe, item))
    for pe, item in elements:
        if seen[pe] > 1:
            out[pe] = {}
            continue
        sub = {}
        _fs(item, items, sub)
        if sub:
            sub[SELF] = {}
            out[pe] = sub
        else:
            out[pe] = {}
    return False


# -- Compare ----------------------------------------------------------------------------------------

def compare(old: Any, new: Any, node: SchemaNode | None) -> tuple[Trie, Trie, Trie]:
    """(added, modified, removed) field sets going from `old` to `new` (MISSING for no object)."""
    added: Trie = {}
    modified: Trie = {}
    removed: Trie = {}
    _cmp(old, new, node, [], (added, modified, removed))
    return added, modified, removed


def _cmp(lhs: Any, rhs: Any, node: SchemaNode | None, path: list[str], out: tuple[Trie, Trie, Trie]) -> None:
    if lhs is not MISSING and rhs is not MISSING and type(lhs) is type(rhs) and lhs == rhs:
        return
    l_how = shape(node, lhs) if lhs is not MISSING else None
    r_how = shape(node, rhs) if rhs is not MISSING else None
    how = r_how or l_how or "leaf"  # both absent: a leaf, added
    if l_how is not None and r_how is not None and l_how != r_how:
        if {l_how, r_how} <= {"empty", "map"} or {l_how, r_how} <= {"empty", "listmap"} \
                or {l_how, r_how} <= {"empty", "set"}:
            how = r_how if r_how != "empty" else l_how
        else:
            how = "leaf"
    if how == "empty":
        how = "leaf"
    if how != "leaf" and is_empty_value(lhs) and is_empty_value(rhs):
        how = "leaf"
    if how == "leaf":
        if lhs is MISSING:
            insert(out[0], path)
        elif rhs is MISSING:
            insert(out[2], path)
        else:
            insert(out[1], path)
        return
    if how == "map":
        lmap = lhs if isinstance(lhs, dict) else {}
        rmap = rhs if isinstance(rhs, dict) else {}
        for key, lval in lmap.items():
            rval = rmap.get(key, MISSING)
            if rval is lval or (type(rval) is type(lval) and rval == lval):
                continue
            sub_node = node.child(key)[0] if node is not None else None
            path.append("f:" + key)
            _cmp(lval, rval, sub_node, path, out)
            path.pop()
        if not rmap.keys() <= lmap.keys():
            _cmp_added_keys(lmap, rmap, node, path, out)
    else:
        _cmp_list(lhs if isinstance(lhs, list) else [], rhs if isinstance(rhs, list) else [],
                  resolved(node), how, path, out)
    if lhs is MISSING:
        insert(out[0], path)
    elif rhs is MISSING:
        insert(out[2], path)


def _cmp_added_keys(lmap: dict[str, Any], rmap: dict[str, Any], node: SchemaNode | None, path: list[str],
                    out: tuple[Trie, Trie, Trie]) -> None:
    for key, rval in rmap.items():
        if key not in lmap:
            sub_node = node.child(key)[0] if node is not None else None
            path.append("f:" + key)
            _cmp(MISSING, rval, sub_node, path, out)
            path.pop()


def is_empty_value(value: Any) -> bool:
    return value is MISSING or value is None or (isinstance(value, dict | list) and not value)


def _index(values: list[Any], node: SchemaNode, how: str) -> dict[str, list[Any]]:
    index: dict[str, list[Any]] = {}
    for item in values:
        try:
            pe = element_key(node, how, item)
        except ValueError:
            continue
        index.setdefault(pe, []).append(item)
    return index


def _cmp_list(lhs: list[Any], rhs: list[Any], node: SchemaNode, how: str, path: list[str],
              out: tuple[Trie, Trie, Trie]) -> None:
    left = _index(lhs, node, how)
    right = _index(rhs, node, how)
    items = _item_node(node)
    order = list(left) + [pe for pe in right if pe not in left]
    for pe in order:
        l_list = left.get(pe, ())
        r_list = right.get(pe, ())
        path.append(pe)
        if len(l_list) <= 1 and len(r_list) <= 1:
            _cmp(l_list[0] if l_list else MISSING, r_list[0] if r_list else MISSING, items, path, out)
        elif len(l_list) >= 2 and len(r_list) >= 2:
            if l_list != r_list:
                insert(out[1], path)
        elif len(l_list) >= 2:
            if r_list:
                _cmp(MISSING, r_list[0], items, path, out)
            insert(out[2], path)
        else:
            if l_list:
                _cmp(l_list[0], MISSING, items, path, out)
            insert(out[0], path)
        path.pop()


# -- EnsureNamedFieldsAreMembers -----------------------------------------------------------------

def ensure_named_fields(trie: Trie, node: SchemaNode | None) -> Trie:
    """`trie` plus membership of every declared struct field that has members below it."""
    out: Trie = {}
    for pe, child in trie.items():
        if pe == SELF:
            continue
        if pe.startswith("f:"):
            sub_node, declared = node.child(pe[2:]) if node is not None else (None, False)
            declared = declared and node is not None and node.kind in ("map", "any")
        else:
            sub_node, declared = (_item_node(node) if node is not None else None), False
        member = is_member(child) or declared
        grand = {k: v for k, v in child.items() if k != SELF}
        sub = ensure_named_fields(grand, sub_node) if grand else {}
        if sub:
            if member:
                sub[SELF] = {}
            out[pe] = sub
        elif member:
            out[pe] = {}
    return out


# -- validation of an applied configuration ---------------------------------------------------------

def validate_applied(value: Any, node: SchemaNode | None) -> list[str]:
    """Upstream's errors for an apply configuration, each as `<path>: <message>`."""
    errors: list[str] = []
    _validate(value, node, [], errors)
    return errors


def _validate(value: Any, node: SchemaNode | None, path: list[str], errors: list[str]) -> None:
    if node is None:
        return
    if isinstance(value, dict) and node.kind in ("map", "any"):
        for key, child in value.items():
            sub_node, declared = node.child(key)
            if not declared and sub_node is None:
                errors.append(f"{path_string([*path, 'f:' + key])}: field not declared in schema")
                break
            path.append("f:" + key)
            _validate(child, sub_node, path, errors)
            path.pop()
        return
    if isinstance(value, list) and node.kind in ("list", "any"):
        rel = node.list_relationship()[0] if node.kind == "list" or node.list_type else "atomic"
        items = _item_node(node)
        if rel == "atomic":
            for i, item in enumerate(value):
                path.append(f"i:{i}")
                _validate(item, items, path, errors)
                path.pop()
            return
        seen: set[str] = set()
        for i, item in enumerate(value):
            try:
                pe = element_key(node, rel if rel == "set" else "listmap", item)
            except ValueError as err:
                errors.append(f"{path_string(path)}: element {i}: {err}")
                return
            if pe in seen:
                errors.append(f"{path_string(path)}: duplicate entries for key {path_string([pe])}")
            seen.add(pe)
            path.append(pe)
            _validate(item, items, path, errors)
            path.pop()
        return
    problem = _type_problem(value, node)
    if problem:
        errors.append(f"{path_string(path)}: {problem}" if path else problem)


def _type_problem(value: Any, node: SchemaNode) -> str:
    """structured-merge-diff's complaint about a value its schema does not allow (validateScalar, mapValue,
    listValue), or ""; null is always allowed."""
    if value is None or node.kind == "any":
        return ""
    if node.kind == "map":
        return "" if isinstance(value, dict) else f"expected map, got &{{{_go_v(value)}}}"
    if node.kind == "list":
        return "" if isinstance(value, list) else f"expected list, got &{{{_go_v(value)}}}"
    types = node.schema.get("type")
    types = {types} if isinstance(types, str) else set(types or ())
    if types & {"integer", "number"}:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        return "" if ok else f"expected numeric (int or float), got {_go_type(value)}"
    if "string" in types:
        ok = isinstance(value, str)
        return "" if ok else f"expected string, got &value.valueUnstructured{{Value:{_go_sharp(value)}}}"
    if "boolean" in types:
        return "" if isinstance(value, bool) else f"expected boolean, got &{{{_go_v(value)}}}"
    ok = not isinstance(value, dict | list)
    return "" if ok else f"expected any scalar, got &{{{_go_v(value)}}}"


def _go_type(value: Any) -> str:
    """Go's %T of a decoded JSON value."""
    for kind, name in ((bool, "bool"), (int, "int64"), (float, "float64"), (str, "string"),
                       (dict, "map[string]interface {}"), (list, "[]interface {}")):
        if isinstance(value, kind):
            return name
    return "<nil>"


def _go_float(value: float) -> str:
    text = repr(value)
    if "e" in text:
        mantissa, exponent = text.split("e")
        return f"{mantissa}e{'-' if exponent.startswith('-') else '+'}{exponent.lstrip('+-').zfill(2)}"
    return text.removesuffix(".0")


def _go_v(value: Any) -> str:
    """Go's %v of a decoded JSON value."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return _go_float(value)
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{_go_v(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(_go_v(v) for v in value) + "]"
    return str(value)


def _go_sharp(value: Any) -> str:
    """Go's %#v of a decoded JSON value."""
    if value is None:
        return "interface {}(nil)"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, dict):
        return "map[string]interface {}{" + ", ".join(f"{json.dumps(k)}:{_go_sharp(value[k])}"
                                                       for k in sorted(value)) + "}"
    if isinstance(value, list):
        return "[]interface {}{" + ", ".join(_go_sharp(v) for v in value) + "}"
    return _go_v(value)
