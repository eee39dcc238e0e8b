"""Subresources (`status`, `scale`, namespace `finalize`, ...) and request-only kinds (reviews, tokens): the
requests are decoded here and answered by the registry's REST objects (`registry/rest/`)."""

from __future__ import annotations

from typing import Any

import orjson
from aiohttp import web
from mini_kube.machinery import times

from .. import errors
from ..http import responses
from ..http.negotiation import PATCH_TYPES, PROTOBUF, Target, decode_body, media_type
from ..http.tables import build_table
from ..registry.generic import WriteOptions
from ..registry.rest import status as status_rest
from ..registry.rest.scale import ScaleREST
from ..registry.rest.status import StatusREST
from ..requestinfo import RequestInfo
from ..resources import ResourceType
from ..schema import messages
from ..schema.fields import type_errors
from . import patching
from .object_io import ObjectIO
from .requests import read_body, warning_headers, write_options
from .routes import SubresourceTable

TABLE_SUBRESOURCES = ("status", "scale")
"""The subresources whose REST storage converts to a Table (upstream's StatusREST and ScaleREST delegate to
the kind's); the others (finalize, approval, log, eviction, token, ...) answer `as=Table` with 406."""
PROXY_ONLY_VERBS = ("options",)
"""Methods a proxy subresource connects beyond those discovery lists for it: upstream's proxyMethods take OPTIONS
too (its request verb stays `options`)."""


async def handle(handler: ObjectIO, table: SubresourceTable, request: web.Request, info: RequestInfo,
                 res: ResourceType, user: Any) -> web.StreamResponse:
    sub = res.subresource(info.subresource)
    if sub is None or info.verb not in (*sub.verbs, *(PROXY_ONLY_VERBS if sub.name == "proxy" else ())):
        raise errors.not_found(res.group_resource, info.name) if sub is None else errors.method_not_allowed()
    namespace = info.namespace if res.namespaced else None
    target = handler.target(request, tables=sub.name in TABLE_SUBRESOURCES)
    if sub.name == "scale":
        return await _scale(handler, request, info, res, namespace, user, target)
    if sub.name in status_rest.SUBRESOURCES:
        return await _status_like(handler, request, info, res, namespace, user, target)
    extra = table.subresources.get((res.group, res.plural, sub.name))
    if extra is None:
        raise errors.method_not_allowed()
    return await extra(request, info, res, user, target)


async def _status_like(handler: ObjectIO, request: web.Request, info: RequestInfo, res: ResourceType,
                       namespace: str | None, user: Any, target: Target) -> web.Response:
    rest = StatusREST(handler.registry)
    if info.verb == "get":
        return await handler.respond_entry(res, rest.get(res, namespace, info.name), target)
    patch_type = PATCH_TYPES.get(media_type(request.headers.get("Content-Type")))
    opts = write_options(request, info, user, "Apply" if info.verb == "patch" and patch_type == "apply" else "Update")
    if info.verb == "update":
        obj, warnings = await handler.decode_object(request, res)
        opts.warnings.extend(warnings)
        result = await rest.update(res, namespace, info.name, obj, opts)
        return await handler.respond_entry(res, result, target, headers=warning_headers(opts.warnings))
    if patch_type is None:
        raise errors.unsupported_media_type(request.headers.get("Content-Type", ""))
    raw = await read_body(request)
    result, _ = await patching.apply_patch(handler.registry, request, res, namespace, info.name, patch_type, raw, opts)
    return await handler.respond_entry(res, result, target, headers=warning_headers(opts.warnings))


async def _scale(handler: ObjectIO, request: web.Request, info: RequestInfo, res: ResourceType,
                 namespace: str | None, user: Any, target: Target) -> web.Response:
    rest = ScaleREST(handler.registry)
    if info.verb == "get":
        return _scale_response(rest.get(res, namespace, info.name), target)
    rest.require(res, namespace, info.name)  # a missing object is a 404 before the body is read
    opts = write_options(request, info, user)
    raw = await read_body(request)
    if info.verb == "update":
        scale = decode_body(raw, request.headers.get("Content-Type"))
        if not isinstance(scale, dict):
            raise errors.bad_request("Scale must be an object")
    else:
        patch_type = PATCH_TYPES.get(media_type(request.headers.get("Content-Type")))
        if patch_type is None or patch_type == "apply":
            raise errors.unsupported_media_type(request.headers.get("Content-Type", ""))
        patch = decode_body(raw, request.headers.get("Content-Type"))
        scale = patching.apply_patch_document(SCALE, patch_type, rest.read(res, namespace, info.name), patch)
        if not isinstance(scale, dict):
            raise errors.bad_request("the patch did not produce an object")
    _check_scale(scale, info.name, namespace, info.verb != "update")
    return _scale_response(await rest.update(res, namespace, info.name, scale, opts), target)


SCALE = ResourceType("autoscaling", "v1", "Scale", "scale", True, stored=False)


def _check_scale(scale: dict[str, Any], name: str, namespace: str | None, patched: bool) -> None:
    """The checks upstream's decoder and handler make of a Scale body: Go types (`Scale in version "v1" cannot
    be handled as a Scale: ...`), kind and apiVersion, name and namespace."""
    problem = type_errors("io.k8s.api.autoscaling.v1.Scale", scale)
    if problem:
        raise messages.decode_error("Scale", "v1", problem)
    kind, api_version = scale.get("kind"), scale.get("apiVersion")
    if kind and kind != "Scale":
        raise errors.bad_request(f"the kind in the data ({kind}) does not match the expected kind (Scale)")
    if api_version and api_version != "autoscaling/v1":
        raise errors.bad_request(f"the API version in the data ({api_version}) does not match the expected "
                                 "API version (autoscaling/v1)")
    patching.check_name(scale, name, namespace, patched=patched)


def _scale_response(scale: dict[str, Any], target: Target) -> web.Response:
    """A Scale, or its Table (`kubectl get --subresource=scale`: NAME, DESIRED, AVAILABLE, AGE)."""
    if target.as_kind == "Table":
        meta = {"resourceVersion": scale["metadata"].get("resourceVersion", "")}
        return responses.encode_dict(build_table(SCALE, [scale], times.now(), "Metadata", meta,
                                                 target.version or "v1"), target)
    if target.as_kind == "PartialObjectMetadata":
        return responses.encode_dict(responses.partial_metadata(scale, target.version), target)
    if target.as_kind:
        raise errors.not_acceptable(PROTOBUF)
    return responses.encode_dict(scale, target)


async def create_virtual(table: SubresourceTable, info: RequestInfo, res: ResourceType, obj: dict[str, Any],
                         user: Any, opts: WriteOptions, target: Target) -> web.Response:
    """Request-only kinds (access reviews, SelfSubjectReview, TokenReview, Binding): computed by their storage,
    never stored."""
    rest = table.kinds.get((res.group, res.kind))
    if rest is None:
        raise errors.method_not_allowed()
    result = await rest.create(info.namespace, obj, user, opts)
    body = orjson.loads(orjson.dumps(result))
    return responses.encode_dict(body, target, 201)
