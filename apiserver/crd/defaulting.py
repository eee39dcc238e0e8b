"""Defaulting from `default` in a structural schema, as the apiserver applies it after decoding.

A missing field (or a null one that is not nullable) gets a copy of its default; defaults are applied
top-down, so a defaulted object gets the defaults of its own properties too. Array items and
additionalProperties values are defaulted the same way.
"""

from __future__ import annotations

from typing import Any

from mini_kube.apiserver.crd.structural import MISSING, Node


def deep_copy(value: Any) -> Any:
    """Copy a JSON value (faster than copy.deepcopy for plain dicts and lists)."""
    if isinstance(value, dict):
        return {k: deep_copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [deep_copy(v) for v in value]
    return value


def _null_to_default(value: Any, schema: Node | None) -> bool:
    return value is None and schema is not None and not schema.nullable


def apply_defaults(x: Any, s: Node | None) -> None:
    """Fill in defaults in `x` (in place) following schema `s`."""
    if s is None or not s.has_defaults:
        return
    if isinstance(x, dict):
        props = s.properties
        for k, prop in props.items():
            if prop.default is not MISSING and (k not in x or _null_to_default(x[k], prop)):
                x[k] = deep_copy(prop.default)
        additional = s.additional
        for k, v in x.items():
            child = props.get(k)
            if child is not None:
                if child.has_defaults and isinstance(v, dict | list):
                    apply_defaults(v, child)
            elif additional is not None and additional.has_defaults:
                if _null_to_default(v, additional) and additional.default is not MISSING:
                    x[k] = v = deep_copy(additional.default)
                apply_defaults(v, additional)
    elif isinstance(x, list):
        items = s.items
        if items is None or not items.has_defaults:
            return
        for i, v in enumerate(x):
            if _null_to_default(v, items) and items.default is not MISSING:
                x[i] = v = deep_copy(items.default)
            apply_defaults(v, items)
