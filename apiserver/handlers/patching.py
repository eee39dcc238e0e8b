"""PATCH: JSON patch, merge patch, strategic merge patch and server-side apply, as a read-modify-write."""

from __future__ import annotations

import re
from typing import Any

import orjson
from aiohttp import web
from mini_kube.machinery.times import now_rfc3339

from .. import errors
from ..http.limits import check_depth
from ..http.negotiation import decode_body, decode_yaml, plain_json
from ..http.query import go_bool
from ..patch import json_patch, merge_patch, strategic_merge_patch
from ..patch import server_side_apply as ssa
from ..patch.gofmt import go_v
from ..registry.cache import Entry
from ..registry.fieldschema import schema_node
from ..registry.generic import Registry, WriteOptions
from ..resources import ResourceType
from ..schema import messages
from ..schema.yamlload import load_yaml
from . import fieldcheck


def apply_patch_document(res: ResourceType, patch_type: str, current: dict[str, Any], patch: Any) -> dict[str, Any]:
    """Apply a decoded JSON, merge or strategic patch to a copy of the current object (no deeper than bodies
    may be: JSON patch copies can nest an object into itself)."""
    patched = _patched(res, patch_type, current, patch)
    check_depth(touched(res, patch_type, patch, patched) or patched)
    return patched


def touched(res: ResourceType, patch_type: str, patch: Any, patched: dict[str, Any]) -> dict[str, Any] | None:
    """What a merge or strategic patch of a built-in kind can have changed: the patched object's top-level fields
    the patch names (the rest is the stored object, checked when it was written). None: any part may have
    changed (a JSON patch, a `$` directive at the top, a custom resource, whose schema may keep unknown fields)."""
    if (patch_type not in ("merge", "strategic") or res.crd is not None or not isinstance(patch, dict)
            or any(key.startswith("$") for key in patch)):
        return None
    return {key: patched[key] for key in patch if key in patched}


def _patched(res: ResourceType, patch_type: str, current: dict[str, Any], patch: Any) -> dict[str, Any]:
    if patch_type == "json":
        if not isinstance(patch, list):
            raise errors.bad_request("json: cannot unmarshal object into Go value of type jsonpatch.Patch")
        return json_patch(current, patch)
    if not isinstance(patch, dict):
        raise errors.bad_request("json: cannot unmarshal into Go value of type map[string]interface {}")
    if patch_type == "merge":
        return merge_patch(current, patch)

    node = schema_node(res)
    if node is None or res.crd is not None:
        raise errors.StatusError(415, "UnsupportedMediaType",
                                 "strategic merge patch format is not supported")
    return strategic_merge_patch(current, patch, node)


def check_name(obj: dict[str, Any], name: str, namespace: str | None, *, patched: bool = True) -> None:
    """Upstream's checkName on a patched object (or a written one that names itself): the URL's name (400)."""
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        return  # not an ObjectMeta: the type check reports it
    if (patched or meta.get("name")) and meta.get("name", "") != name:
        raise errors.bad_request(f"the name of the object ({meta.get('name', '')}) does not match the name on the "
                                 f"URL ({name})")
    if namespace and meta.get("namespace") and meta["namespace"] != namespace:
        raise errors.bad_request(f"the namespace of the object ({meta['namespace']}) does not match the namespace "
                                 f"on the URL ({namespace})")



def _document_order(problem: str) -> tuple[Any, ...]:
    """Where a problem's field comes in Go's re-encoding (keys sorted, depth first): `a.b[2].c` -> (a, b, 2, c)."""
    path = problem.partition('"')[2].rpartition('"')[0]
    return tuple(int(part) if part.isdigit() else part for part in re.findall(r"[^.\[\]]+", path))


def go_json(obj: Any) -> str:
    """What Go's json.Marshal of a decoded map prints: sorted keys, compact, HTML characters escaped."""
    text = orjson.dumps(obj, option=orjson.OPT_SORT_KEYS).decode()
    for char, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                          ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(char, escaped)
    return text


def check_patched(res: ResourceType, patch_type: str, patch: Any, patched: dict[str, Any], mode: str) -> list[str]:
    """Field validation of a patched object: warnings (Warn), or upstream's 422 on `patch` (Strict).

    A strategic patch quotes the patch as Go's `%+v` and sorts the unknown fields; JSON and merge patches
    quote the patched object's JSON (sorted keys, as Go re-encodes it) and list fields in that order.
    """
    strict = (mode or messages.DEFAULT_MODE) == messages.STRICT
    part = touched(res, patch_type, patch, patched)  # a kubelet's status patch: the status, not the whole Pod
    problems = fieldcheck.check(res, patched if part is None else part, None, None,
                                messages.WARN if strict else mode)
    if part is not None:  # the check drops nulls and unknown fields in place; top-level ones it drops from `part`
        for key in [k for k in patch if k in patched]:
            if key in part:
                patched[key] = part[key]
            else:
                del patched[key]
    problems.sort(key=None if patch_type == "strategic" else _document_order)
    if not strict or not problems:
        return problems
    value = go_v(patch) if patch_type == "strategic" else go_json(patched)
    raise errors.invalid_object("", "", "", [errors.invalid(
        "patch", value, "strict decoding error: " + ", ".join(problems))])


async def apply_patch(registry: Registry, request: web.Request, res: ResourceType, namespace: str | None,
                      name: str, patch_type: str, raw: bytes, opts: WriteOptions
                      ) -> tuple[dict[str, Any] | Entry, bool]:
    """Run one PATCH request; returns (result, created)."""
    validation = request.query.get("fieldValidation", "")
    if patch_type == "apply":
        return await server_side_apply(registry, request, res, namespace, name, raw, opts)
    patch = decode_body(raw, request.headers.get("Content-Type"))

    def mutate(current: dict[str, Any]) -> dict[str, Any]:
        patched = apply_patch_document(res, patch_type, current, patch)
        if not isinstance(patched, dict):
            raise errors.bad_request("the patch did not produce an object")
        check_name(patched, name, namespace)
        opts.warnings[:] = check_patched(res, patch_type, patch, patched, validation)
        return patched

    if registry.find(res, namespace, name) is None:
        raise errors.not_found(res.group_resource, name)
    return await registry.guaranteed_update(res, namespace, name, mutate, opts), False


def apply_duplicates(raw: bytes, mode: str) -> list[str]:
    """Server-side apply's only strict check, made after the merge: repeated keys in the applied YAML.

    Unknown fields never get this far: the typed conversion of the applied object rejects them first.
    """
    if mode == messages.IGNORE or plain_json(raw) is not None:  # JSON without a repeated key
        return []
    try:
        _, duplicates = load_yaml(raw)
    except Exception:  # decoded once already: a loader quirk must not turn into a 500
        return []
    if not duplicates:
        return []
    text = "error converting YAML to JSON: yaml: unmarshal errors:\n  " + "\n  ".join(duplicates)
    if mode == messages.STRICT:
        raise errors.bad_request(f"error strict decoding YAML: {text}")
    return [text]


async def server_side_apply(registry: Registry, request: web.Request, res: ResourceType,
                            namespace: str | None, name: str, raw: bytes, opts: WriteOptions
                            ) -> tuple[dict[str, Any] | Entry, bool]:
    """`application/apply-patch+yaml`: merge the applied configuration and track ownership per manager."""
    if not opts.field_manager:
        raise errors.bad_request("PATCH requests must specify fieldManager when using Apply")
    applied = decode_yaml(raw)
    if not isinstance(applied, dict):
        raise errors.bad_request("apply patch must be an object")
    mode = request.query.get("fieldValidation", "") or messages.DEFAULT_MODE
    if mode not in fieldcheck.MODES:
        fieldcheck.check(res, applied, raw, "application/yaml", mode)  # raises upstream's unsupported-value error
    force = go_bool(request.query.get("force"))
    meta = applied.get("metadata") or {}
    if meta.get("name") and meta["name"] != name:
        raise errors.bad_request(f"the name of the object ({meta['name']}) does not match the name on the URL "
                                 f"({name})")
    node = schema_node(res)
    if registry.find(res, namespace, name) is None:
        created = ssa(None, applied, opts.field_manager, res.api_version, force, node, now_rfc3339())
        opts.warnings[:] = apply_duplicates(raw, mode)
        created.setdefault("metadata", {})["name"] = name
        try:
            return await registry.create(res, namespace, created, opts), True
        except errors.StatusError as exc:
            if exc.reason != "AlreadyExists":
                raise
            # another request created it meanwhile: apply onto that one, as upstream retries the create as an update

    def mutate(current: dict[str, Any]) -> dict[str, Any]:
        merged = ssa(current, applied, opts.field_manager, res.api_version, force, node, now_rfc3339(),
                     subresource=opts.subresource)
        opts.warnings[:] = apply_duplicates(raw, mode)
        return merged

    return await registry.guaranteed_update(res, namespace, name, mutate, opts), False
