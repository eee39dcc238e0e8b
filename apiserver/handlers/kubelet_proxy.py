"""Reaching a node's kubelet, as upstream's API server does: `pods/log` (HTTP, followed as it streams, or over a
WebSocket: http/wsstream.py),
`pods/exec|attach|portforward` (WebSocket, relayed frame for frame with the subprotocol the kubelet chose; exec and
attach over SPDY/3.1 are translated to it, handlers/spdy_exec.py),
`nodes/proxy`, and `pods/proxy` / `services/proxy` (HTTP through the kubelet of the pod's node, since the API
server is not on the Pod network). Where a kubelet is and how it is
authenticated to: `egress`."""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any
from urllib.parse import quote

import aiohttp
from aiohttp import web

from .. import errors
from ..egress import Kubelet
from ..http import wsstream
from . import spdy_exec
from .proxy_links import ProxyLinks

HOP_HEADERS = {"connection", "keep-alive", "transfer-encoding", "upgrade", "content-length", "host", "authorization",
               "proxy-authorization", "te", "trailer", "content-encoding"}
STREAM_QUERY = ("command", "container", "stdin", "stdout", "stderr", "tty", "ports")
STATUS_PROTOCOLS = ("v5.channel.k8s.io", "v4.channel.k8s.io")  # exec and attach: a Status on the error channel
ERROR_CHANNEL = b"\x03"
LOG_QUERY = ("follow", "previous", "sinceSeconds", "sinceTime", "timestamps", "tailLines", "limitBytes")


def _query(request: web.Request, keys: tuple[str, ...]) -> list[tuple[str, str]]:
    return [(k, v) for k, v in request.query.items() if k in keys]


class KubeletClient:
    """The API server's one client for every kubelet (made on first use): connections pooled and kept alive;
    its owner closes it when the server stops."""

    def __init__(self) -> None:
        self._session: aiohttp.ClientSession | None = None

    def session(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=None, sock_connect=10))
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()


async def logs(client: KubeletClient, kubelet: Kubelet, request: web.Request, namespace: str, pod: str,
               container: str) -> web.StreamResponse:
    url = f"{kubelet.url}/containerLogs/{quote(namespace)}/{quote(pod)}/{quote(container)}"
    try:
        async with client.session().get(url, params=_query(request, LOG_QUERY), headers=kubelet.headers) as answer:
            if answer.status != 200:
                text = (await answer.text()).strip()
                raise errors.StatusError(answer.status if answer.status < 500 else 500,
                                         "BadRequest" if answer.status == 400 else "NotFound" if answer.status == 404
                                         else "InternalError", text, {})
            if wsstream.is_websocket_request(request):
                return await wsstream.send_stream(request, answer.content.iter_any())
            response = web.StreamResponse(headers={"Content-Type": "text/plain"})
            await response.prepare(request)
            async for chunk in answer.content.iter_any():
                await response.write(chunk)
            return response
    except aiohttp.ClientError as exc:
        raise errors.StatusError(503, "ServiceUnavailable", f"error dialing backend: {exc}", {}) from None


async def stream(client: KubeletClient, kubelet: Kubelet, request: web.Request, path: str) -> web.StreamResponse:
    """Relay a WebSocket (exec, attach, portforward) to the kubelet; exec and attach also over SPDY/3.1."""
    if spdy_exec.is_spdy_upgrade(request) and not path.startswith("/portForward/"):
        return await spdy_exec.relay(client.session(), f"{kubelet.url}{path}", _query(request, STREAM_QUERY),
                                     kubelet.headers, request)
    if request.headers.get("Upgrade", "").lower() != "websocket":
        if request.headers.get("Upgrade"):
            raise errors.bad_request(f"unsupported upgrade {request.headers['Upgrade']!r}: mini-kube streams "
                                     "port-forward over WebSocket (kubectl 1.31 and newer)")
        raise errors.bad_request("Upgrade request required")
    offered = [p.strip() for p in request.headers.get("Sec-WebSocket-Protocol", "").split(",") if p.strip()]
    status_protocols = [] if path.startswith("/portForward/") else offered  # exec and attach report on channel 3
    session = client.session()
    upstream: aiohttp.ClientWebSocketResponse | None = None
    try:
        try:
            upstream = await session.ws_connect(f"{kubelet.url}{path}", params=_query(request, STREAM_QUERY),
                                                protocols=offered, headers=kubelet.headers, max_msg_size=16 << 20,
                                                autoping=True)
        except aiohttp.WSServerHandshakeError as exc:
            return await _fail(request, status_protocols, f"unable to upgrade connection: {exc.status} {exc.message}",
                               errors.StatusError(exc.status if exc.status < 500 else 500, "BadRequest",
                                                  exc.message, {}))
        except aiohttp.ClientError as exc:
            cause = f"error dialing backend: {exc}"
            return await _fail(request, status_protocols, cause,
                               errors.StatusError(503, "ServiceUnavailable", cause, {}))
        chosen = upstream.protocol
        downstream = web.WebSocketResponse(protocols=[chosen] if chosen else (), max_msg_size=16 << 20)
        await downstream.prepare(request)

        async def pipe(src: Any, dst: Any) -> None:
            async for message in src:
                if message.type == aiohttp.WSMsgType.BINARY:
                    await dst.send_bytes(message.data)
                elif message.type == aiohttp.WSMsgType.TEXT:
                    await dst.send_str(message.data)
                else:
                    break
            await dst.close()

        tasks = [asyncio.create_task(pipe(upstream, downstream)), asyncio.create_task(pipe(downstream, upstream))]
        _, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.gather(*pending, return_exceptions=True), 2)
        for task in pending:
            task.cancel()
        return downstream
    finally:
        if upstream is not None:
            await upstream.close()


async def _fail(request: web.Request, offered: list[str], cause: str,
                refusal: errors.StatusError) -> web.StreamResponse:
    """The kubelet could not be reached: as upstream's stream translator, the client's WebSocket is accepted and
    the cause sent as an InternalError Status on the error channel (v4/v5), which the client shows; an answer
    refusing the upgrade would make kubectl retry over SPDY and show only that SPDY is not spoken here. Other
    protocols (port-forward) get `refusal`."""
    protocol = next((p for p in offered if p in STATUS_PROTOCOLS), None)
    if protocol is None:
        raise refusal
    message = f"Internal error occurred: {cause}"
    status = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
              "reason": "InternalError", "details": {"causes": [{"message": cause}]}, "code": 500}
    downstream = web.WebSocketResponse(protocols=[protocol])
    await downstream.prepare(request)
    await downstream.send_bytes(ERROR_CHANNEL + json.dumps(status).encode())
    await downstream.close()
    return downstream


async def http(client: KubeletClient, kubelet: Kubelet, request: web.Request, path: str,
               links: ProxyLinks | None = None, backend_path: str = "") -> web.Response:
    """Relay one HTTP request (nodes/proxy, pods/proxy, services/proxy); with `links`, as upstream's proxy
    transport: X-Forwarded-Uri for `backend_path`, the backend's links to itself rewritten, CORS headers gone."""
    headers = {k: v for k, v in request.headers.items() if k.lower() not in HOP_HEADERS}
    if links is not None:
        headers["X-Forwarded-Uri"] = links.forwarded_uri(backend_path)
    headers.update(kubelet.headers)
    body = await request.read()
    try:
        async with client.session().request(
                request.method, f"{kubelet.url}{path}", params=list(request.query.items()), headers=headers,
                data=body or None, allow_redirects=False) as answer:
            data = await answer.read()
            out = {k: v for k, v in answer.headers.items() if k.lower() not in HOP_HEADERS}
            if links is not None:
                data = links.body(out, data)
                out = links.headers(out)
            return web.Response(status=answer.status, body=data, headers=out)
    except aiohttp.ClientError as exc:
        raise errors.StatusError(503, "ServiceUnavailable", f"error dialing backend: {exc}", {}) from None
