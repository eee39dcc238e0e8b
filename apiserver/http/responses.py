"""Encoding responses: objects, lists, Tables, partial metadata and Status, in JSON, YAML or protobuf."""

from __future__ import annotations

from typing import Any

import orjson
import yaml
from aiohttp import web

from ..errors import StatusError
from ..registry.cache import Entry
from ..resources import ResourceType
from .negotiation import JSON, PROTOBUF, YAML, Target

HEADERS = {"Cache-Control": "no-cache, private"}


def _bytes_response(body: bytes, status: int, content_type: str,
                    headers: dict[str, str] | None = None) -> web.Response:
    hdrs = dict(HEADERS)
    if headers:
        hdrs.update(headers)
    hdrs["Content-Type"] = content_type
    return web.Response(body=body, status=status, headers=hdrs)


def encode_dict(obj: dict[str, Any], target: Target, status: int = 200,
                headers: dict[str, str] | None = None) -> web.Response:
    """Encode a plain object in the negotiated media type."""
    if target.media == YAML:
        return _bytes_response(yaml.safe_dump(obj, sort_keys=False).encode(), status, YAML, headers)
    if target.media == PROTOBUF:
        from ..codecs import protobuf  # loaded on first use, not at start-up

        if protobuf.supports(obj.get("apiVersion", ""), obj.get("kind", "")):
            return _bytes_response(protobuf.encode(obj), status, PROTOBUF, headers)
    return _bytes_response(orjson.dumps(obj, option=orjson.OPT_APPEND_NEWLINE), status, JSON, headers)


def encode_entry(entry: Entry, target: Target, status: int = 200,
                 headers: dict[str, str] | None = None) -> web.Response:
    """An object as stored: JSON is served from its serialized bytes without re-encoding."""
    if target.media == JSON:
        return _bytes_response(entry.raw, status, JSON, headers)
    return encode_dict(entry.obj, target, status, headers)


def status_response(exc: StatusError, target: Target | None = None) -> web.Response:
    body = exc.status()
    if target is not None and target.media == PROTOBUF:
        return encode_dict(body, target, exc.code, exc.headers)
    return _bytes_response(orjson.dumps(body, option=orjson.OPT_APPEND_NEWLINE), exc.code, JSON, exc.headers)


def list_parts(res: ResourceType, api_version: str, items: list[Entry], revision: int, continue_token: str,
               remaining: int | None) -> list[bytes]:
    """A typed list's pieces in order, each item's stored bytes as they are (a large list is streamed piece by
    piece, never joined whole). Items of built-in kinds go without kind and apiVersion, as upstream's typed lists
    carry them (stored objects begin with exactly those two fields, so they are cut off the bytes, not
    re-encoded); custom resources keep them."""
    meta: dict[str, Any] = {"resourceVersion": str(revision)}
    if continue_token:
        meta["continue"] = continue_token
    if remaining is not None:
        meta["remainingItemCount"] = remaining
    head = orjson.dumps({"kind": res.list_kind, "apiVersion": api_version, "metadata": meta})
    if res.crd is not None:
        raws = [e.raw for e in items]
    else:
        type_meta = b'{"kind":' + orjson.dumps(res.kind) + b',"apiVersion":' + orjson.dumps(api_version) + b","
        raws = [e.item_raw or _untyped(e, type_meta) for e in items]
    parts = [head[:-1] + b',"items":[']
    for i, raw in enumerate(raws):
        if i:
            parts.append(b",")
        parts.append(raw)  # the stored bytes themselves: nothing is copied until the final write
    parts.append(b"]}")
    return parts


def _untyped(entry: Entry, type_meta: bytes) -> bytes:
    raw = entry.raw
    entry.item_raw = b"{" + raw[len(type_meta):] if raw.startswith(type_meta) else raw
    return entry.item_raw


def list_dict(res: ResourceType, api_version: str, items: list[dict[str, Any]], revision: int,
              continue_token: str, remaining: int | None) -> dict[str, Any]:
    meta: dict[str, Any] = {"resourceVersion": str(revision)}
    if continue_token:
        meta["continue"] = continue_token
    if remaining is not None:
        meta["remainingItemCount"] = remaining
    return {"kind": res.list_kind, "apiVersion": api_version, "metadata": meta, "items": items}


def partial_metadata(obj: dict[str, Any], version: str = "v1") -> dict[str, Any]:
    return {"kind": "PartialObjectMetadata", "apiVersion": f"meta.k8s.io/{version}",
            "metadata": obj.get("metadata", {})}


