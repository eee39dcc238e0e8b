"""The handler chain every request goes through (upstream's DefaultBuildHandlerChain): request info ->
authentication -> in-flight limit -> authorization -> the handler, every error turned into a Status, the answer
audited.

Routing is data-driven: the request info names a group/version/resource, looked up in the resource table
(which CRDs change at run time), so no routes are registered per resource.
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Callable
from dataclasses import dataclass

from aiohttp import web

from . import errors
from .aggregator.availability import Aggregator
from .auth.loopback import via_unix_socket
from .auth.security import Security
from .discovery import Discovery
from .errors import StatusError
from .handlers import oidc, system
from .handlers.resource import ResourceHandler
from .http.fairness import ComponentSeats
from .http.inflight import InflightLimiter
from .http.responses import status_response
from .ratelog import RATE_LIMITED
from .requestinfo import REQUEST_INFO_KEY, RequestInfo, parse_request_info
from .resources import ResourceRegistry, ResourceType
from .store_health import StoreHealth

log = logging.getLogger("mini-kube.apiserver")

HEALTH = ("/healthz", "/livez", "/readyz")
NOT_FOUND = "the server could not find the requested resource"


@dataclass(frozen=True)
class HandlerChain:
    """The whole chain for one request; an aiohttp handler."""

    security: Security
    inflight: InflightLimiter
    resources: ResourceRegistry
    discovery: Discovery
    resource_handler: ResourceHandler
    store_health: StoreHealth  # /livez and /readyz's etcd checks
    ready: Callable[[], bool]  # whether the server serves (readyz's shutdown check)
    seats: ComponentSeats  # the in-process components' requests take turns; other clients' never wait for them
    aggregator: Aggregator | None = None  # APIServices served by extension API servers

    async def __call__(self, request: web.Request) -> web.StreamResponse:
        """Answer one request (errors as Status objects) and audit the answer."""
        response = await self._answer(request)
        if self.security.auditor is not None:
            self.security.auditor.record_response(request, response.status)
        return response

    async def _answer(self, request: web.Request) -> web.StreamResponse:
        try:
            return await self._dispatch(request)
        except StatusError as exc:
            return status_response(exc)
        except web.HTTPException as exc:
            if exc.status < 400:
                raise
            if exc.status == 413:  # aiohttp's own limit, e.g. a gzip body that inflates past 3 MiB
                return status_response(errors.too_large())
            return status_response(StatusError(exc.status, exc.reason.replace(" ", ""), exc.text or exc.reason,
                                               {}))
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

    async def _dispatch(self, request: web.Request) -> web.StreamResponse:
        path = request.path
        info = parse_request_info(request.method, path, request.query)
        request[REQUEST_INFO_KEY] = info
        # a request forwarded to an extension API server waits for that server, not for the loop: no seat
        component = via_unix_socket(request) and (self.aggregator is None or self.aggregator.route(path) is None)
        seat = await self.seats.enter(component, info, request.query)
        try:
            return await self._serve(request, info, path)
        finally:
            if seat is not None:
                seat()

    async def _serve(self, request: web.Request, info: RequestInfo, path: str) -> web.StreamResponse:
        user = await self.security.authenticate(request)
        leave = self.inflight.enter(info, request.query, user)
        try:
            await self.security.authorize(request, user, info)
            served = self.aggregator.route(path) if self.aggregator is not None else None
            if served is not None:
                return await self.aggregator.forward(request, served, user)  # type: ignore[union-attr]
            if not info.is_resource:
                return await self._non_resource(request)
            res = self.resources.lookup(info.api_group, info.api_version, info.resource)
            if res is None or not _routed(res, info, path):
                raise StatusError(404, "NotFound", NOT_FOUND, {})
            return await self.resource_handler.handle(request, info, res, user)
        finally:
            if leave is not None:
                leave()

    async def _non_resource(self, request: web.Request) -> web.StreamResponse:
        path = request.path.rstrip("/") or "/"
        if request.method not in ("GET", "HEAD"):
            raise errors.method_not_allowed()
        for name in HEALTH:
            if path == name or path.startswith(name + "/"):
                return await system.health(self.store_health, self.ready(), request, name)
        if path == "/version":
            return system.version()
        if path in oidc.PATHS and self.security.tokens is not None:
            return oidc.respond(self.security.tokens, path)
        if path.startswith("/openapi/"):
            return system.openapi(self.resources, request)
        if path.startswith("/api"):
            response = system.discovery(self.discovery, request)
            if response is not None:
                return response
        if path == "/":
            return web.json_response({"paths": system.root_paths(self.resources)})
        raise StatusError(404, "NotFound", NOT_FOUND, {})


def failure_key(exc: BaseException) -> str:
    """Where an internal error comes from (its type and innermost frame): the same failure repeated (the store
    unreachable, every request failing alike) logs its traceback once per interval, a different one at once."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    where = f"{tb.tb_frame.f_code.co_filename}:{tb.tb_lineno}" if tb is not None else ""
    return f"internal:{type(exc).__name__}:{where}"


def _routed(res: ResourceType, info: RequestInfo, path: str) -> bool:
    """Whether upstream serves this path at all: a cluster-scoped resource has no route under a namespace
    (a Namespace's own path, /api/v1/namespaces/NAME[/sub], names itself as its namespace)."""
    if res.namespaced or not info.namespace:
        return True
    return res.kind == "Namespace" and not res.group and info.name == info.namespace and \
        path.count("/namespaces/") == 1
