"""Field sets as structured-merge-diff keeps them, stored directly in their `fieldsV1` form.

A set is a trie of nested dicts keyed by serialized path elements: `f:<field>`, `k:<json of key fields>`
for a list-map item, `v:<json value>` for a set item, `i:<index>`. A node is a member of the set (the path
itself is in it) when it is empty or holds the key `.`. That is exactly the JSON the apiserver writes in
`metadata.managedFields[].fieldsV1`, so decoding is free and encoding is a sort into upstream's order
(field names, then keys, then values, then indices; `.` first). Operations never modify their inputs.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from typing import Any

Trie = dict[str, Any]
SELF = "."


def is_member(node: Trie) -> bool:
    return not node or SELF in node


def field(name: str) -> str:
    return "f:" + name


def key_element(fields: dict[str, Any]) -> str:
    """The `k:` element for list-map key fields (sorted by name, Go JSON encoding)."""
    return "k:{" + ",".join(go_json(name) + ":" + go_json(fields[name]) for name in sorted(fields)) + "}"


def value_element(value: Any) -> str:
    return "v:" + go_json(value)


def go_json(value: Any) -> str:
    """Compact JSON the way Go's encoding/json writes it (HTML characters escaped, sorted keys)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    if "<" in text or ">" in text or "&" in text or "\u2028" in text or "\u2029" in text:
        text = (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
                .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))
    return text


# -- set algebra ------------------------------------------------------------------------------------

def _node(member: bool, children: Trie) -> Trie | None:
    """A node from its membership and children (never modifies `children`, which may be shared)."""
    if children:
        if member and SELF not in children:
            return {SELF: {}, **children}
        if not member and SELF in children:
            return {k: v for k, v in children.items() if k != SELF}
        return children
    return {} if member else None


def union(a: Trie, b: Trie) -> Trie:
    if not b:
        return a
    if not a:
        return b
    out: Trie = {k: v for k, v in a.items() if k != SELF}
    for k, v in b.items():
        if k == SELF:
            continue
        mine = out.get(k)
        if mine is None:
            out[k] = v
        else:
            out[k] = _node(is_member(mine) or is_member(v), union(_children(mine), _children(v)))
    return out


def difference(a: Trie, b: Trie) -> Trie:
    """Paths of `a` not in `b` (b's membership of a node removes only that node, not its subtree).

    Returns `a` itself when nothing is removed, so unchanged sets keep their identity.
    """
    if not a or not b:
        return a
    out: Trie = {}
    same = True
    for k, v in a.items():
        if k == SELF:
            continue
        other = b.get(k)
        if other is None:
            out[k] = v
            continue
        node = _node(is_member(v) and not is_member(other), difference(_children(v), _children(other)))
        if node is None:
            same = False
        else:
            out[k] = node
            if same and not (node is v or (not node and not v)):
                same = _same_node(node, v)
    if same and len(out) == len(a) - (SELF in a):
        return a
    return out


def _same_node(new: Trie, old: Trie) -> bool:
    """True when a rebuilt node has the same membership and children (by identity) as `old`."""
    if is_member(new) != is_member(old):
        return False
    old_children = [k for k in old if k != SELF]
    new_children = [k for k in new if k != SELF]
    return len(old_children) == len(new_children) and all(new[k] is old[k] for k in old_children)


def intersection(a: Trie, b: Trie) -> Trie:
    if not a or not b:
        return {}
    out: Trie = {}
    small, large = (a, b) if len(a) <= len(b) else (b, a)
    for k, v in small.items():
        if k == SELF:
            continue
        other = large.get(k)
        if other is None:
            continue
        node = _node(is_member(v) and is_member(other), intersection(_children(v), _children(other)))
        if node is not None:
            out[k] = node
    return out


def _children(node: Trie) -> Trie:
    if SELF not in node:
        return node
    return {k: v for k, v in node.items() if k != SELF}


def has(trie: Trie, path: list[str] | tuple[str, ...]) -> bool:
    node = trie
    for pe in path:
        child = node.get(pe) if pe != SELF else None
        if child is None:
            return False
        node = child
    return bool(path) and is_member(node)


def insert(trie: Trie, path: list[str] | tuple[str, ...]) -> None:
    """Add `path` to a trie being built (mutates `trie`)."""
    node = trie
    for pe in path:
        child = node.get(pe)
        if child is None:
            child = node[pe] = {}
        elif not child:  # a leaf member gaining children keeps its membership
            child[SELF] = {}
        node = child
    if node:
        node[SELF] = {}


def paths(trie: Trie, prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """Member paths in upstream's iteration order: this level's members sorted, then each child."""
    keys = sorted((k for k in trie if k != SELF), key=element_order)
    for k in keys:
        if is_member(trie[k]):
            yield prefix + (k,)
    for k in keys:
        child = _children(trie[k])
        if child:
            yield from paths(child, prefix + (k,))


# -- encoding --------------------------------------------------------------------------------------

def encode(trie: Trie) -> Trie:
    """A canonical copy of the set: keys in upstream order, `.` first, leaf members as `{}`."""
    out: Trie = {}
    keys = [k for k in trie if k != SELF]
    if len(keys) > 1:
        keys.sort(key=element_order)
    for k in keys:
        node = trie[k]
        if not node or (len(node) == 1 and SELF in node):
            out[k] = {}
            continue
        enc = encode(node)
        if SELF in node:
            enc = {SELF: {}, **enc}
        out[k] = enc
    return out


def decode(fields_v1: Any) -> Trie:
    """A set from a `fieldsV1` value; raises ValueError when it is not one."""
    if not isinstance(fields_v1, dict):
        raise ValueError("fieldsV1 must be an object")
    _check(fields_v1)
    return fields_v1


def _check(node: dict[str, Any]) -> None:
    stack = [node]
    while stack:
        for k, v in stack.pop().items():
            if type(v) is not dict or (k[1:2] != ":" and k != SELF):
                raise ValueError(f"invalid fieldsV1 entry {k!r}")
            if v:
                stack.append(v)


@functools.lru_cache(maxsize=8192)
def element_order(pe: str) -> tuple[Any, ...]:
    """Sort key giving upstream's PathElement order for a serialized element."""
    kind, body = pe[0], pe[2:]
    if kind == "f":
        return (0, body)
    if kind == "k":
        try:
            fields = json.loads(body)
        except ValueError:
            return (1, ((body, (9, body)),))
        return (1, tuple((name, value_order(fields[name])) for name in sorted(fields)))
    if kind == "v":
        try:
            return (2, value_order(json.loads(body)))
        except ValueError:
            return (2, (9, body))
    try:
        return (3, int(body))
    except ValueError:
        return (3, 0)


def value_order(value: Any) -> tuple[Any, ...]:
    """Upstream's total order of values: numbers, strings, booleans, lists, maps, null."""
    if isinstance(value, bool):
        return (2, value)
    if isinstance(value, int | float):
        return (0, value)
    if isinstance(value, str):
        return (1, value)
    if isinstance(value, list):
        return (3, tuple(value_order(v) for v in value))
    if isinstance(value, dict):
        return (4, tuple((k, value_order(value[k])) for k in sorted(value)))
    return (5,)


# -- display ---------------------------------------------------------------------------------------

def path_string(path: tuple[str, ...] | list[str]) -> str:
    """A path as upstream prints it in conflicts: `.spec.containers[name="c"].image`, `[="x"]`."""
    out = []
    for pe in path:
        kind, body = pe[0], pe[2:]
        if kind == "f":
            out.append("." + body)
        elif kind == "k":
            fields = json.loads(body)
            out.append("[" + ",".join(f"{k}={_display(fields[k])}" for k in sorted(fields)) + "]")
        elif kind == "v":
            out.append(f"[={_display(json.loads(body))}]")
        else:
            out.append(f"[{body}]")
    return "".join(out)


def _display(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ",".join(_display(v) for v in value) + "]"
    if isinstance(value, dict):
        return "".join(f"{k}={_display(value[k])}" for k in value)
    return str(value)
