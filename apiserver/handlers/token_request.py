"""`serviceaccounts/token` (POST a TokenRequest): a token for the service account, signed with the server's key."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from .. import errors
from ..auth.sa_token import ServiceAccountTokens
from ..auth.tokenrequest import object_getter, token_request
from ..http import responses
from ..http.negotiation import Target, decode_body
from ..registry.generic import Registry
from ..registry.reader import ObjectReader
from ..requestinfo import RequestInfo
from ..resources import ResourceType
from .requests import read_body


class TokenRequests:
    """Issues tokens for the service accounts of one registry; bound objects are looked up through `objects`."""

    def __init__(self, registry: Registry, objects: ObjectReader, tokens: ServiceAccountTokens) -> None:
        self.registry = registry
        self.get_object = object_getter(objects)
        self.tokens = tokens

    async def __call__(self, request: web.Request, info: RequestInfo, res: ResourceType, user: Any,
                       target: Target) -> web.Response:
        if info.verb != "create":
            raise errors.method_not_allowed()
        service_account = self.registry.get(res, info.namespace, info.name).obj
        body = decode_body(await read_body(request), request.headers.get("Content-Type"))
        if not isinstance(body, dict):
            raise errors.bad_request("TokenRequest must be an object")
        result = token_request(body, service_account, self.tokens, self.get_object)
        return responses.encode_dict(result, target, 201)
