"""The controller manager: starts a set of controllers on one client and stops them together."""

from __future__ import annotations

import asyncio
import logging

from .builtin.namespace import NamespaceController
from .client import ApiClient
from .reconciler import Controller

log = logging.getLogger("mini-kube.manager")

BUILTIN = (NamespaceController,)


class Manager:
    """Runs controllers that talk to the API server only through `client`."""

    def __init__(self, client: ApiClient, controllers: list[Controller] | None = None) -> None:
        self.client = client
        self.controllers = controllers if controllers is not None else [c(client) for c in BUILTIN]

    async def start(self) -> None:
        await asyncio.gather(*(c.start() for c in self.controllers))

    async def stop(self) -> None:
        await asyncio.gather(*(c.stop() for c in self.controllers), return_exceptions=True)
        await self.client.close()
