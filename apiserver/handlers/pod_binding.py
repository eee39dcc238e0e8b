"""`pods/binding`: decode the Binding, let `registry/rest/binding.py` assign the Pod, and encode the Status it
answers."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from .. import errors
from ..http import responses
from ..http.negotiation import Target, decode_body
from ..registry.rest.binding import BindingREST
from ..requestinfo import RequestInfo
from ..resources import ResourceType
from .requests import read_body


def _dry_run(request: web.Request) -> bool:
    return "All" in request.query.getall("dryRun", [])


class PodBinding:
    """`pods/binding`, over one BindingREST (the request-only kind `bindings` is `BindingsREST`'s)."""

    def __init__(self, rest: BindingREST) -> None:
        self.rest = rest

    async def subresource(self, request: web.Request, info: RequestInfo, res: ResourceType, user: Any,
                          target: Target) -> web.StreamResponse:
        """POST /api/v1/namespaces/ns/pods/x/binding."""
        body = decode_body(await read_body(request), request.headers.get("Content-Type"))
        if not isinstance(body, dict):
            raise errors.bad_request("Binding must be an object")
        if ((body.get("metadata") or {}).get("name") or "") != info.name:
            raise errors.bad_request("name in URL does not match name in Binding object")
        status = await self.rest.create(info.namespace, info.name, body, _dry_run(request))
        return responses.encode_dict(status, target, 201)
