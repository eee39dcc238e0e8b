"""Structural merge and removal of objects, as structured-merge-diff does them for server-side apply.

`merge(live, config)` overlays an applied configuration on the live object: granular maps merge key by
key, list-maps and sets merge item by item (keeping upstream's interleaving of live-only items), atomic
values are replaced. `remove_items(obj, set)` drops the fields of a set (a whole subtree when the set
holds its path). Inputs are never modified; results share unchanged subtrees with the inputs.
"""

from __future__ import annotations

from typing import Any

from mini_kube.apiserver.patch.fieldpath import SELF, Trie, is_member
from mini_kube.apiserver.patch.fieldset import MISSING, element_key, is_empty_value, resolved, shape
from mini_kube.apiserver.patch.schema_walk import SchemaNode, deduced


def merge(lhs: Any, rhs: Any, node: SchemaNode | None) -> Any:
    """The live value `lhs` with the applied value `rhs` merged in (MISSING stands for absent)."""
    if rhs is MISSING:
        return lhs
    if lhs is MISSING:
        return rhs
    l_how, r_how = shape(node, lhs), shape(node, rhs)
    if is_empty_value(lhs) and is_empty_value(rhs):
        return rhs
    if r_how == "empty" and l_how in ("map", "listmap", "set"):
        return lhs  # upstream merges a null map or list with nothing: the live value stays
    how = r_how if r_how == l_how or l_how == "empty" else "leaf"
    if how == "leaf":
        return rhs
    if how == "map":
        lmap = lhs if isinstance(lhs, dict) else {}
        out = dict(lmap)
        for key, rval in rhs.items():
            sub = node.child(key)[0] if node is not None else None
            out[key] = merge(lmap.get(key, MISSING), rval, sub)
        return out
    return _merge_list(lhs if isinstance(lhs, list) else [], rhs, resolved(node), how)


def _index(values: list[Any], node: SchemaNode, how: str, allow_duplicates: bool
           ) -> tuple[list[str], dict[str, Any]]:
    pes: list[str] = []
    observed: dict[str, Any] = {}
    for item in values:
        pe = element_key(node, how, item)
        if pe in observed:
            if not allow_duplicates:
                raise ValueError(f"duplicate entries for key {pe}")
            observed[pe] = None  # duplicated live items are not merged with the applied one
        else:
            observed[pe] = item
        pes.append(pe)
    return pes, observed


def _merge_list(lhs: list[Any], rhs: list[Any], node: SchemaNode, how: str) -> list[Any]:
    items = node.items() or deduced()
    r_pes, r_obs = _index(rhs, node, how, False)
    l_pes, l_obs = _index(lhs, node, how, True)
    shared = [pe for pe in r_pes if pe in l_obs]
    shared.reverse()
    next_shared = shared.pop() if shared else None
    merged_rhs: set[str] = set()
    out: list[Any] = []
    li = ri = 0
    l_len, r_len = len(l_pes), len(r_pes)
    while li < l_len or ri < r_len:
        if li < l_len and ri < r_len:
            pe = l_pes[li]
            if pe == r_pes[ri]:
                merged_rhs.add(pe)
                out.append(merge(l_obs[pe], r_obs[pe], items))
                li += 1
                ri += 1
                next_shared = shared.pop() if shared else None
                continue
            if pe in r_obs and next_shared is not None and next_shared != pe:
                li += 1
                continue
        if li < l_len:
            pe = l_pes[li]
            if pe not in r_obs:
                out.append(lhs[li])
                li += 1
                continue
            if pe in merged_rhs:
                li += 1
        if ri < r_len:
            pe = r_pes[ri]
            merged_rhs.add(pe)
            out.append(merge(l_obs.get(pe, MISSING), r_obs[pe], items))
            ri += 1
            if next_shared is not None and next_shared == pe:
                next_shared = shared.pop() if shared else None
    return out


def remove_items(value: Any, trie: Trie, node: SchemaNode | None) -> Any:
    """`value` without the fields in `trie`; MISSING when nothing is left of a map or list."""
    if not trie:
        return value
    how = shape(node, value)
    if how == "map":
        out = {}
        for key, child in value.items():
            pe = "f:" + key
            sub = trie.get(pe)
            if sub is None:
                out[key] = child
                continue
            if is_member(sub):
                continue
            sub_node = node.child(key)[0] if node is not None else None
            kept = remove_items(child, sub, sub_node)
            if kept is not MISSING:
                out[key] = kept
        return out if out else MISSING
    if how in ("listmap", "set"):
        node = resolved(node)
        items = node.items() or deduced()
        kept_items = []
        for item in value:
            try:
                pe = element_key(node, how, item)
            except ValueError:
                kept_items.append(item)
                continue
            sub = trie.get(pe)
            if sub is None:
                kept_items.append(item)
            elif not is_member(sub):
                kept = remove_items(item, {k: v for k, v in sub.items() if k != SELF}, items)
                kept_items.append(kept if kept is not MISSING else {})
        return kept_items if kept_items else MISSING
    return value
