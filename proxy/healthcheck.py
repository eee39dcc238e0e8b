"""The HTTP health checks kube-proxy serves to load balancers, as upstream's pkg/proxy/healthcheck does:

- per Service with `externalTrafficPolicy: Local`, on its `healthCheckNodePort`: any path answers 200 when this
  node has ready endpoints of the Service (and the proxy is healthy), else 503, with the count in the body and
  in `X-Load-Balancing-Endpoint-Weight`;
- the proxy's own `/healthz` and `/livez` (port 10256 upstream): 200 once it has programmed its first sync;
  and (mini-kube's own) `/connections`: the latest forwarded connections as JSON, for tracing a request's hops,
  served only to requests bearing the control plane's node token (client/node_token.py)."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import socket
from collections.abc import Callable
from typing import Any

from aiohttp import web
from mini_kube.client.node_token import bears


def service_payload(namespace: str, name: str, local_endpoints: int, proxy_healthy: bool) -> str:
    """The body upstream writes (tab-indented JSON)."""
    return json.dumps({"service": {"namespace": namespace, "name": name}, "localEndpoints": local_endpoints,
                       "serviceProxyHealthy": proxy_healthy}, indent="\t")


def _json(status: int, body: str, **headers: str) -> web.Response:
    return web.Response(status=status, text=body, content_type="application/json",
                        headers={"X-Content-Type-Options": "nosniff", **headers})


class HttpListener:
    """A small HTTP server on one bound socket, answering every request with `handler`."""

    def __init__(self, sock: socket.socket, handler: Callable[[web.BaseRequest], web.StreamResponse]) -> None:
        self.sock = sock
        self.address: tuple[str, int] = sock.getsockname()[:2]

        async def handle(request: web.BaseRequest) -> web.StreamResponse:
            return handler(request)

        self._server = web.Server(handle, access_log=None)
        self._listener: asyncio.base_events.Server | None = None

    async def start(self) -> None:
        self._listener = await asyncio.get_running_loop().create_server(self._server, sock=self.sock)

    async def close(self) -> None:
        if self._listener is not None:
            self._listener.close()
        else:
            self.sock.close()
        await self._server.shutdown(0.1)


class ServiceHealth:
    """The health check of one Service: `local_endpoints` is kept current by the proxy's sync."""

    def __init__(self, namespace: str, name: str, proxy_healthy: Callable[[], bool]) -> None:
        self.namespace, self.name = namespace, name
        self.local_endpoints = 0
        self.proxy_healthy = proxy_healthy
        self.listener: HttpListener | None = None
        self.port = 0

    def answer(self, _request: web.BaseRequest) -> web.Response:
        healthy = self.proxy_healthy()
        status = 200 if self.local_endpoints and healthy else 503
        return _json(status, service_payload(self.namespace, self.name, self.local_endpoints, healthy),
                     **{"X-Load-Balancing-Endpoint-Weight": str(self.local_endpoints)})


def _stamp(value: dt.datetime | None) -> str:
    return (value or dt.datetime.now(dt.UTC)).isoformat(timespec="microseconds").replace("+00:00", "Z")


def proxy_healthz(last_synced: Callable[[], dt.datetime | None],
                  records: Callable[[], list[dict[str, Any]]] = list,
                  token: Callable[[], str | None] = lambda: None) -> Callable[[web.BaseRequest], web.Response]:
    """kube-proxy's own /healthz and /livez: 200 after the first sync, with the times as upstream reports;
    /connections: `records()`, only to a request bearing the control plane's node token (to anyone else the port
    serves health only, as upstream's, and /connections is 404 like any other path)."""
    def answer(request: web.BaseRequest) -> web.Response:
        if request.path == "/connections" and bears(request.headers.get("Authorization"), token()):
            return _json(200, json.dumps(records()))
        if request.path not in ("/healthz", "/livez"):
            return web.Response(status=404, text="404 page not found\n")
        synced = last_synced()
        body = json.dumps({"lastUpdated": _stamp(synced), "currentTime": _stamp(None), "nodeEligible": True})
        return _json(200 if synced is not None else 503, body)
    return answer
