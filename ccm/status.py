"""The cloud-controller-manager's own HTTP endpoint (upstream's port 10258), on the cluster's loopback block at
127.A.B.1: `/healthz` to anyone, and the fake cloud's view for tools and tracing, only to requests bearing the
control plane's node token (client/node_token.py; 401 otherwise): `/loadbalancers` (each with its address,
Service, ports, backends and their health) and `/connections` (the latest connections its load balancers
relayed: client, listener, backend, and the load balancer's own address towards the backend)."""

from __future__ import annotations

from typing import Any

import orjson
from aiohttp import web
from mini_kube.client.node_token import bears

from .cloud import FakeCloud

STATUS_PORT = 10258


def _json(body: Any) -> web.Response:
    return web.Response(body=orjson.dumps(body), content_type="application/json")


def load_balancers(cloud: FakeCloud) -> list[dict[str, Any]]:
    return [{"name": lb.name, "ip": lb.ip, "service": lb.spec.service,
             "ports": [{"protocol": p.protocol, "port": p.port, "nodePort": p.node_port} for p in lb.spec.ports],
             "healthCheckNodePort": lb.spec.health_check_node_port or None,
             "backends": [{"node": f"{node}:{port.node_port}", "protocol": port.protocol,
                           "healthy": (node, port.node_port) in lb.healthy}
                          for port in lb.spec.ports for node in lb.spec.nodes]}
            for lb in cloud.load_balancers.values()]


UNAUTHORIZED = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": "Unauthorized", "reason": "Unauthorized", "code": 401}


async def serve_status(cloud: FakeCloud, host: str, port: int, token: str | None) -> web.AppRunner:
    """Serve the status on host:port; the records only to requests bearing `token` (to none when None)."""
    async def healthz(_: web.Request) -> web.Response:
        return web.Response(text="ok")

    async def lbs(request: web.Request) -> web.Response:
        if not bears(request.headers.get("Authorization"), token):
            return web.Response(status=401, body=orjson.dumps(UNAUTHORIZED), content_type="application/json")
        return _json(load_balancers(cloud))

    async def connections(request: web.Request) -> web.Response:
        if not bears(request.headers.get("Authorization"), token):
            return web.Response(status=401, body=orjson.dumps(UNAUTHORIZED), content_type="application/json")
        return _json(cloud.trace.records())

    app = web.Application()
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/loadbalancers", lbs)
    app.router.add_get("/connections", connections)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, host, port, reuse_address=True).start()
    return runner
