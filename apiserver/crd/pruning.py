"""Pruning of unknown fields, as the apiserver does when it decodes a custom resource.

Fields the schema does not specify are dropped, except under `x-kubernetes-preserve-unknown-fields`.
At the root and in embedded resources `apiVersion`, `kind` and `metadata` are kept; `metadata` is cut
down to the fields of ObjectMeta (with empty ones omitted, as a round trip through ObjectMeta does).
Non-nullable nulls without a default are dropped too. The paths of dropped fields are returned, in the
order the apiserver lists them in a strict decoding error.
"""

from __future__ import annotations

from typing import Any

from mini_kube.apiserver.crd.structural import MISSING, Node

META_FIELDS = frozenset({"apiVersion", "kind", "metadata"})
OBJECT_META_FIELDS = frozenset({
    "name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation",
    "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations",
    "ownerReferences", "finalizers", "managedFields",
})
OWNER_REFERENCE_FIELDS = frozenset({"apiVersion", "kind", "name", "uid", "controller", "blockOwnerDeletion"})
MANAGED_FIELDS_ENTRY_FIELDS = frozenset({
    "manager", "operation", "apiVersion", "time", "fieldsType", "fieldsV1", "subresource"})
_KEEP_EMPTY = frozenset({"deletionGracePeriodSeconds"})  # pointer fields: zero is kept, null is not


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def coerce_object_meta(meta: dict[str, Any], prefix: str, unknown: list[str]) -> None:
    """Drop what ObjectMeta does not know and the empty fields it would omit; record unknown paths."""
    for key in list(meta):
        value = meta[key]
        if key not in OBJECT_META_FIELDS:
            unknown.append(f"{prefix}.{key}")
            del meta[key]
        elif value is None or (key not in _KEEP_EMPTY and value in ("", 0, {}, [])):
            del meta[key]
        elif key == "ownerReferences" and isinstance(value, list):
            _coerce_items(value, OWNER_REFERENCE_FIELDS, f"{prefix}.{key}", unknown)
        elif key == "managedFields" and isinstance(value, list):
            _coerce_items(value, MANAGED_FIELDS_ENTRY_FIELDS, f"{prefix}.{key}", unknown)


def _coerce_items(items: list[Any], known: frozenset[str], prefix: str, unknown: list[str]) -> None:
    for i, item in enumerate(items):
        if isinstance(item, dict):
            for key in [k for k in item if k not in known]:
                unknown.append(f"{prefix}[{i}].{key}")
                del item[key]


class Pruner:
    """Prunes objects of one version; `prune(obj)` returns the dropped paths."""

    def __init__(self, node: Node) -> None:
        self.node = node

    def prune(self, obj: dict[str, Any]) -> list[str]:
        """Prune `obj` in place (the root is a resource: apiVersion/kind/metadata are kept)."""
        unknown: list[str] = []
        meta = obj.get("metadata")
        if isinstance(meta, dict):
            coerce_object_meta(meta, "metadata", unknown)
        pruned: list[str] = []
        _prune(obj, self.node, "", pruned, True)
        pruned.sort()
        embedded: list[str] = []
        if self.node.has_embedded:
            _coerce_embedded(obj, self.node, "", embedded, True)
            embedded.sort()
        return unknown + pruned + embedded


def _drop_null(value: Any, schema: Node | None) -> bool:
    return value is None and schema is not None and not schema.nullable and schema.default is MISSING


def _prune(x: Any, s: Node | None, path: str, out: list[str], resource: bool) -> None:
    if s is not None and s.preserve_unknown:
        _skip_prune(x, s, path, out, resource)
        return
    if isinstance(x, dict):
        if s is None:
            for k in list(x):
                out.append(_join(path, k))
            x.clear()
            return
        embedded = resource or s.embedded
        props = s.properties
        additional = s.additional
        for k in list(x):
            v = x[k]
            if embedded and k in META_FIELDS:
                continue
            prop = props.get(k)
            if prop is not None:
                if _drop_null(v, prop):
                    del x[k]
                elif isinstance(v, dict | list):
                    _prune(v, prop, _join(path, k), out, False)
            elif s.has_additional:  # a schema, or true/false: keys stay, their content is pruned
                if _drop_null(v, additional):
                    del x[k]
                elif isinstance(v, dict | list):
                    _prune(v, additional, _join(path, k), out, False)
            else:
                if k not in META_FIELDS or path:
                    out.append(_join(path, k))
                del x[k]
    elif isinstance(x, list):
        items = s.items if s is not None else None
        for i, v in enumerate(x):
            if isinstance(v, dict | list):
                _prune(v, items, f"{path}[{i}]", out, False)


def _skip_prune(x: Any, s: Node, path: str, out: list[str], resource: bool) -> None:
    if isinstance(x, dict):
        embedded = resource or s.embedded
        for k in list(x):
            v = x[k]
            if embedded and k in META_FIELDS:
                continue
            prop = s.properties.get(k)
            if prop is None and not s.has_additional:
                continue
            sub = prop if prop is not None else s.additional
            if _drop_null(v, sub):
                del x[k]
            elif isinstance(v, dict | list):
                _prune(v, sub, _join(path, k), out, False)
    elif isinstance(x, list) and s.items is not None:
        for i, v in enumerate(x):
            if isinstance(v, dict | list):
                _skip_prune(v, s.items, f"{path}[{i}]", out, False)


def _coerce_embedded(x: Any, s: Node, path: str, out: list[str], root: bool) -> None:
    """Cut the metadata of embedded resources (not the root's: done already) down to ObjectMeta."""
    if isinstance(x, dict):
        if s.embedded and not root and isinstance(x.get("metadata"), dict):
            coerce_object_meta(x["metadata"], _join(path, "metadata"), out)
        for k, v in x.items():
            prop = s.properties.get(k)
            if prop is not None and prop.has_embedded:
                _coerce_embedded(v, prop, _join(path, k), out, False)
            elif prop is None and s.additional is not None and s.additional.has_embedded:
                _coerce_embedded(v, s.additional, f"{path}[{k}]", out, False)
    elif isinstance(x, list) and s.items is not None and s.items.has_embedded:
        for i, v in enumerate(x):
            _coerce_embedded(v, s.items, f"{path}[{i}]", out, False)


def prune_value(value: Any, node: Node, resource: bool) -> list[str]:
    """Prune any JSON value in place against `node` (`resource`: keep apiVersion/kind/metadata at its root)."""
    out: list[str] = []
    _prune(value, node, "", out, resource)
    return sorted(out)
