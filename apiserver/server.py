"""The API server: store + cache + registry + HTTP app, started and stopped as one unit."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import ipaddress
import logging
import ssl
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import web
from mini_kube.store import Store

from . import datadir
from .app import build_app
from .discovery import Discovery
from .handlers.resource import ResourceHandler
from .handlers.watch_reaper import WatchReaper
from .http import protocol
from .http.inflight import InflightLimiter
from .registry.cache import HISTORY_EVENTS, ObjectCache
from .registry.generic import Registry, WriteOptions
from .registry.kinds import builtin_resources
from .requestinfo import RequestInfo
from .resources import ResourceRegistry
from .store_health import StoreHealth

log = logging.getLogger("mini-kube.apiserver")

SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


@dataclass
class ServerConfig:
    """How to run one API server."""

    address: str = "127.0.0.1"
    port: int = 6443
    data_dir: str = ":memory:"
    insecure_http: bool = False
    token_auth_file: str | None = None
    audit_log: str | None = None
    admission_control_config_file: str | None = None  # an AdmissionConfiguration (PodSecurity's settings)
    service_cidr: str = "10.0.0.0/24"
    node_port_range: tuple[int, int] = (30000, 32767)
    watch_history: int = HISTORY_EVENTS  # recent events the cache keeps for watches from a past revision
    request_header_timeout: float = 32.0  # a connection's first request headers must arrive within this
    idle_timeout: float = 90.0  # idle kept-alive connections are closed after this
    max_requests_inflight: int = 400  # non-mutating requests being served at once (429 beyond), as upstream
    max_mutating_requests_inflight: int = 200
    etcd_servers: list[str] = field(default_factory=list)  # keep objects in etcd instead of SQLite
    etcd_prefix: str = "/registry"
    etcd_cafile: str | None = None
    etcd_certfile: str | None = None
    etcd_keyfile: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def store_path(self) -> str:
        if self.data_dir == ":memory:":
            return ":memory:"
        return str(Path(self.data_dir).expanduser() / "state.db")


@dataclass(slots=True)
class AdminUser:
    """The identity used when authentication is not configured (in-process, insecure mode)."""

    name: str = "system:admin"
    uid: str = ""
    groups: tuple[str, ...] = ("system:masters", "system:authenticated")
    extra: dict[str, list[str]] = field(default_factory=dict)

    def to_api(self) -> dict[str, Any]:
        """The `UserInfo` shape of authentication.k8s.io (SelfSubjectReview, audit, admission reviews)."""
        out: dict[str, Any] = {"username": self.name, "groups": list(self.groups)}
        if self.extra:
            out["extra"] = {k: list(v) for k, v in self.extra.items()}
        return out


class ApiServer:
    """One mini-kube API server instance."""

    def __init__(self, config: ServerConfig | None = None) -> None:
        self.config = config or ServerConfig()
        self.ready = False
        self.resources = ResourceRegistry(builtin_resources(self.config.service_cidr, self.config.node_port_range))
        self.cache = ObjectCache(self.config.watch_history)
        self.watch_reaper = WatchReaper()  # ends watches whose client has gone
        self.store: Store = None  # type: ignore[assignment]
        self.registry: Registry = None  # type: ignore[assignment]
        self.discovery = Discovery(self.resources)
        self.subresource_handlers: dict[tuple[str, str, str], Callable[..., Awaitable[web.StreamResponse]]] = {}
        self.virtual_kinds: dict[tuple[str, str], Callable[..., Awaitable[dict[str, Any]]]] = {}
        self.resource_handler: ResourceHandler = None  # type: ignore[assignment]
        self.authenticator: Any = None
        self.authorizer: Any = None
        self.ssl_context: ssl.SSLContext | None = None
        self.url = ""
        self._runner: web.AppRunner | None = None
        self._data_dir_lock: Any = None
        self.store_health = StoreHealth(lambda: self.store)  # /livez and /readyz's etcd checks
        self.inflight = InflightLimiter(self.config.max_requests_inflight,
                                        self.config.max_mutating_requests_inflight)
        self._unsubscribe: Callable[[], None] | None = None
        self.background: list[asyncio.Task[Any]] = []
        self.on_stop: list[Callable[[], Awaitable[None]]] = []
        self.bootstrap_hooks: list[Callable[[ApiServer], Awaitable[None]]] = []

    # -- lifecycle -------------------------------------------------------------------------------
    async def start(self) -> None:
        """Open the store, fill the cache, bootstrap system objects and start serving."""
        if self.config.data_dir != ":memory:" and self._data_dir_lock is None:
            self._data_dir_lock = datadir.claim(self.config.data_dir)
        if not self.config.insecure_http and self.authenticator is None:
            from .auth.install import install  # TLS, authentication, RBAC, reviews, tokens, default policy

            install(self)
        elif not self.virtual_kinds:
            from .auth.access import install_reviews

            install_reviews(self)
        self.store = await self.open_store()
        if self.config.data_dir != ":memory:":
            datadir.secure_files(self.config.data_dir)
        snapshot = await self.store.range("/")
        self.cache.load(snapshot.kvs, snapshot.revision)
        self._unsubscribe = self.store.subscribe(self.cache.apply)
        self.registry = Registry(self.store, self.cache, self.resources)
        from .registry.setup import configure

        configure(self)
        from .handlers.pod_streams import install as install_pod_streams

        install_pod_streams(self)
        from .handlers.pod_eviction import install as install_eviction

        install_eviction(self)
        from .handlers.pod_binding import install as install_pod_binding

        install_pod_binding(self)
        self.resource_handler = ResourceHandler(self)
        await self.bootstrap()
        app = build_app(self)
        asyncio.get_running_loop().set_exception_handler(protocol.loop_exception_handler)
        self._runner = protocol.GuardedRunner(app, access_log=None, handle_signals=False, shutdown_timeout=1.0,
                                              header_timeout=self.config.request_header_timeout,
                                              keepalive_timeout=self.config.idle_timeout)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.config.address, self.config.port, ssl_context=self.ssl_context,
                           reuse_address=True, backlog=1024)
        try:
            await site.start()
        except OSError as exc:
            reason = {errno.EADDRINUSE: "address already in use", errno.EADDRNOTAVAIL: "address not available",
                      errno.EACCES: "permission denied"}.get(exc.errno or 0, exc.strerror or str(exc))
            raise datadir.StartupError(f"cannot listen on {self.config.address}:{self.config.port}: {reason}") \
                from None
        port = self._runner.addresses[0][1]
        self.config.port = port
        scheme = "http" if self.ssl_context is None else "https"
        host = self.config.address if ":" not in self.config.address else f"[{self.config.address}]"
        self.url = f"{scheme}://{host}:{port}"
        self.discovery.server_address = f"{self.config.address}:{port}"
        self.ready = True

    async def open_store(self) -> Any:
        """The SQLite store in the data dir, or the etcd store when etcd servers are configured."""
        config = self.config
        if not config.etcd_servers:
            return await Store.open(config.store_path)
        from mini_kube.store.etcd_client import TlsOptions
        from mini_kube.store.etcd_store import EtcdStore

        tls = TlsOptions(config.etcd_cafile, config.etcd_certfile, config.etcd_keyfile) \
            if config.etcd_cafile or config.etcd_certfile else None
        return await EtcdStore.open(config.etcd_servers, prefix=config.etcd_prefix, tls=tls)

    async def stop(self) -> None:
        self.ready = False
        for task in self.background:
            task.cancel()
        for task in self.background:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        for hook in self.on_stop:
            await hook()
        self.cache.close_watchers()
        if self._runner is not None:
            await self._runner.cleanup()
        if self._unsubscribe is not None:
            self._unsubscribe()
        if self.store is not None:
            await self.store.close()
        if self._data_dir_lock is not None:
            self._data_dir_lock.close()  # releases the lock
            self._data_dir_lock = None

    async def bootstrap(self) -> None:
        """Create the system namespaces (and whatever configured components add) if missing."""
        ns = self.resources.lookup("", "v1", "namespaces")
        assert ns is not None
        opts = WriteOptions(field_manager="kube-apiserver")
        for name in SYSTEM_NAMESPACES:
            if self.registry.find(ns, None, name) is None:
                await self.registry.create(ns, None, {"apiVersion": "v1", "kind": "Namespace",
                                                      "metadata": {"name": name}}, opts)
        await self._bootstrap_kubernetes_service(opts)
        for hook in self.bootstrap_hooks:
            await hook(self)

    async def _bootstrap_kubernetes_service(self, opts: WriteOptions) -> None:
        """`default/kubernetes`: the API server's own Service, on the first address of the service range."""
        svc = self.resources.lookup("", "v1", "services")
        assert svc is not None
        if self.registry.find(svc, "default", "kubernetes") is not None:
            return
        first_ip = str(next(ipaddress.ip_network(self.config.service_cidr).hosts()))
        await self.registry.create(svc, "default", {
            "apiVersion": "v1", "kind": "Service",
            "metadata": {"name": "kubernetes", "labels": {"component": "apiserver", "provider": "kubernetes"}},
            "spec": {"type": "ClusterIP", "clusterIP": first_ip, "sessionAffinity": "None",
                     "ports": [{"name": "https", "port": 443, "protocol": "TCP",
                                "targetPort": self.config.port or 6443}]},
        }, opts)

    # -- security seams (filled in by apiserver.auth when configured) ----------------------------
    async def authenticate(self, request: web.Request) -> Any:
        if self.authenticator is None:
            return AdminUser()
        return await self.authenticator(request)

    async def authorize(self, request: web.Request, user: Any, info: RequestInfo) -> None:
        if self.authorizer is not None:
            await self.authorizer(request, user, info)

    def root_paths(self) -> list[str]:
        paths = {"/api", "/api/v1", "/apis", "/healthz", "/livez", "/readyz", "/version", "/openapi/v2",
                 "/openapi/v3"}
        for row in self.resources.all():
            if row.group:
                paths.add(f"/apis/{row.group}")
                paths.add(f"/apis/{row.group}/{row.version}")
        return sorted(paths)
