"""Objects in and out of a request: the negotiated representation, decoding and field-checking a body, and
encoding a stored object (or its Table or metadata) as the answer. Shared by resource and subresource handlers."""

from __future__ import annotations

from typing import Any

from aiohttp import web
from mini_kube.machinery import times

from .. import errors
from ..crd.serving import served, serves_raw
from ..http import responses
from ..http.negotiation import PROTOBUF, Target, decode_body, negotiate
from ..http.tables import build_table
from ..registry.cache import Entry
from ..registry.generic import Registry, WriteOptions
from ..requestinfo import RequestInfo
from ..resources import ResourceType
from . import fieldcheck
from .requests import read_body, write_options


class ObjectIO:
    """Decodes and encodes the objects of one registry's resources."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry

    def target(self, request: web.Request, *, tables: bool = True) -> Target:
        """The answer's representation; `tables`: whether the endpoint converts to a Table at all."""
        return negotiate(request.headers.get("Accept"), tables=tables)

    async def respond_entry(self, res: ResourceType, entry: Entry | dict[str, Any], target: Target,
                            status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
        obj = entry.obj if isinstance(entry, Entry) else _without_empty_version(entry)
        if res.strategy is not None and res.strategy.converts_on_read and target.as_kind != "PartialObjectMetadata":
            await res.strategy.prepare_reads(res, [obj])
        if target.as_kind == "Table":
            meta = {"resourceVersion": obj.get("metadata", {}).get("resourceVersion", "")}
            table = build_table(res, [self.served(res, obj)], times.now(), "Metadata", meta,
                                target.version or "v1")
            return responses.encode_dict(table, target, status, headers)
        if target.as_kind == "PartialObjectMetadata":
            return responses.encode_dict(responses.partial_metadata(obj, target.version), target, status, headers)
        if target.as_kind:
            raise errors.not_acceptable(PROTOBUF)
        if isinstance(entry, Entry) and serves_raw(res, obj, entry.revision):
            return responses.encode_entry(entry, target, status, headers)
        return responses.encode_dict(self.served(res, obj), target, status, headers)

    @staticmethod
    def served(res: ResourceType, obj: dict[str, Any]) -> dict[str, Any]:
        """The object as the requested version (custom resources: converted from the stored version)."""
        return served(res, obj)

    async def decode_object(self, request: web.Request, res: ResourceType) -> tuple[dict[str, Any], list[str]]:
        """Decode a create/update body and apply field validation (Strict/Warn/Ignore)."""
        raw = await read_body(request)
        obj = decode_body(raw, request.headers.get("Content-Type"))
        if not isinstance(obj, dict):
            raise errors.bad_request(f'{res.kind} in version "{res.version}" cannot be handled as a {res.kind}: '
                                     "json: cannot unmarshal into Go value of type struct")
        warnings = fieldcheck.check(res, obj, raw, request.headers.get("Content-Type"),
                                    request.query.get("fieldValidation", ""))
        return obj, warnings

    async def decode_write(self, request: web.Request, info: RequestInfo, res: ResourceType,
                           user: Any) -> tuple[dict[str, Any], WriteOptions]:
        """The decoded body of a create or update, and its write options carrying the field warnings."""
        obj, warnings = await self.decode_object(request, res)
        opts = write_options(request, info, user)
        opts.warnings.extend(warnings)
        return obj, opts


def _without_empty_version(obj: dict[str, Any]) -> dict[str, Any]:
    """An object never stored (a dry-run create) has no resourceVersion: Go's omitempty leaves the field out."""
    meta = obj.get("metadata")
    if isinstance(meta, dict) and meta.get("resourceVersion") == "":
        return {**obj, "metadata": {k: v for k, v in meta.items() if k != "resourceVersion"}}
    return obj
