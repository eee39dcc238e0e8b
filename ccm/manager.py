"""The cloud-controller-manager: the fake cloud and its controllers (`cloud-node-controller`,
`cloud-node-lifecycle-controller`, `service-lb-controller`) on one client and one set of shared informers.

The load balancer address pool is `lb_pool` when given, else 127.A.B.100-199 from the cluster network's
ConfigMap `kube-system/mini-kube-network` (`loopbackBlock`), read when the first load balancer is made.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Protocol

from mini_kube.client import ApiClient, NotFound
from mini_kube.client.informer import SharedInformerFactory
from mini_kube.client.node_token import node_token
from mini_kube.controllers.manager import select
from mini_kube.controllers.reconciler import Controller
from mini_kube.machinery.refs import CONFIGMAPS

from .cloud import CloudError, FakeCloud, parse_pool
from .node import CloudNodeController, CloudNodeLifecycleController
from .service_lb import ServiceLBController
from .status import STATUS_PORT, serve_status

log = logging.getLogger("mini-kube.ccm")
NETWORK_CONFIGMAP = ("kube-system", "mini-kube-network")


class CloudControllerType(Protocol):
    """A cloud controller's class: a Controller that also gets the cloud."""

    def __call__(self, client: ApiClient, informers: SharedInformerFactory | None = None, *, cloud: FakeCloud,
                 **options: Any) -> Controller: ...


CONTROLLERS: dict[str, CloudControllerType] = {
    "cloud-node-controller": CloudNodeController,
    "cloud-node-lifecycle-controller": CloudNodeLifecycleController,
    "service-lb-controller": ServiceLBController,
}


async def pool_from_network(client: ApiClient) -> list[str]:
    """127.A.B.100-199 from the cluster network's ConfigMap."""
    namespace, name = NETWORK_CONFIGMAP
    try:
        config = await client.get(CONFIGMAPS, name, namespace)
    except NotFound:
        raise CloudError("no load balancer address pool: the cluster network (ConfigMap "
                         f"{namespace}/{name}) is not set up; give one with --lb-pool") from None
    block = (config.get("data") or {}).get("loopbackBlock", "")
    return parse_pool(f"{block}.100-{block}.199")


class CloudControllerManager:
    """Runs the cloud controllers against the API server, talking to it only through `client`."""

    def __init__(self, client: ApiClient, *, cloud: FakeCloud | None = None, lb_pool: str | list[str] | None = None,
                 controllers: str = "*", health_interval: float = 1.0, monitor_period: float = 5.0,
                 status_port: int | None = STATUS_PORT) -> None:
        self.client = client
        self.status_port = status_port  # None: no status endpoint
        self.status_address: tuple[str, int] | None = None  # where it listens, once it does
        self._status: Any = None
        self._status_task: asyncio.Task[None] | None = None
        pool = parse_pool(lb_pool) if isinstance(lb_pool, str) else list(lb_pool or [])
        self.cloud = cloud or FakeCloud(pool, health_interval=health_interval)
        self.informers = SharedInformerFactory(client)
        options: dict[str, dict[str, Any]] = {
            "cloud-node-lifecycle-controller": {"monitor_period": monitor_period},
            "service-lb-controller": {"pool_source": lambda: pool_from_network(client)},
        }
        self.names = select(CONTROLLERS, controllers)
        self.controllers = [CONTROLLERS[name](client, self.informers, cloud=self.cloud, **options.get(name, {}))
                            for name in self.names]

    async def start(self) -> None:
        await asyncio.gather(*(c.start() for c in self.controllers))
        if self.status_port is not None:
            self._status_task = asyncio.get_running_loop().create_task(self._serve_status(), name="ccm-status")

    async def _serve_status(self) -> None:
        """Serve the status endpoint at <block>.1 once the address pool (hence the block) is known."""
        pause = 0.5
        while not self.cloud.pool:
            try:
                self.cloud.pool = await pool_from_network(self.client)
            except Exception as exc:  # noqa: BLE001 - not set up yet
                log.debug("ccm status: %s", exc)
                await asyncio.sleep(pause)
                pause = min(pause * 2, 10.0)
        host = self.cloud.pool[0].rsplit(".", 1)[0] + ".1"
        try:
            token = await node_token(self.client, create=True)
            self._status = await serve_status(self.cloud, host, self.status_port or 0, token)
            self.status_address = (host, self._status.addresses[0][1])
        except OSError as exc:
            log.warning("cloud-controller-manager: cannot serve its status on %s:%s: %s", host, self.status_port, exc)

    async def stop(self) -> None:
        if self._status_task is not None:
            self._status_task.cancel()
            await asyncio.gather(self._status_task, return_exceptions=True)
        if self._status is not None:
            await self._status.cleanup()
        await asyncio.gather(*(c.stop() for c in self.controllers), return_exceptions=True)
        await self.informers.stop()
        await self.cloud.close()
        await self.client.close()

