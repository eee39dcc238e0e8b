"""Which APIServices the aggregator serves, and their `Available` condition (upstream's
AvailableConditionController and APIServiceRegistrationController in one).

An APIService without a Service is Local (always available; its group is the server's own). One naming a
Service is checked after every change to an APIService and then periodically: the Service must exist, have a
ready endpoint, and answer its discovery document (`GET /apis/<group>/<version>`, as system:kube-aggregator
in system:masters, within 5 s). Passing, it is `Available=True` ("all checks passed") and its requests are
forwarded (proxy.py); its APIResourceList feeds discovery. Failing, it is `Available=False` with upstream's
reason (ServiceNotFound, MissingEndpoints, FailedDiscoveryCheck) and its requests are answered 503. Only the
Available condition is written; others (a user's) are left as they are."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import aiohttp
import orjson
from aiohttp import web
from mini_kube.machinery.times import now_rfc3339

from ..admission.webhook_client import CallError
from ..discovery import Discovery
from ..errors import StatusError
from ..registry.generic import Registry, WriteOptions
from .proxy import ProxyClient, ServiceRef, unavailable

log = logging.getLogger("mini-kube.aggregator")

GROUP = "apiregistration.k8s.io"
MANAGER = "kube-apiserver"
RECHECK_AVAILABLE = 30.0  # seconds between checks once every APIService passes (upstream resyncs every 30 s)
RECHECK_FAILING = 2.0  # ... while one fails
DISCOVERY_TIMEOUT = 5.0
PASSED = (True, "Passed", "all checks passed")
WATCHED_PREFIXES = ("/registry/core/services/", "/registry/core/endpoints/",
                    "/registry/discovery.k8s.io/endpointslices/")  # each key: /registry/<group>/<plural>/<ns>/...


@dataclass(frozen=True, slots=True)
class Served:
    """An APIService the aggregator forwards to, and what its last check found."""

    ref: ServiceRef
    group: str
    version: str
    group_priority: int
    version_priority: int
    available: bool
    resources: dict[str, Any] | None  # its APIResourceList, once it answered


class Aggregator:
    """Follows the APIServices: checks them, writes their Available condition, routes their requests."""

    def __init__(self, registry: Registry, discovery: Discovery, client: ProxyClient) -> None:
        self.registry = registry
        self.discovery = discovery
        self.client = client
        res = registry.resources.lookup(GROUP, "v1", "apiservices")
        assert res is not None
        self.apiservices = res
        self.served: dict[str, Served] = {}  # APIService name -> its server
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._unsubscribe: Callable[[], None] | None = None

    def start(self) -> None:
        """Check every APIService now and after every change (call once the cache is loaded)."""
        self._unsubscribe = self.registry.store.subscribe(self._on_commit)
        self._task = asyncio.get_running_loop().create_task(self._run(), name="aggregator")

    def _on_commit(self, events: list[Any]) -> None:
        """Check again after a change to an APIService, or to a Service, its Endpoints or EndpointSlices in the
        namespace of one (upstream's controller follows all three)."""
        prefix = self.apiservices.key_prefix
        namespaces = {served.ref.namespace for served in self.served.values()}
        for event in events:
            key = event.kv.key
            if key.startswith(prefix) or (namespaces and key.startswith(WATCHED_PREFIXES)
                                          and key.split("/")[4] in namespaces):
                self._wake.set()
                return

    async def stop(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        await self.client.close()

    async def _run(self) -> None:
        while True:
            try:
                await self.check_all()
            except Exception:  # one round's failure must not end the checks
                log.exception("checking APIServices failed")
            delay = RECHECK_AVAILABLE if all(s.available for s in self.served.values()) else RECHECK_FAILING
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), delay)
            self._wake.clear()

    async def check_all(self) -> None:
        """Check each APIService once; then serve what passed."""
        seen = set()
        for entry in self.registry.cache.list(self.apiservices.key_prefix):
            name = (entry.obj.get("metadata") or {}).get("name", "")
            seen.add(name)
            await self._check(name, entry.obj)
        for gone in set(self.served) - seen:
            del self.served[gone]
            log.info("APIService %s deleted: no longer served", gone)
        self._publish()

    async def _check(self, name: str, apiservice: dict[str, Any]) -> None:
        spec = apiservice.get("spec") or {}
        ref = ServiceRef.of(apiservice)
        if ref is None:
            self.served.pop(name, None)
            await self._set_available(name, True, "Local", "Local APIServices are always available")
            return
        group, version = str(spec.get("group") or ""), str(spec.get("version") or "")
        if any(r.group == group and r.version == version for r in self.registry.resources.all()):
            self.served.pop(name, None)  # the server's own API: never handed to another
            return
        (ok, reason, message), resources = await self._probe(ref, group, version)
        before = self.served.get(name)
        self.served[name] = Served(ref, group, version, int(spec.get("groupPriorityMinimum") or 0),
                                   int(spec.get("versionPriority") or 0), ok, resources)
        if before is None or before.available != ok:
            log.info("APIService %s: %s (%s: %s)", name, "available" if ok else "not available", reason, message)
        await self._set_available(name, ok, reason, message)

    async def _probe(self, ref: ServiceRef, group: str, version: str
                     ) -> tuple[tuple[bool, str, str], dict[str, Any] | None]:
        objects = self.client.objects
        service = objects.object("", "v1", "services", ref.namespace, ref.name)
        if service is None:
            return (False, "ServiceNotFound", f'service/{ref.name} in "{ref.namespace}" is not present'), None
        try:
            target = self.client.target(ref)
        except CallError as exc:
            if "no endpoints available" in str(exc):
                port = next((p.get("name") or "" for p in (service.get("spec") or {}).get("ports") or ()
                             if p.get("port") == ref.port), "")
                return (False, "MissingEndpoints", f'endpoints for service/{ref.name} in "{ref.namespace}" have '
                                                   f'no addresses with port name "{port}"'), None
            return (False, "FailedDiscoveryCheck", str(exc).removeprefix("failed to call webhook: ")), None
        path = f"/apis/{group}/{version}"
        url = f"https://{urlsplit(target.url).netloc}{path}"
        headers = {"Accept": "application/json", "X-Remote-User": "system:kube-aggregator",
                   "X-Remote-Group": "system:masters"}
        try:
            async with self.client.request(ref, target, "GET", path, headers, None,
                                           aiohttp.ClientTimeout(total=DISCOVERY_TIMEOUT)) as answer:
                status, body = answer.status, await answer.read()
        except (TimeoutError, aiohttp.ClientError, OSError) as exc:
            return (False, "FailedDiscoveryCheck", f"failing or missing response from {url}: "
                                                   f"{exc or type(exc).__name__}"), None
        if not 200 <= status < 300:
            return (False, "FailedDiscoveryCheck", f"failing or missing response from {url}: bad status from "
                                                   f"{url}: {status}"), None
        try:
            doc = orjson.loads(body)
        except orjson.JSONDecodeError:
            doc = None
        return PASSED, doc if isinstance(doc, dict) and doc.get("kind") == "APIResourceList" else None

    async def _set_available(self, name: str, ok: bool, reason: str, message: str) -> None:
        """Write the Available condition when it changed (its transition time when its status did)."""
        status = "True" if ok else "False"
        entry = self.registry.find(self.apiservices, None, name)
        if entry is None:
            return
        current = next((c for c in (entry.obj.get("status") or {}).get("conditions") or ()
                        if c.get("type") == "Available"), None)
        if current is not None and (current.get("status"), current.get("reason"), current.get("message")) == \
                (status, reason, message):
            return

        def mutate(obj: dict[str, Any]) -> dict[str, Any]:
            conditions = list((obj.get("status") or {}).get("conditions") or [])
            old = next((c for c in conditions if c.get("type") == "Available"), None)
            new = {"type": "Available", "status": status,
                   "lastTransitionTime": old.get("lastTransitionTime") if old and old.get("status") == status
                   else now_rfc3339(), "reason": reason, "message": message}
            if old is None:
                conditions.append(new)
            else:
                conditions[conditions.index(old)] = new
            obj.setdefault("status", {})["conditions"] = conditions
            return obj

        try:
            await self.registry.guaranteed_update(self.apiservices, None, name, mutate,
                                                  WriteOptions(field_manager=MANAGER, subresource="status"))
        except StatusError as exc:
            if exc.code != 404:
                raise

    def _publish(self) -> None:
        """Discovery's aggregated groups: each group's versions by versionPriority, highest first."""
        groups: dict[str, list[tuple[int, str, dict[str, Any] | None]]] = {}
        for served in sorted(self.served.values(), key=lambda s: -s.group_priority):
            groups.setdefault(served.group, []).append((served.version_priority, served.version, served.resources))
        self.discovery.set_remote({group: [(v, doc) for _, v, doc in sorted(versions, key=lambda x: -x[0])]
                                   for group, versions in groups.items()})

    def route(self, path: str) -> Served | None:
        """The APIService serving `path` (`/apis/<group>/<version>...`), or None."""
        parts = path.split("/", 4)
        if len(parts) < 4 or parts[1] != "apis":
            return None
        return next((s for s in self.served.values() if s.group == parts[2] and s.version == parts[3]), None)

    async def forward(self, request: web.Request, served: Served, user: Any) -> web.StreamResponse:
        """Send the request on (503 while its APIService is not available)."""
        if not served.available:
            raise unavailable()
        return await self.client.forward(request, served.ref, user)
