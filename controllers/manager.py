"""The controller manager: the built-in controllers on one client and one set of shared informers, selected
like kube-controller-manager's `--controllers` (`*`, `name`, `-name`), optionally under leader election so
that of several managers only one acts."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
from typing import Any

from .builtin.accounts import RootCAPublisher, ServiceAccountController
from .builtin.endpoints import EndpointsController, EndpointSliceController
from .builtin.garbagecollector import GarbageCollector
from .builtin.namespace import NamespaceController
from .client import ApiClient
from .informer import SharedInformerFactory
from .leaderelection import LeaderElector
from .reconciler import Controller

log = logging.getLogger("mini-kube.manager")

CONTROLLERS: dict[str, type[Controller]] = {
    "namespace": NamespaceController,
    "garbagecollector": GarbageCollector,
    "serviceaccount": ServiceAccountController,
    "root-ca-cert-publisher": RootCAPublisher,
    "endpoint": EndpointsController,
    "endpointslice": EndpointSliceController,
}
LEASE_NAME = "kube-controller-manager"


def select(spec: str = "*") -> list[str]:
    """Controller names for a `--controllers` value: `*` (all), names, and `-name` to leave one out."""
    words = [w.strip() for w in spec.split(",") if w.strip()] or ["*"]
    unknown = [w.lstrip("-") for w in words if w != "*" and w.lstrip("-") not in CONTROLLERS]
    if unknown:
        raise ValueError(f"unknown controllers: {', '.join(unknown)} (known: {', '.join(CONTROLLERS)})")
    chosen = list(CONTROLLERS) if "*" in words else []
    chosen += [w for w in words if w in CONTROLLERS and w not in chosen]
    return [name for name in chosen if f"-{name}" not in words]


class Manager:
    """Runs controllers that talk to the API server only through `client`."""

    def __init__(self, client: ApiClient, controllers: list[Controller] | None = None, *, names: str = "*",
                 leader_elect: bool = False, identity: str = "", lease_duration: float = 15.0,
                 renew_deadline: float = 10.0, retry_period: float = 2.0) -> None:
        self.client = client
        self.informers = SharedInformerFactory(client)
        self.controllers = controllers if controllers is not None else [
            CONTROLLERS[name](client, self.informers) for name in select(names)]
        self.elector = LeaderElector(client, LEASE_NAME, identity or f"{socket.gethostname()}_{os.getpid()}",
                                     lease_duration=lease_duration, renew_deadline=renew_deadline,
                                     retry_period=retry_period) if leader_elect else None
        self._election: asyncio.Task[None] | None = None

    async def _run_controllers(self) -> None:
        await asyncio.gather(*(c.start() for c in self.controllers))

    async def start(self) -> None:
        """Start the controllers (or, with leader election, start campaigning and return)."""
        if self.elector is None:
            await self._run_controllers()
            return

        async def lead() -> None:
            await self._run_controllers()
            await asyncio.Event().wait()  # act until leadership is lost

        async def campaign() -> None:
            while True:
                await self.elector.run(lead)
                await self._stop_controllers()  # lost the lease: stop acting, then campaign again

        self._election = asyncio.create_task(campaign(), name="leader-election")

    async def _stop_controllers(self) -> None:
        await asyncio.gather(*(c.stop() for c in self.controllers), return_exceptions=True)
        self.controllers = [type(c)(self.client, self.informers) for c in self.controllers]  # fresh for a new term

    async def stop(self) -> None:
        if self._election is not None:
            self._election.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._election
        await asyncio.gather(*(c.stop() for c in self.controllers), return_exceptions=True)
        await self.informers.stop()
        await self.client.close()

    def describe(self) -> dict[str, Any]:
        return {"controllers": [c.name for c in self.controllers], "leader": bool(self.elector and
                                                                                  self.elector.leading.is_set())}
