"""What resources the server serves, read from aggregated discovery (one request per API prefix)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from .rest import ApiClient, ApiError, NotFound, ResourceRef

log = logging.getLogger("mini-kube.discovery")
Served = list[tuple[ResourceRef, list[str], str]]

AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"


async def served_resources(client: ApiClient) -> list[tuple[ResourceRef, list[str], str]]:
    """(resource, verbs, kind) for the preferred version of every group."""
    found: list[tuple[ResourceRef, list[str], str]] = []
    for prefix in ("/api", "/apis"):
        doc = await client.request("GET", prefix, accept=AGGREGATED)
        for group in doc.get("items") or ():
            name = (group.get("metadata") or {}).get("name", "")
            versions = group.get("versions") or []
            if not versions:
                continue
            preferred = versions[0]
            for res in preferred.get("resources") or ():
                ref = ResourceRef(name, preferred["version"], res["resource"], res.get("scope") == "Namespaced")
                kind = (res.get("responseKind") or {}).get("kind", "")
                found.append((ref, list(res.get("verbs") or ()), kind))
    return found


async def namespaced_resources(client: ApiClient) -> list[ResourceRef]:
    """Namespaced resources that can be listed and deleted as a collection."""
    return [ref for ref, verbs, _ in await served_resources(client)
            if ref.namespaced and "deletecollection" in verbs and "list" in verbs]


async def group_version_resources(client: ApiClient, api_version: str) -> list[dict[str, Any]]:
    """The APIResource entries `api_version` serves (none when it is not served)."""
    path = f"/apis/{api_version}" if "/" in api_version else f"/api/{api_version}"
    try:
        doc = await client.request("GET", path)
    except NotFound:
        return []
    return list(doc.get("resources") or ())


class Rediscovery:
    """Discovery that a controller repeats when the served resources may have changed (CRDs): `schedule()`
    coalesces requests into one run `delay` seconds later, a failed run schedules itself again, and each
    successful run hands what is served to `found`."""

    def __init__(self, client: ApiClient, found: Callable[[Served], None], *, delay: float = 0.5,
                 name: str = "discovery") -> None:
        self.client, self.found, self.delay, self.name = client, found, delay, name
        self._timer: asyncio.TimerHandle | None = None

    def schedule(self) -> None:
        if self._timer is None:
            loop = asyncio.get_running_loop()
            self._timer = loop.call_later(self.delay, lambda: loop.create_task(self.run()))

    async def run(self) -> None:
        self._timer = None
        try:
            served = await served_resources(self.client)
        except (ApiError, OSError) as exc:
            log.debug("%s discovery failed: %s", self.name, exc)
            self.schedule()
            return
        self.found(served)

    def cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
