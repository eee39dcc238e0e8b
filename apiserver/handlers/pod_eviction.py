"""`POST .../pods/NAME/eviction`: decode the Eviction (policy/v1 or v1beta1) and its DeleteOptions, let
`registry/rest/eviction.py` evict, and encode the Status it answers."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from .. import errors
from ..http import responses
from ..http.negotiation import Target, decode_body
from ..registry.rest.eviction import EvictionREST
from ..requestinfo import RequestInfo
from ..resources import ResourceType
from ..schema import messages
from ..schema.fields import type_errors
from .requests import check_dry_run, manager_from_user_agent, read_body

EVICTION_VERSIONS = ("policy/v1", "policy/v1beta1")


def decode_eviction(raw: bytes, content_type: str | None, namespace: str, name: str) -> dict[str, Any]:
    """The Eviction body (policy/v1 or v1beta1), checked against the URL."""
    body = decode_body(raw, content_type)
    if not isinstance(body, dict):
        raise errors.bad_request("the body of the request was not a JSON object")
    api_version, kind = body.get("apiVersion"), body.get("kind")
    if kind and kind != "Eviction":
        raise errors.bad_request(f"the kind in the data ({kind}) does not match the expected kind (Eviction)")
    if api_version and api_version not in EVICTION_VERSIONS:
        raise errors.bad_request(f"the API version in the data ({api_version}) does not match the expected API "
                                 "version (policy/v1)")
    version = (api_version or "policy/v1").rpartition("/")[2]
    problem = type_errors("io.k8s.api.policy.v1.Eviction", body)  # v1beta1 has the same fields
    if problem:  # Go types: a gracePeriodSeconds of 1.5 or a deleteOptions of "x" never decode
        raise messages.decode_error("Eviction", version, problem)
    meta = body.get("metadata") or {}
    if meta.get("namespace") and meta["namespace"] != namespace:
        raise errors.bad_request("the namespace of the provided object does not match the namespace sent on the "
                                 "request")
    if meta.get("name", "") != name:
        raise errors.bad_request("name in URL does not match name in Eviction object")
    return body


def delete_options(body: dict[str, Any], query_dry_run: list[str]) -> dict[str, Any]:
    """The eviction's DeleteOptions with the request's dryRun pushed in (upstream's propagateDryRun)."""
    options = dict(body.get("deleteOptions") or {})
    given = check_dry_run(options.get("dryRun"))
    if not given:
        if query_dry_run:
            options["dryRun"] = query_dry_run
    elif query_dry_run and given != query_dry_run:
        raise errors.internal_error("Non-matching dry-run options in request and content: "
                                    f"[{' '.join(query_dry_run)}] and [{' '.join(given)}]")
    policy = options.get("propagationPolicy")
    if policy not in (None, "Orphan", "Background", "Foreground"):
        raise errors.invalid_object("DeleteOptions", "", "", [errors.not_supported(
            "propagationPolicy", policy, ["Foreground", "Background", "Orphan", "nil"])])
    return options


class PodEviction:
    """`pods/eviction` (POST) over one EvictionREST."""

    def __init__(self, rest: EvictionREST) -> None:
        self.rest = rest

    async def __call__(self, request: web.Request, info: RequestInfo, res: ResourceType, user: Any,
                       target: Target) -> web.StreamResponse:
        raw = await read_body(request)
        body = decode_eviction(raw, request.headers.get("Content-Type"), info.namespace, info.name)
        options = delete_options(body, check_dry_run(request.query.getall("dryRun", [])))
        manager = request.query.get("fieldManager") or manager_from_user_agent(request.headers.get("User-Agent", ""))
        status, code = await self.rest.create(res, info.namespace, info.name, body, options, user, manager)
        return responses.encode_dict(status, target, code)
