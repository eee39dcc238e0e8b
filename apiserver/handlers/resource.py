"""The REST handlers for resources: get, list, create, update, patch, delete, deletecollection.

Every resource request arrives here after request info, authentication and authorization; the handler
negotiates the representation, decodes the body, calls the registry and encodes the answer.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web
from mini_kube.machinery import times

from .. import errors
from ..crd.serving import serves_raw
from ..errors import StatusError
from ..http import responses
from ..http.negotiation import PATCH_TYPES, decode_body, media_type
from ..http.query import parse_int64
from ..http.tables import build_table
from ..registry.generic import Registry
from ..requestinfo import RequestInfo
from ..resources import ResourceType
from ..schema.fields import type_errors
from ..selectors import FieldSelector, parse_label_selector
from . import patching, subresources
from .object_io import ObjectIO
from .requests import check_dry_run, read_body, warning_headers, write_options
from .routes import SubresourceTable
from .watch import WatchSources, parse_timeout_seconds, serve_watch

DELETE_OPTIONS = "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions"


def _limit(query: Any) -> int:
    """ListOptions.limit (int64); zero or negative means no limit."""
    value = query.get("limit")
    return max(parse_int64(value), 0) if value else 0


class ResourceHandler(ObjectIO):
    """Dispatches one resource request by verb."""

    def __init__(self, registry: Registry, watches: WatchSources, table: SubresourceTable) -> None:
        super().__init__(registry)
        self.watches = watches
        self.table = table

    async def handle(self, request: web.Request, info: RequestInfo, res: ResourceType, user: Any) -> web.StreamResponse:
        if info.subresource:
            return await subresources.handle(self, self.table, request, info, res, user)
        verb = info.verb
        if verb not in res.verbs and not (verb == "watch" and "watch" in res.verbs):
            raise errors.method_not_allowed()
        namespace = info.namespace if res.namespaced else None
        if res.namespaced and not namespace and verb not in ("list", "watch"):
            raise errors.not_found(res.group_resource, info.name) if info.name else errors.method_not_allowed()
        if verb == "get":
            if self.registry.store.shared and request.query.get("resourceVersion", "") == "":
                await self.registry.store.sync()  # another API server may have written it: read at least that
            return await self.get(request, res, namespace, info.name)
        if verb == "list":
            return await self.list(request, res, namespace)
        if verb == "watch":
            return await serve_watch(self.watches, request, res, namespace, info.name)
        if verb == "create":
            return await self.create(request, info, res, namespace, user)
        if verb == "update":
            return await self.update(request, info, res, namespace, user)
        if verb == "patch":
            return await self.patch(request, info, res, namespace, user)
        if verb == "delete":
            return await self.delete(request, info, res, namespace, user)
        if verb == "deletecollection":
            return await self.delete_collection(request, info, res, namespace, user)
        raise errors.method_not_allowed()

    # -- reads -----------------------------------------------------------------------------------
    async def get(self, request: web.Request, res: ResourceType, namespace: str | None, name: str) -> web.Response:
        target = self.target(request)
        entry = self.registry.get(res, namespace, name)
        return await self.respond_entry(res, entry, target)

    async def list(self, request: web.Request, res: ResourceType, namespace: str | None) -> web.StreamResponse:
        query = request.query
        _check_list_options(query)
        target = self.target(request)
        labels = parse_label_selector(query.get("labelSelector"))
        fields = FieldSelector.parse(query.get("fieldSelector"), res.kind, res.selectable_fields, res.group)
        result = await self.registry.list(
            res, namespace, labels=labels, fields=fields, limit=_limit(query),
            continue_token=query.get("continue", ""), resource_version=query.get("resourceVersion", ""),
            match=query.get("resourceVersionMatch", ""))
        if res.strategy is not None and res.strategy.converts_on_read and \
                target.as_kind not in ("PartialObjectMetadataList", "PartialObjectMetadata"):
            await res.strategy.prepare_reads(res, [e.obj for e in result.items])
        if target.as_kind == "Table":
            meta: dict[str, Any] = {"resourceVersion": str(result.revision)}
            if result.continue_token:
                meta["continue"] = result.continue_token
            if result.remaining is not None:
                meta["remainingItemCount"] = result.remaining
            include = query.get("includeObject", "Metadata")
            table = build_table(res, [self.served(res, e.obj) for e in result.items], times.now(), include,
                                meta, target.version or "v1")
            return responses.encode_dict(table, target)
        if target.as_kind in ("PartialObjectMetadataList", "PartialObjectMetadata"):
            body = responses.list_dict(res, res.api_version, [responses.partial_metadata(e.obj, target.version)
                                                              for e in result.items],
                                       result.revision, result.continue_token, result.remaining)
            body["kind"], body["apiVersion"] = "PartialObjectMetadataList", f"meta.k8s.io/{target.version}"
            return responses.encode_dict(body, target)
        if target.media == "application/json" and all(serves_raw(res, e.obj, e.revision) for e in result.items):
            parts = responses.list_parts(res, res.api_version, result.items, result.revision,
                                         result.continue_token, result.remaining)
            headers = {**responses.HEADERS, "Content-Type": "application/json"}
            if sum(len(p) for p in parts) <= STREAM_LISTS_OVER:
                return web.Response(body=b"".join(parts), headers=headers)
            return await stream_parts(request, parts, headers)
        body = responses.list_dict(res, res.api_version, [self.served(res, e.obj) for e in result.items],
                                   result.revision, result.continue_token, result.remaining)
        return responses.encode_dict(body, target)

    # -- writes ----------------------------------------------------------------------------------
    async def create(self, request: web.Request, info: RequestInfo, res: ResourceType, namespace: str | None,
                     user: Any) -> web.Response:
        target = self.target(request, tables=res.stored)  # request-only kinds have no Table conversion
        obj, opts = await self.decode_write(request, info, res, user)
        if not res.stored:
            return await subresources.create_virtual(self.table, info, res, obj, user, opts, target)
        result = await self.registry.create(res, namespace, obj, opts)
        return await self.respond_entry(res, result, target, 201, warning_headers(opts.warnings))

    async def update(self, request: web.Request, info: RequestInfo, res: ResourceType, namespace: str | None,
                     user: Any) -> web.Response:
        target = self.target(request)
        obj, opts = await self.decode_write(request, info, res, user)
        result, created = await self.registry.update(res, namespace, info.name, obj, opts)
        return await self.respond_entry(res, result, target, 201 if created else 200, warning_headers(opts.warnings))

    async def patch(self, request: web.Request, info: RequestInfo, res: ResourceType, namespace: str | None,
                    user: Any) -> web.Response:
        target = self.target(request)
        content_type = media_type(request.headers.get("Content-Type"))
        patch_type = PATCH_TYPES.get(content_type)
        if patch_type is None:
            raise StatusError(415, "UnsupportedMediaType", f"the body of the request was in an unknown format - "
                              "accepted media types include: application/json-patch+json, "
                              "application/merge-patch+json, application/apply-patch+yaml, "
                              f"application/strategic-merge-patch+json; got \"{content_type}\"")
        raw = await read_body(request)
        opts = write_options(request, info, user, "Apply" if patch_type == "apply" else "Update")
        result, created = await patching.apply_patch(self.registry, request, res, namespace, info.name, patch_type, raw, opts)
        return await self.respond_entry(res, result, target, 201 if created else 200, warning_headers(opts.warnings))

    async def delete(self, request: web.Request, info: RequestInfo, res: ResourceType, namespace: str | None,
                     user: Any) -> web.Response:
        target = self.target(request)
        options = await self.delete_options(request)
        opts = write_options(request, info, user)
        opts.dry_run = opts.dry_run or bool(options.get("dryRun"))
        result, _ = await self.registry.delete(res, namespace, info.name, options, opts)
        if result.get("kind") == "Status":
            return responses.encode_dict(result, target)
        return await self.respond_entry(res, result, target)

    async def delete_options(self, request: web.Request) -> dict[str, Any]:
        raw = await read_body(request) if request.can_read_body else b""
        options: dict[str, Any] = {}
        if raw.strip():
            decoded = decode_body(raw, request.headers.get("Content-Type") or "application/json")
            if not isinstance(decoded, dict):
                raise errors.bad_request("DeleteOptions must be an object")
            problem = type_errors(DELETE_OPTIONS, decoded)
            if problem:
                raise errors.bad_request(problem)
            options = decoded
        query = request.query
        if "propagationPolicy" in query:
            options["propagationPolicy"] = query["propagationPolicy"]
        if "gracePeriodSeconds" in query:
            options["gracePeriodSeconds"] = parse_int64(query["gracePeriodSeconds"])
        check_dry_run(options.get("dryRun"))
        policy = options.get("propagationPolicy")
        if policy not in (None, "Orphan", "Background", "Foreground"):
            raise errors.invalid_object("DeleteOptions", "", "", [errors.not_supported(
                "propagationPolicy", policy, ["Foreground", "Background", "Orphan", "nil"])])
        return options

    async def delete_collection(self, request: web.Request, info: RequestInfo, res: ResourceType,
                                namespace: str | None, user: Any) -> web.Response:
        target = self.target(request)
        query = request.query
        options = await self.delete_options(request)
        opts = write_options(request, info, user)
        opts.dry_run = opts.dry_run or bool(options.get("dryRun"))
        labels = parse_label_selector(query.get("labelSelector"))
        fields = FieldSelector.parse(query.get("fieldSelector"), res.kind, res.selectable_fields, res.group)
        deleted = await self.registry.delete_collection(res, namespace, labels, fields, options, opts)
        body = responses.list_dict(res, res.api_version, deleted, self.registry.cache.revision, "", None)
        return responses.encode_dict(body, target)


STREAM_LISTS_OVER = 1 << 20
"""A list larger than this many bytes is written in pieces (no whole copy; other requests run in between)."""


async def stream_parts(request: web.Request, parts: list[bytes], headers: dict[str, str]) -> web.StreamResponse:
    response = web.StreamResponse(headers=headers)
    await response.prepare(request)
    batch: list[bytes] = []
    size = 0
    for part in parts:
        batch.append(part)
        size += len(part)
        if size >= STREAM_LISTS_OVER:
            await response.write(b"".join(batch))
            batch, size = [], 0
    if batch:
        await response.write(b"".join(batch))
    await response.write_eof()
    return response


def _check_list_options(query: Any) -> None:
    """ListOptions as upstream validates them for a list (422), and a whole-number timeoutSeconds (400)."""
    parse_timeout_seconds(query.get("timeoutSeconds"))
    match = query.get("resourceVersionMatch", "")
    if not match:
        return
    problems = []
    if not query.get("resourceVersion"):
        problems.append(errors.forbidden("resourceVersionMatch",
                                         "resourceVersionMatch is forbidden unless resourceVersion is provided"))
    if query.get("continue"):
        problems.append(errors.forbidden("resourceVersionMatch",
                                         "resourceVersionMatch is forbidden when continue is provided"))
    if match == "Exact" and query.get("resourceVersion") == "0":
        problems.append(errors.forbidden("resourceVersionMatch",
                                         'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'))
    elif match not in ("Exact", "NotOlderThan"):
        problems.append(errors.not_supported("resourceVersionMatch", match, ["Exact", "NotOlderThan", ""]))
    if problems:
        raise errors.invalid_object("ListOptions", "meta.k8s.io", "", problems)
