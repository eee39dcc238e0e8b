"""The aiohttp application: one catch-all route and the handler chain (request info -> authn -> authz -> handler).

Routing is data-driven: the request info names a group/version/resource, looked up in the resource table
(which CRDs change at run time), so no routes are registered per resource.
"""

from __future__ import annotations

import logging
import traceback
from typing import TYPE_CHECKING, Any

from aiohttp import web

from . import errors
from .errors import StatusError
from .handlers import kubelet_proxy, system
from .http.negotiation import MAX_BODY
from .http.protocol import RATE_LIMITED
from .http.responses import status_response
from .requestinfo import REQUEST_INFO_KEY, parse_request_info

if TYPE_CHECKING:
    from .server import ApiServer

log = logging.getLogger("mini-kube.apiserver")

HEALTH = ("/healthz", "/livez", "/readyz")


def build_app(server: ApiServer) -> web.Application:
    app = web.Application(client_max_size=MAX_BODY + 1, handler_args={"max_field_size": 65536})

    async def handler(request: web.Request) -> web.StreamResponse:
        return await dispatch(server, request)

    app.router.add_route("*", "/{tail:.*}", handler)
    kubelet_proxy.install(app)
    return app


async def dispatch(server: ApiServer, request: web.Request) -> web.StreamResponse:
    """Run the whole chain for one request, turning every error into a Status (and auditing the answer)."""
    response = await _answer(server, request)
    audit = server.config.extra.get("audit_hook")
    if audit is not None:
        audit(request, response.status)
    return response


async def _answer(server: ApiServer, request: web.Request) -> web.StreamResponse:
    try:
        return await _dispatch(server, request)
    except StatusError as exc:
        return status_response(exc)
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        if exc.status == 413:  # aiohttp's own limit, e.g. a gzip body that inflates past 3 MiB
            return status_response(errors.too_large())
        return status_response(StatusError(exc.status, exc.reason.replace(" ", ""), exc.text or exc.reason, {}))
    except web.RequestPayloadError as exc:  # a body that cannot be read: corrupt gzip/deflate data
        reason = getattr(exc.__cause__, "message", "") or str(exc)
        return status_response(errors.bad_request(f"the request body could not be read: {reason}"))
    except (ConnectionResetError, TimeoutError) as exc:
        log.debug("client went away: %s", exc)
        raise
    except Exception as exc:  # a 500 is a bug (or the store is down): log it, answer with a Status
        RATE_LIMITED.error(failure_key(exc), "internal error on %s %s: %s: %s", request.method, request.path,
                           type(exc).__name__, exc, detail=traceback.format_exc().rstrip())
        return status_response(errors.internal_error(f"{type(exc).__name__}: {exc}"))


def failure_key(exc: BaseException) -> str:
    """Where an internal error comes from (its type and innermost frame): the same failure repeated (the store
    unreachable, every request failing alike) logs its traceback once per interval, a different one at once."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    where = f"{tb.tb_frame.f_code.co_filename}:{tb.tb_lineno}" if tb is not None else ""
    return f"internal:{type(exc).__name__}:{where}"


async def _dispatch(server: ApiServer, request: web.Request) -> web.StreamResponse:
    path = request.path
    info = parse_request_info(request.method, path, request.query)
    request[REQUEST_INFO_KEY] = info
    user = await server.authenticate(request)
    leave = server.inflight.enter(info, request.query, user)
    try:
        await server.authorize(request, user, info)
        if not info.is_resource:
            return await _non_resource(server, request, info.verb)
        res = server.resources.lookup(info.api_group, info.api_version, info.resource)
        if res is None or not _routed(res, info, path):
            raise StatusError(404, "NotFound", "the server could not find the requested resource", {})
        return await server.resource_handler.handle(request, info, res, user)
    finally:
        if leave is not None:
            leave()


def _routed(res: Any, info: Any, path: str) -> bool:
    """Whether upstream serves this path at all: a cluster-scoped resource has no route under a namespace
    (a Namespace's own path, /api/v1/namespaces/NAME[/sub], names itself as its namespace)."""
    if res.namespaced or not info.namespace:
        return True
    return res.kind == "Namespace" and not res.group and info.name == info.namespace and \
        path.count("/namespaces/") == 1


async def _non_resource(server: ApiServer, request: web.Request, verb: str) -> web.StreamResponse:
    path = request.path.rstrip("/") or "/"
    if request.method not in ("GET", "HEAD"):
        raise errors.method_not_allowed()
    for name in HEALTH:
        if path == name or path.startswith(name + "/"):
            return await system.health(server, request, name)
    if path == "/version":
        return system.version(server)
    if path.startswith("/openapi/"):
        return system.openapi(server, request)
    if path.startswith("/api"):
        response = system.discovery(server, request)
        if response is not None:
            return response
    if path == "/":
        return web.json_response({"paths": sorted(server.root_paths())})
    raise StatusError(404, "NotFound", "the server could not find the requested resource", {})
