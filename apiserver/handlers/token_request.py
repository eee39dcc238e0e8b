"""`serviceaccounts/token` (POST a TokenRequest): decode the request, let `registry/rest/tokens.py` issue the token,
and encode the TokenRequest it answers."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from .. import errors
from ..http import responses
from ..http.negotiation import Target, decode_body
from ..registry.rest.tokens import TokenRequestREST
from ..requestinfo import RequestInfo
from ..resources import ResourceType
from .requests import read_body


class TokenRequests:
    """POST /api/v1/namespaces/ns/serviceaccounts/x/token, over one TokenRequestREST."""

    def __init__(self, rest: TokenRequestREST) -> None:
        self.rest = rest

    async def __call__(self, request: web.Request, info: RequestInfo, res: ResourceType, user: Any,
                       target: Target) -> web.Response:
        if info.verb != "create":
            raise errors.method_not_allowed()
        self.rest.require(info.namespace, info.name)  # a missing service account is a 404 before the body is read
        body = decode_body(await read_body(request), request.headers.get("Content-Type"))
        result = await self.rest.create(info.namespace, info.name, body)
        return responses.encode_dict(result, target, 201)
