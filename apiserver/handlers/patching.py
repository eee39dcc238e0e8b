"""PATCH: JSON patch, merge patch, strategic merge patch and server-side apply, as a read-modify-write."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aiohttp import web

from .. import errors
from ..http.negotiation import decode_body, decode_yaml
from ..patch import merge_patch, strategic_merge_patch
from ..registry.cache import Entry
from ..registry.generic import WriteOptions
from ..resources import ResourceType
from ..schema.definitions import definition_name
from . import fieldcheck

if TYPE_CHECKING:
    from .resource import ResourceHandler


def schema_node(res: ResourceType) -> Any:
    """The patch library's schema accessor for this resource (None for schema-less custom resources)."""
    from ..patch.schema_walk import SchemaNode

    if res.crd is not None:
        return SchemaNode.for_structural(res.schema) if res.schema else None
    name = definition_name(res.group, res.version, res.kind)
    return SchemaNode.for_builtin(name) if name else None


def apply_patch_document(res: ResourceType, patch_type: str, current: dict[str, Any], patch: Any) -> dict[str, Any]:
    """Apply a decoded JSON, merge or strategic patch to a copy of the current object."""
    if patch_type == "json":
        from ..patch import json_patch

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


async def apply_patch(handler: ResourceHandler, request: web.Request, res: ResourceType, namespace: str | None,
                      name: str, patch_type: str, raw: bytes, opts: WriteOptions
                      ) -> tuple[dict[str, Any] | Entry, bool]:
    """Run one PATCH request; returns (result, created)."""
    registry = handler.registry
    validation = request.query.get("fieldValidation", "")
    if patch_type == "apply":
        return await server_side_apply(handler, request, res, namespace, name, raw, opts)
    patch = decode_body(raw, request.headers.get("Content-Type"))

    def mutate(current: dict[str, Any]) -> dict[str, Any]:
        patched = apply_patch_document(res, patch_type, current, patch)
        if not isinstance(patched, dict):
            raise errors.bad_request("the patch did not produce an object")
        opts.warnings[:] = fieldcheck.check(res, patched, None, None, validation)
        return patched

    if registry.find(res, namespace, name) is None:
        raise errors.not_found(res.group_resource, name)
    return await registry.guaranteed_update(res, namespace, name, mutate, opts), False


async def server_side_apply(handler: ResourceHandler, request: web.Request, res: ResourceType,
                            namespace: str | None, name: str, raw: bytes, opts: WriteOptions
                            ) -> tuple[dict[str, Any] | Entry, bool]:
    """`application/apply-patch+yaml`: merge the applied configuration and track ownership per manager."""
    from ..patch import server_side_apply as ssa

    registry = handler.registry
    if not opts.field_manager:
        raise errors.bad_request("PATCH requests must specify fieldManager when using Apply")
    applied = decode_yaml(raw)
    if not isinstance(applied, dict):
        raise errors.bad_request("apply patch must be an object")
    opts.warnings[:] = fieldcheck.check(res, applied, raw, "application/yaml",
                                        request.query.get("fieldValidation", ""))
    force = request.query.get("force") in ("true", "1")
    meta = applied.get("metadata") or {}
    if meta.get("name") and meta["name"] != name:
        raise errors.bad_request(f"the name of the object ({meta['name']}) does not match the name on the URL "
                                 f"({name})")
    node = schema_node(res)
    from ..registry.generic import now_rfc3339

    if registry.find(res, namespace, name) is None:
        created = ssa(None, applied, opts.field_manager, res.api_version, force, node, now_rfc3339())
        created.setdefault("metadata", {})["name"] = name
        return await registry.create(res, namespace, created, opts), True

    def mutate(current: dict[str, Any]) -> dict[str, Any]:
        return ssa(current, applied, opts.field_manager, res.api_version, force, node, now_rfc3339())

    return await registry.guaranteed_update(res, namespace, name, mutate, opts), False
