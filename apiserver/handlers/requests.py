"""Reading what every write request carries: its body (size-limited), dryRun, its field manager, and the
Warning headers of the answer."""

from __future__ import annotations

from typing import Any

import orjson
from aiohttp import web

from .. import errors
from ..http.negotiation import MAX_BODY
from ..registry.generic import WriteOptions
from ..requestinfo import AUDIT_ANNOTATIONS_KEY, RequestInfo


async def read_body(request: web.Request) -> bytes:
    """The request body, refusing anything over 3 MiB with 413."""
    if request.content_length is not None:
        if request.content_length > MAX_BODY:
            raise errors.too_large()
        return await request.read()
    chunks, size = [], 0
    async for chunk in request.content.iter_any():
        size += len(chunk)
        if size > MAX_BODY:
            raise errors.too_large()
        chunks.append(chunk)
    return b"".join(chunks)


def check_dry_run(values: Any) -> list[str]:
    """The `dryRun` values of a request (query or DeleteOptions body); only "All" is supported."""
    if values is None:
        return []
    if not isinstance(values, list):
        raise errors.bad_request("dryRun: must be a list of strings")
    for value in values:
        if value != "All":
            raise errors.bad_request(f'dryRun: Unsupported value: "{value}": supported values: "All"')
    return values


def write_options(request: web.Request, info: RequestInfo, user: Any, operation: str = "Update") -> WriteOptions:
    query = request.query
    dry_run = check_dry_run(query.getall("dryRun", []))
    manager = query.get("fieldManager", "")
    if len(manager) > 128:
        raise errors.invalid_object("", "", "", [errors.too_long("fieldManager", manager, 128)])
    if not manager and operation != "Apply":  # apply must name its manager; other writes default to the agent
        manager = manager_from_user_agent(request.headers.get("User-Agent", ""))
    opts = WriteOptions(dry_run=bool(dry_run), field_manager=manager, user=user,
                        subresource=info.subresource, operation=operation)
    request[AUDIT_ANNOTATIONS_KEY] = opts.audit_annotations  # the audit event carries what admission adds
    return opts


def manager_from_user_agent(user_agent: str) -> str:
    """The field manager of a write that names none: the User-Agent up to its first `/`, printable, 128 max."""
    return "".join(ch for ch in user_agent.split("/")[0] if ch.isprintable())[:128]


def warning_headers(warnings: list[str]) -> dict[str, str] | None:
    if not warnings:
        return None
    return {"Warning": ", ".join(f'299 - {orjson.dumps(w).decode()}' for w in warnings)}
