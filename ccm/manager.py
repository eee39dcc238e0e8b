"""The cloud-controller-manager: the fake cloud and its controllers (`cloud-node-controller`,
`cloud-node-lifecycle-controller`, `service-lb-controller`) on one client and one set of shared informers.

The load balancer address pool is `lb_pool` when given, else 127.A.B.100-199 from the cluster network's
ConfigMap `kube-system/mini-kube-network` (`loopbackBlock`), read when the first load balancer is made.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from mini_kube.controllers.client import ApiClient, NotFound, ResourceRef
from mini_kube.controllers.informer import SharedInformerFactory
from mini_kube.controllers.reconciler import Controller

from .cloud import CloudError, FakeCloud, parse_pool
from .node import CloudNodeController, CloudNodeLifecycleController
from .service_lb import ServiceLBController

log = logging.getLogger("mini-kube.ccm")
CONFIGMAPS = ResourceRef("", "v1", "configmaps")
NETWORK_CONFIGMAP = ("kube-system", "mini-kube-network")
CONTROLLERS: dict[str, type[Controller]] = {
    "cloud-node-controller": CloudNodeController,
    "cloud-node-lifecycle-controller": CloudNodeLifecycleController,
    "service-lb-controller": ServiceLBController,
}


def select(spec: str = "*") -> list[str]:
    """Controller names for a `--controllers` value: `*`, names, `-name`."""
    words = [w.strip() for w in spec.split(",") if w.strip()] or ["*"]
    unknown = [w.lstrip("-") for w in words if w != "*" and w.lstrip("-") not in CONTROLLERS]
    if unknown:
        raise ValueError(f"unknown controllers: {', '.join(unknown)} (known: {', '.join(CONTROLLERS)})")
    chosen = list(CONTROLLERS) if "*" in words else [w for w in words if w in CONTROLLERS]
    return [name for name in chosen if f"-{name}" not in words]


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
                 controllers: str = "*", health_interval: float = 1.0, monitor_period: float = 5.0) -> None:
        self.client = client
        pool = parse_pool(lb_pool) if isinstance(lb_pool, str) else list(lb_pool or [])
        self.cloud = cloud or FakeCloud(pool, health_interval=health_interval)
        self.informers = SharedInformerFactory(client)
        options: dict[str, dict[str, Any]] = {
            "cloud-node-lifecycle-controller": {"monitor_period": monitor_period},
            "service-lb-controller": {"pool_source": lambda: pool_from_network(client)},
        }
        self.names = select(controllers)
        self.controllers = [CONTROLLERS[name](client, self.informers, cloud=self.cloud, **options.get(name, {}))
                            for name in self.names]

    async def start(self) -> None:
        await asyncio.gather(*(c.start() for c in self.controllers))

    async def stop(self) -> None:
        await asyncio.gather(*(c.stop() for c in self.controllers), return_exceptions=True)
        await self.informers.stop()
        await self.cloud.close()
        await self.client.close()

