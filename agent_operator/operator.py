"""The operator process: the Agent controller under a Manager (optionally leader-elected on the Lease
`agent-operator`, so of several replicas only one acts) and an HTTP status endpoint:

- `/healthz`: the process runs; `/readyz`: its caches are synced (a standby is ready too);
- `/status`: JSON with the identity, whether it leads, and the controller's counters.
"""

from __future__ import annotations

import os
import socket
from typing import Any

from mini_kube.client import ApiClient
from mini_kube.controllers.manager import Manager

from .api import LEASE_NAME
from .controller import AgentController


def identity() -> str:
    """This replica's name in the Lease: the pod's name in a cluster, else host_pid."""
    return os.environ.get("POD_NAME") or f"{socket.gethostname()}_{os.getpid()}"


class Operator:
    """The Agent controller on one client; `start`, `serve_status`, `stop`."""

    def __init__(self, client: ApiClient, *, leader_elect: bool = False, lease_namespace: str = "",
                 workers: int = 0, lease_duration: float = 15.0, renew_deadline: float = 10.0,
                 retry_period: float = 2.0) -> None:
        self.identity = identity()
        options = {"agent": {"workers": workers}} if workers else {}
        self.manager = Manager(client, [], leader_elect=leader_elect, identity=self.identity,
                               lease_duration=lease_duration, renew_deadline=renew_deadline,
                               retry_period=retry_period, options=options, lease_name=LEASE_NAME,
                               lease_namespace=lease_namespace or os.environ.get("POD_NAMESPACE") or "kube-system")
        self.manager.controllers = [AgentController(client, self.manager.informers, workers=workers or None)]
        self._runner: Any = None

    @property
    def controller(self) -> AgentController:
        return self.manager.controllers[0]  # type: ignore[return-value]

    @property
    def leading(self) -> bool:
        elector = self.manager.elector
        return elector is None or elector.leading.is_set()

    def status(self) -> dict[str, Any]:
        c = self.controller
        synced = all(i.synced.is_set() for i in c.informers) and bool(c.informers)
        return {"identity": self.identity, "leader": self.leading, "synced": synced,
                "agents": len(c.agents.objects) if synced else 0, "queue": len(c.queue),
                "reconciles": c.reconciles, "writes": c.writes}

    async def start(self) -> None:
        await self.manager.start()

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
        await self.manager.stop()

    async def serve_status(self, host: str, port: int) -> int:
        """Serve /healthz, /readyz and /status on host:port (0: any free port); returns the port."""
        from aiohttp import web

        async def healthz(_: web.Request) -> web.Response:
            return web.Response(text="ok")

        async def readyz(_: web.Request) -> web.Response:
            ready = not self.leading or self.status()["synced"]
            return web.Response(text="ok") if ready else web.Response(status=503, text="informers not synced")

        async def status(_: web.Request) -> web.Response:
            return web.json_response(self.status())

        app = web.Application()
        for path, handler in (("/healthz", healthz), ("/readyz", readyz), ("/status", status)):
            app.router.add_get(path, handler)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        await web.TCPSite(self._runner, host, port).start()
        return self._runner.addresses[0][1]
