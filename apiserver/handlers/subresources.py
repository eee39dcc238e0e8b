"""Subresources (`status`, `scale`, namespace `finalize`) and request-only kinds (reviews, tokens)."""

from __future__ import annotations

from typing import Any

import orjson
from aiohttp import web

from .. import errors
from ..crd.serving import served
from ..crd.strategy import apply_scale, scale_of
from ..http import responses
from ..http.negotiation import PATCH_TYPES, Target, decode_body, media_type
from ..http.tables import build_table
from ..registry.cache import Entry
from ..requestinfo import RequestInfo
from ..resources import ResourceType
from ..schema import messages
from ..schema.fields import type_errors
from . import patching
from .object_io import ObjectIO
from .requests import read_body, warning_headers, write_options
from .routes import SubresourceTable


def selector_string(selector: dict[str, Any] | None) -> str:
    """A metav1.LabelSelector as the string form Scale.status.selector carries."""
    if not selector:
        return ""
    parts = [f"{k}={v}" for k, v in sorted((selector.get("matchLabels") or {}).items())]
    for expr in selector.get("matchExpressions") or ():
        op, key, values = expr.get("operator"), expr.get("key"), sorted(expr.get("values") or ())
        if op == "In":
            parts.append(f"{key} in ({','.join(values)})")
        elif op == "NotIn":
            parts.append(f"{key} notin ({','.join(values)})")
        elif op == "Exists":
            parts.append(key)
        elif op == "DoesNotExist":
            parts.append(f"!{key}")
    return ",".join(sorted(parts))


def _path_get(obj: dict[str, Any], path: str) -> Any:
    value: Any = obj
    for part in path.strip(".").split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


def _path_set(obj: dict[str, Any], path: str, value: Any) -> None:
    parts = path.strip(".").split(".")
    for part in parts[:-1]:
        obj = obj.setdefault(part, {})
    obj[parts[-1]] = value


def scale_paths(res: ResourceType) -> tuple[str, str, str]:
    """(spec replicas path, status replicas path, label selector path) of a scalable resource."""
    scale = res.extra.get("scale")
    if scale:
        return (scale.get("specReplicasPath", ".spec.replicas"), scale.get("statusReplicasPath", ".status.replicas"),
                scale.get("labelSelectorPath", ""))
    return ".spec.replicas", ".status.replicas", ".spec.selector"


def to_scale(res: ResourceType, obj: dict[str, Any]) -> dict[str, Any]:
    if res.crd is not None:
        return scale_of(served(res, obj), res.extra.get("scale") or {})
    spec_path, status_path, selector_path = scale_paths(res)
    meta = obj["metadata"]
    selector = _path_get(obj, selector_path) if selector_path else None
    status: dict[str, Any] = {"replicas": _path_get(obj, status_path) or 0}
    if isinstance(selector, dict):
        status["selector"] = selector_string(selector)
    elif isinstance(selector, str) and selector:
        status["selector"] = selector
    return {"kind": "Scale", "apiVersion": "autoscaling/v1",
            "metadata": {k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
                         if k in meta},
            "spec": {"replicas": _path_get(obj, spec_path) or 0}, "status": status}


async def handle(handler: ObjectIO, table: SubresourceTable, request: web.Request, info: RequestInfo,
                 res: ResourceType, user: Any) -> web.StreamResponse:
    sub = res.subresource(info.subresource)
    if sub is None or info.verb not in sub.verbs:
        raise errors.not_found(res.group_resource, info.name) if sub is None else errors.method_not_allowed()
    namespace = info.namespace if res.namespaced else None
    target = handler.target(request)
    if sub.name == "scale":
        return await _scale(handler, request, info, res, namespace, user, target)
    if sub.name in ("status", "finalize", "ephemeralcontainers", "approval"):
        return await _status_like(handler, request, info, res, namespace, user, target)
    extra = table.subresources.get((res.group, res.plural, sub.name))
    if extra is None:
        raise errors.method_not_allowed()
    return await extra(request, info, res, user, target)


async def _status_like(handler: ObjectIO, request: web.Request, info: RequestInfo, res: ResourceType,
                       namespace: str | None, user: Any, target: Target) -> web.Response:
    registry = handler.registry
    if info.verb == "get":
        return handler.respond_entry(res, registry.get(res, namespace, info.name), target)
    patch_type = PATCH_TYPES.get(media_type(request.headers.get("Content-Type")))
    opts = write_options(request, info, user, "Apply" if info.verb == "patch" and patch_type == "apply" else "Update")
    if info.verb == "update":
        obj, warnings = await handler.decode_object(request, res)
        opts.warnings.extend(warnings)
        result, _ = await registry.update(res, namespace, info.name, obj, opts, allow_create=False)
        return handler.respond_entry(res, result, target, headers=warning_headers(opts.warnings))
    if patch_type is None:
        raise errors.unsupported_media_type(request.headers.get("Content-Type", ""))
    raw = await read_body(request)
    result, _ = await patching.apply_patch(registry, request, res, namespace, info.name, patch_type, raw, opts)
    return handler.respond_entry(res, result, target, headers=warning_headers(opts.warnings))


async def _scale(handler: ObjectIO, request: web.Request, info: RequestInfo, res: ResourceType,
                 namespace: str | None, user: Any, target: Target) -> web.Response:
    registry = handler.registry
    try:
        current = registry.get(res, namespace, info.name)
    except errors.StatusError as exc:
        if exc.code != 404 or info.verb != "get" or res.crd is not None:
            raise
        # the built-in scale endpoints' own 404 (`deployments/scale.apps`; the RC's is in `autoscaling`)
        group = "autoscaling" if res.plural == "replicationcontrollers" else res.group
        raise errors.not_found(f"{res.plural}/scale" + (f".{group}" if group else ""), info.name) from None
    if info.verb == "get":
        return _scale_response(to_scale(res, current.obj), target)
    opts = write_options(request, info, user)
    opts.subresource = "scale"  # the write lands on spec.replicas; managedFields record the scale subresource
    raw = await read_body(request)
    spec_path = scale_paths(res)[0]
    if info.verb == "update":
        scale = decode_body(raw, request.headers.get("Content-Type"))
        if not isinstance(scale, dict):
            raise errors.bad_request("Scale must be an object")
    else:
        patch_type = PATCH_TYPES.get(media_type(request.headers.get("Content-Type")))
        if patch_type is None or patch_type == "apply":
            raise errors.unsupported_media_type(request.headers.get("Content-Type", ""))
        patch = decode_body(raw, request.headers.get("Content-Type"))
        scale = patching.apply_patch_document(SCALE, patch_type, to_scale(res, current.obj), patch)
        if not isinstance(scale, dict):
            raise errors.bad_request("the patch did not produce an object")
    replicas = _checked_scale(scale, info.name, namespace, info.verb != "update")
    if replicas < 0:
        raise errors.invalid_object("Scale", "autoscaling", info.name, [errors.invalid(
            "spec.replicas", replicas, "must be greater than or equal to 0")])
    rv = (scale.get("metadata") or {}).get("resourceVersion")

    def mutate(obj: dict[str, Any]) -> dict[str, Any]:
        if res.crd is not None:
            return apply_scale(obj, res.extra.get("scale") or {}, scale)
        if rv:
            obj["metadata"]["resourceVersion"] = rv
        _path_set(obj, spec_path, replicas)
        return obj

    result = await registry.guaranteed_update(res, namespace, info.name, mutate, opts)
    obj = result.obj if isinstance(result, Entry) else result
    return _scale_response(to_scale(res, obj), target)


SCALE = ResourceType("autoscaling", "v1", "Scale", "scale", True, stored=False)


def _checked_scale(scale: dict[str, Any], name: str, namespace: str | None, patched: bool) -> int:
    """The replicas a Scale body asks for, after the checks upstream's decoder and handler make: Go types
    (`Scale in version "v1" cannot be handled as a Scale: ...`), kind and apiVersion, name and namespace."""
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
    return (scale.get("spec") or {}).get("replicas") or 0  # absent or null: Go's zero value


def _scale_response(scale: dict[str, Any], target: Target) -> web.Response:
    """A Scale, or its Table (`kubectl get --subresource=scale`: NAME, DESIRED, AVAILABLE, AGE)."""
    if target.as_kind == "Table":
        meta = {"resourceVersion": scale["metadata"].get("resourceVersion", "")}
        return responses.encode_dict(build_table(SCALE, [scale], responses.now(), "Metadata", meta,
                                                 target.version or "v1"), target)
    if target.as_kind == "PartialObjectMetadata":
        return responses.encode_dict(responses.partial_metadata(scale, target.version), target)
    if target.as_kind:
        raise errors.not_acceptable(target.as_kind)
    return responses.encode_dict(scale, target)


async def create_virtual(table: SubresourceTable, request: web.Request, info: RequestInfo, res: ResourceType,
                         obj: dict[str, Any], user: Any, target: Target) -> web.Response:
    """Request-only kinds (access reviews, SelfSubjectReview, TokenReview): computed, never stored."""
    compute = table.kinds.get((res.group, res.kind))
    if compute is None:
        raise errors.method_not_allowed()
    result = await compute(request, info, obj, user)
    body = orjson.loads(orjson.dumps(result))
    return responses.encode_dict(body, target, 201)
