"""RFC 6902 JSON patch, applied with the `jsonpatch` library the way the apiserver's JSON patch behaves.

Upstream applies the patch with evanphx/json-patch v4; a few of its choices differ from the RFC and are
kept here because clients rely on them: `replace` of a missing object key adds it, negative array indices
count from the end, `add`/`replace` without a value write null, and `test` of a missing key against null
passes. Every failure to apply is the apiserver's generic 422; a body that is not a list of operation
objects is a 400 with Go's decoding message; more than 10,000 operations is a 413.
"""

from __future__ import annotations

from typing import Any

import jsonpatch
import jsonpointer
import orjson
from mini_kube.apiserver.gofmt import json_kind
from mini_kube.apiserver.http.limits import bounded_size
from mini_kube.apiserver.patch.errors import PatchError, bad_request, too_many_operations, unprocessable

MAX_OPERATIONS = 10000
COPY_LIMIT = 3 * 1024 * 1024
"""What `copy` operations may add up to, as upstream bounds them (its request size limit): 22 copies of a
doubling value must not cost minutes and gigabytes."""


def _copy_size(doc: Any, pointer: str, budget: int) -> int:
    try:
        value = jsonpointer.resolve_pointer(doc, pointer)
    except jsonpointer.JsonPointerException:
        return 0  # the copy itself fails as upstream's does
    return bounded_size(value, budget)


def json_patch(doc: dict[str, Any], patch_ops: Any) -> dict[str, Any]:
    """Apply RFC 6902 operations to a copy of `doc`; raises PatchError as the apiserver answers."""
    ops = _decode(patch_ops)
    if len(ops) > MAX_OPERATIONS:
        raise too_many_operations(len(ops), MAX_OPERATIONS)
    result: Any = orjson.loads(orjson.dumps(doc))
    copied = 0
    for op in ops:
        if op.get("op") == "copy" and isinstance(op.get("from"), str):
            copied += _copy_size(result, op["from"], COPY_LIMIT - copied)
            if copied > COPY_LIMIT:
                raise PatchError(413, "RequestEntityTooLarge", "Request entity too large: Unable to complete the "
                                 f"copy, the accumulated size increase of copy exceeds the limit {COPY_LIMIT}")
        try:
            result = _apply_one(result, op)
        except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException, KeyError, IndexError,
                TypeError, ValueError, AttributeError) as err:
            error = unprocessable()
            error.detail = str(err)  # type: ignore[attr-defined]
            raise error from err
    if not isinstance(result, dict):
        raise unprocessable()
    return result


def _decode(patch_ops: Any) -> list[dict[str, Any]]:
    if not isinstance(patch_ops, list):
        raise bad_request(f"json: cannot unmarshal {json_kind(patch_ops)} into Go value of type jsonpatch.Patch")
    for op in patch_ops:
        if not isinstance(op, dict):
            raise bad_request(f"json: cannot unmarshal {json_kind(op)} into Go value of type jsonpatch.Operation")
    return patch_ops


def _apply_one(doc: Any, op: dict[str, Any]) -> Any:
    kind = op.get("op")
    op = dict(op)
    if kind in ("add", "replace") and "value" not in op:
        op["value"] = None
    for field in ("path", "from"):
        if isinstance(op.get(field), str):
            op[field] = _normalize_indices(doc, op[field], for_add=(kind in ("add", "move", "copy")
                                                                    and field == "path"))
    if kind == "replace" and _missing_object_key(doc, op.get("path")):
        op["op"] = "add"
    if kind == "test" and op.get("value") is None and _missing_object_key(doc, op.get("path")):
        return doc
    return jsonpatch.JsonPatch([op]).apply(doc, in_place=True)


def _normalize_indices(doc: Any, path: str, for_add: bool) -> str:
    """Rewrite negative array indices to their positive equivalent (evanphx supports them)."""
    if "/-" not in path:
        return path
    parts = path.split("/")
    node = doc
    for i in range(1, len(parts)):
        token = parts[i]
        if isinstance(node, list) and token.startswith("-") and token[1:].isdigit():
            size = len(node) + (1 if for_add and i == len(parts) - 1 else 0)
            idx = int(token)
            if idx >= -size:
                parts[i] = str(idx + size)
        node = _step(node, parts[i])
        if node is None:
            break
    return "/".join(parts)


def _step(node: Any, token: str) -> Any:
    token = token.replace("~1", "/").replace("~0", "~")
    if isinstance(node, dict):
        return node.get(token)
    if isinstance(node, list) and token.isdigit() and int(token) < len(node):
        return node[int(token)]
    return None


def _missing_object_key(doc: Any, path: Any) -> bool:
    if not isinstance(path, str) or not path.startswith("/"):
        return False
    parent_path, _, last = path.rpartition("/")
    try:
        parent = jsonpointer.resolve_pointer(doc, parent_path)
    except jsonpointer.JsonPointerException:
        return False
    return isinstance(parent, dict) and last.replace("~1", "/").replace("~0", "~") not in parent
