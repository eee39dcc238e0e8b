"""`x-kubernetes-list-type` set and map lists: uniqueness checks and old/new item correlation."""

from __future__ import annotations

from typing import Any

import orjson
from mini_kube.apiserver.crd import gofmt
from mini_kube.apiserver.crd.structural import Node
from mini_kube.apiserver.errors import FieldError

_UNSPECIFIED = ("<unspecified>",)


def _scalar_key(value: Any) -> Any:
    """A hashable identity for a JSON value, keeping Go's distinction of bool/int/float."""
    if isinstance(value, dict | list):
        return ("json", orjson.dumps(value, option=orjson.OPT_SORT_KEYS))
    return (type(value).__name__, value)


def map_key(node: Node, item: Any) -> tuple[Any, ...]:
    """The key tuple of one item of a map list (absent keys are distinct from null)."""
    if not isinstance(item, dict):
        return tuple(_UNSPECIFIED for _ in node.list_map_keys)
    return tuple(_scalar_key(item[k]) if k in item else _UNSPECIFIED for k in node.list_map_keys)


def map_list_index(node: Node, items: list[Any]) -> dict[tuple[Any, ...], Any]:
    """Index the items of a map list by key (the first item wins)."""
    index: dict[tuple[Any, ...], Any] = {}
    for item in items:
        index.setdefault(map_key(node, item), item)
    return index


def validate(node: Node, obj: Any, path: str = "") -> list[FieldError]:
    """Duplicate items of set lists and duplicate keys of map lists, anywhere in `obj`."""
    errs: list[FieldError] = []
    if node.has_list_checks:
        _walk(node, obj, path, errs)
    return errs


def _child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _walk(node: Node, obj: Any, path: str, errs: list[FieldError]) -> None:
    if isinstance(obj, dict):
        if node.additional is not None and node.additional.has_list_checks:
            for k, v in obj.items():
                _walk(node.additional, v, f"{path}[{k}]", errs)
        for k, v in obj.items():
            sub = node.properties.get(k)
            if sub is not None and sub.has_list_checks:
                _walk(sub, v, _child(path, k), errs)
    elif isinstance(obj, list):
        if node.list_type == "set":
            for i in _non_unique([_scalar_key(x) for x in obj]):
                errs.append(gofmt.duplicate(f"{path}[{i}]", obj[i]))
        elif node.list_type == "map":
            errs.extend(_validate_map(node, obj, path))
        if node.items is not None and node.items.has_list_checks:
            for i, item in enumerate(obj):
                _walk(node.items, item, f"{path}[{i}]", errs)


def _non_unique(keys: list[Any]) -> list[int]:
    """Indices of the second appearance of each repeated key."""
    seen: dict[Any, int] = {}
    result = []
    for i, key in enumerate(keys):
        count = seen.get(key, 0)
        if count == 1:
            result.append(i)
        seen[key] = count + 1
    return result


def _validate_map(node: Node, obj: list[Any], path: str) -> list[FieldError]:
    for i, item in enumerate(obj):
        if item is not None and not isinstance(item, dict):
            return [gofmt.invalid(f"{path}[{i}]", item, "must be an object for an array of list-type map")]
    errs = []
    keys = [map_key(node, item) for item in obj]
    for i in _non_unique(keys):
        item = obj[i] if isinstance(obj[i], dict) else {}
        errs.append(gofmt.duplicate(f"{path}[{i}]", {k: item[k] for k in node.list_map_keys if k in item}))
    return errs
