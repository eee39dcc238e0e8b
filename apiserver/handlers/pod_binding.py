"""`pods/binding` and `bindings`: decode the Binding, let `registry/rest/binding.py` assign the Pod, and encode
the Status it answers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aiohttp import web

from .. import errors
from ..http import responses
from ..http.negotiation import decode_body
from ..registry.rest.binding import BindingREST
from .resource import read_body

if TYPE_CHECKING:
    from ..server import ApiServer


def _dry_run(request: web.Request) -> bool:
    return "All" in request.query.getall("dryRun", [])


def pod_binding_handler(rest: BindingREST) -> Any:
    """The handler of POST /api/v1/namespaces/ns/pods/x/binding over `rest`."""

    async def pod_binding(handler: Any, request: web.Request, info: Any, res: Any, user: Any,
                          target: Any) -> web.StreamResponse:
        body = decode_body(await read_body(request), request.headers.get("Content-Type"))
        if not isinstance(body, dict):
            raise errors.bad_request("Binding must be an object")
        if ((body.get("metadata") or {}).get("name") or "") != info.name:
            raise errors.bad_request("name in URL does not match name in Binding object")
        status = await rest.create(info.namespace, info.name, body, _dry_run(request))
        return responses.encode_dict(status, target, 201)

    return pod_binding


def legacy_binding_handler(rest: BindingREST) -> Any:
    """The computation of POST /api/v1/namespaces/ns/bindings (the Pod named by the Binding's metadata.name)."""

    async def legacy_binding(server: Any, request: web.Request, info: Any, obj: dict[str, Any],
                             user: Any) -> dict[str, Any]:
        name = (obj.get("metadata") or {}).get("name") or ""
        if not name:
            raise errors.bad_request("name in URL does not match name in Binding object")
        return await rest.create(info.namespace, name, obj, _dry_run(request))

    return legacy_binding


def install(server: ApiServer) -> None:
    rest = BindingREST(server.registry)
    server.subresource_handlers[("", "pods", "binding")] = pod_binding_handler(rest)
    server.virtual_kinds[("", "Binding")] = legacy_binding_handler(rest)
