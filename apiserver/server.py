"""The API server: assembled from its configuration (assemble.py), then started and stopped as one unit."""

from __future__ import annotations

import asyncio
import errno
import ipaddress
import logging
from collections.abc import Coroutine
from typing import IO, Any

from aiohttp import web
from mini_kube.store import Store

from . import datadir
from .aggregator import authentication_config
from .assemble import Assembly, assemble
from .auth.default_policy import bootstrap_policy
from .auth.loopback import new_socket_name
from .auth.security import Security
from .config import ServerConfig
from .handlers.watch_reaper import WatchReaper
from .http import protocol
from .http.negotiation import MAX_BODY
from .lifecycle import Lifecycle
from .registry.cache import ObjectCache
from .registry.generic import Registry, WriteOptions
from .resources import ResourceRegistry

__all__ = ["ApiServer", "ServerConfig"]

log = logging.getLogger("mini-kube.apiserver")

SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
SYSTEM_PRIORITY_CLASSES = (  # upstream's SystemPriorityClasses, made at start-up by its scheduling post-start hook
    ("system-node-critical", 2000001000, "Used for system critical pods that must not be moved from their current "
                                         "node."),
    ("system-cluster-critical", 2000000000, "Used for system critical pods that must run in the cluster, but can be "
                                            "moved to another node if necessary."))


class ApiServer:
    """One mini-kube API server instance: `start()` assembles and serves it, `stop()` ends it."""

    def __init__(self, config: ServerConfig | None = None) -> None:
        self.config = config or ServerConfig()
        self.ready = False
        self.url = ""
        self.loopback_socket = ""  # the in-process components' socket (auth/loopback.py), once started
        self.lifecycle = Lifecycle()  # what runs beside the server and what its stop must close
        self.parts: Assembly | None = None
        self._runner: web.BaseRunner | None = None
        self._data_dir_lock: IO[str] | None = None

    # -- the assembled parts (after start) -----------------------------------------------------
    def _assembled(self) -> Assembly:
        assert self.parts is not None, "the server is not started"
        return self.parts

    @property
    def store(self) -> Store:
        return self._assembled().store

    @property
    def cache(self) -> ObjectCache:
        return self._assembled().cache

    @property
    def resources(self) -> ResourceRegistry:
        return self._assembled().resources

    @property
    def registry(self) -> Registry:
        return self._assembled().registry

    @property
    def security(self) -> Security:
        return self._assembled().security

    @property
    def watch_reaper(self) -> WatchReaper:
        return self._assembled().watch_reaper

    def admin_kubeconfig(self) -> str:
        """The admin's kubeconfig for this server (YAML): client certificate and CA when secure."""
        return self._assembled().security.admin_kubeconfig(self.url)

    # -- lifecycle -------------------------------------------------------------------------------
    async def start(self) -> None:
        """Assemble the server (store, cache, security, registry, handlers), bootstrap system objects and serve."""
        config = self.config
        if config.data_dir != ":memory:" and self._data_dir_lock is None:
            self._data_dir_lock = datadir.claim(config.data_dir)
        self.parts = parts = await assemble(config, self.lifecycle, lambda: self.ready)
        await self.bootstrap(parts)
        asyncio.get_running_loop().set_exception_handler(protocol.loop_exception_handler)
        server = protocol.GuardedServer(parts.handler, header_timeout=config.request_header_timeout,
                                        client_max_size=MAX_BODY + 1, keepalive_timeout=config.idle_timeout,
                                        max_field_size=65536, access_log=None)
        self._runner = web.ServerRunner(server, handle_signals=False, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, config.address, config.port, ssl_context=parts.security.ssl_context,
                           reuse_address=True, backlog=1024)
        try:
            await site.start()
        except OSError as exc:
            reason = {errno.EADDRINUSE: "address already in use", errno.EADDRNOTAVAIL: "address not available",
                      errno.EACCES: "permission denied"}.get(exc.errno or 0, exc.strerror or str(exc))
            raise datadir.StartupError(f"cannot listen on {config.address}:{config.port}: {reason}") from None
        port = self._runner.addresses[0][1]
        config.port = port
        scheme = "http" if parts.security.ssl_context is None else "https"
        host = config.address if ":" not in config.address else f"[{config.address}]"
        self.url = f"{scheme}://{host}:{port}"
        parts.discovery.server_address = f"{config.address}:{port}"
        loopback = new_socket_name()
        await web.UnixSite(self._runner, loopback).start()
        self.loopback_socket = loopback
        self.ready = True

    async def stop(self) -> None:
        """Stop what runs beside the server, then serving, then the store; release the data dir."""
        self.ready = False
        await self.lifecycle.stop()
        parts = self.parts
        if parts is not None:
            parts.cache.close_watchers()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
            self.loopback_socket = ""
        if parts is not None:
            await parts.kubelets.close()
            parts.stop_feeding_cache()
            await parts.store.close()
            self.parts = None
        if self._data_dir_lock is not None:
            self._data_dir_lock.close()  # releases the lock
            self._data_dir_lock = None

    async def bootstrap(self, parts: Assembly) -> None:
        """Create the system namespaces, the `kubernetes` Service, the system PriorityClasses and (when secure) the
        default RBAC policy, if missing (upstream's post-start hooks). The namespaces go first (what lives in
        them is admitted only once they exist), then everything else at once: the store commits writes queued
        together in one transaction, so a fresh data dir's ~130 objects take two commits rather than ~130."""
        registry = parts.registry
        ns = registry.resources.lookup("", "v1", "namespaces")
        assert ns is not None
        opts = WriteOptions(field_manager="kube-apiserver")
        await asyncio.gather(*(registry.create(ns, None, {"apiVersion": "v1", "kind": "Namespace",
                                                          "metadata": {"name": name}}, opts)
                               for name in SYSTEM_NAMESPACES if registry.find(ns, None, name) is None))
        classes = registry.resources.lookup("scheduling.k8s.io", "v1", "priorityclasses")
        assert classes is not None
        writes: list[Coroutine[Any, Any, Any]] = [self._bootstrap_kubernetes_service(registry, opts)]
        writes += [registry.create(classes, None, {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                                                   "metadata": {"name": name}, "value": value,
                                                   "description": description}, opts)
                   for name, value, description in SYSTEM_PRIORITY_CLASSES
                   if registry.find(classes, None, name) is None]
        if not self.config.insecure_http:
            writes.append(bootstrap_policy(registry, self.lifecycle))
        if parts.security.pki is not None:
            writes.append(authentication_config.publish(registry, parts.security.pki))
        await asyncio.gather(*writes)
        if parts.handler.aggregator is not None:
            parts.handler.aggregator.start()

    async def _bootstrap_kubernetes_service(self, registry: Registry, opts: WriteOptions) -> None:
        """`default/kubernetes`: the API server's own Service, on the first address of the service range."""
        svc = registry.resources.lookup("", "v1", "services")
        assert svc is not None
        if registry.find(svc, "default", "kubernetes") is not None:
            return
        first_ip = str(next(ipaddress.ip_network(self.config.service_cidr).hosts()))
        await registry.create(svc, "default", {
            "apiVersion": "v1", "kind": "Service",
            "metadata": {"name": "kubernetes", "labels": {"component": "apiserver", "provider": "kubernetes"}},
            "spec": {"type": "ClusterIP", "clusterIP": first_ip, "sessionAffinity": "None",
                     "ports": [{"name": "https", "port": 443, "protocol": "TCP",
                                "targetPort": self.config.port or 6443}]},
        }, opts)
