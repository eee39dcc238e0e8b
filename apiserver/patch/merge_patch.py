"""RFC 7386 JSON merge patch, as the apiserver applies it (evanphx/json-patch's MergePatch).

Hand-written because the semantics must match upstream's byte for byte, which no library does: a value
that lands where nothing (or null) was has its null members pruned, and that pruning also reaches objects
nested inside arrays of that value; an array or scalar patch replaces the target as it is. A patch that is
null, a scalar or otherwise not an object is a 400 "Invalid JSON Patch" (an array patch replaces the whole
document, which the caller's decoding then rejects).
"""

from __future__ import annotations

from typing import Any

from mini_kube.apiserver.patch.errors import bad_request

BAD_PATCH = "Invalid JSON Patch"


def merge_patch(doc: dict[str, Any], patch: Any) -> Any:
    """Apply a merge patch to `doc` without modifying either; returns the new document."""
    if isinstance(patch, list):
        return [_pruned(v) if v is not None else None for v in patch]
    if not isinstance(patch, dict):
        raise bad_request(BAD_PATCH)
    return _merge_docs(doc, patch)


def _merge_docs(doc: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    out = dict(doc)
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
            continue
        current = out.get(key)
        if current is None:
            out[key] = _pruned(value)
        elif isinstance(current, dict) and isinstance(value, dict):
            out[key] = _merge_docs(current, value)
        elif isinstance(current, dict):
            out[key] = value
        else:
            out[key] = _pruned(value)
    return out


def _pruned(value: Any) -> Any:
    """A copy of `value` without null object members, at any depth (arrays keep their null items)."""
    if isinstance(value, dict):
        return {k: _pruned(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_pruned(v) for v in value]
    return value


def create_merge_patch(original: Any, modified: Any) -> Any:
    """The merge patch that turns `original` into `modified` (nulls for removed keys, arrays whole)."""
    if not isinstance(original, dict) or not isinstance(modified, dict):
        return modified
    patch: dict[str, Any] = {}
    for key, value in modified.items():
        if key not in original:
            patch[key] = value
        elif original[key] != value or type(original[key]) is not type(value):
            if isinstance(original[key], dict) and isinstance(value, dict):
                patch[key] = create_merge_patch(original[key], value)
            else:
                patch[key] = value
    for key in original:
        if key not in modified:
            patch[key] = None
    return patch
