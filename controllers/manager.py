"""The controller manager of the runtime: controllers on one client and one set of shared informers, chosen from
a table like kube-controller-manager's `--controllers` (`*`, `name`, `-name`), optionally under leader election
so that of several managers only one acts. The built-in table is `kube_controller_manager`."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
from collections.abc import Mapping
from typing import Any

from mini_kube.client import ApiClient
from mini_kube.client.informer import SharedInformerFactory
from mini_kube.client.leaderelection import LeaderElector

from .reconciler import Controller

log = logging.getLogger("mini-kube.manager")

ControllerTable = Mapping[str, type[Controller]]
LEASE_NAME = "kube-controller-manager"


def select(table: Mapping[str, object], spec: str = "*") -> list[str]:
    """Controller names of `table` for a `--controllers` value: `*` (all), names, and `-name` to leave one out."""
    words = [w.strip() for w in spec.split(",") if w.strip()] or ["*"]
    unknown = [w.lstrip("-") for w in words if w != "*" and w.lstrip("-") not in table]
    if unknown:
        raise ValueError(f"unknown controllers: {', '.join(unknown)} (known: {', '.join(table)})")
    chosen = list(table) if "*" in words else []
    chosen += [w for w in words if w in table and w not in chosen]
    return [name for name in chosen if f"-{name}" not in words]


class Manager:
    """Runs controllers that talk to the API server only through `client`: those given, or those of `table`
    that `names` selects."""

    def __init__(self, client: ApiClient, controllers: list[Controller] | None = None, *,
                 table: ControllerTable | None = None, names: str = "*",
                 leader_elect: bool = False, identity: str = "", lease_duration: float = 15.0,
                 renew_deadline: float = 10.0, retry_period: float = 2.0,
                 options: dict[str, dict[str, Any]] | None = None, lease_name: str = LEASE_NAME,
                 lease_namespace: str = "kube-system") -> None:
        self.client = client
        self.informers = SharedInformerFactory(client)
        self.options = options or {}
        self.table: ControllerTable = table or {}
        self.controllers = controllers if controllers is not None else [self._make(name) for name in select(self.table, names)]
        self.elector = LeaderElector(client, lease_name, identity or f"{socket.gethostname()}_{os.getpid()}",
                                     namespace=lease_namespace, lease_duration=lease_duration,
                                     renew_deadline=renew_deadline, retry_period=retry_period) if leader_elect else None
        self._election: asyncio.Task[None] | None = None
        self._health: Any = None

    def _make(self, name: str) -> Controller:
        return self.table[name](self.client, self.informers, **self.options.get(name, {}))

    async def _run_controllers(self) -> None:
        await asyncio.gather(*(c.start() for c in self.controllers))

    async def start(self) -> None:
        """Start the controllers (or, with leader election, start campaigning and return)."""
        if self.elector is None:
            await self._run_controllers()
            return
        self._election = self.elector.campaign(self._run_controllers, self._stop_controllers, "leader-election")

    async def _stop_controllers(self) -> None:
        await asyncio.gather(*(c.stop() for c in self.controllers), return_exceptions=True)
        self.controllers = [type(c)(self.client, self.informers, **self.options.get(c.name, {}))
                            for c in self.controllers]  # fresh ones for a next term

    async def stop(self) -> None:
        if self._election is not None:
            self._election.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._election
        await asyncio.gather(*(c.stop() for c in self.controllers), return_exceptions=True)
        await self.informers.stop()
        if self._health is not None:
            await self._health.cleanup()
        await self.client.close()

    async def serve_health(self, host: str, port: int) -> int:
        """/healthz (the manager runs) and /readyz (its controllers' caches are synced; with leader election,
        a standby is ready too) on host:port; returns the port."""
        from aiohttp import web

        def ready() -> bool:
            if self.elector is not None and not self.elector.leading.is_set():
                return True
            return all(i.synced.is_set() for c in self.controllers for i in c.informers)

        async def healthz(_: web.Request) -> web.Response:
            return web.Response(text="ok")

        async def readyz(_: web.Request) -> web.Response:
            return web.Response(text="ok") if ready() else web.Response(status=503, text="informers not synced")

        app = web.Application()
        app.router.add_get("/healthz", healthz)
        app.router.add_get("/readyz", readyz)
        self._health = web.AppRunner(app, access_log=None)
        await self._health.setup()
        site = web.TCPSite(self._health, host, port)
        await site.start()
        return self._health.addresses[0][1]

    def describe(self) -> dict[str, Any]:
        return {"controllers": [c.name for c in self.controllers], "leader": bool(self.elector and
                                                                                  self.elector.leading.is_set())}
