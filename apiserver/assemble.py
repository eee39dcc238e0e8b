"""Putting one API server together, each part built once from the parts before it (upstream's Config ->
CompletedConfig -> New and DefaultBuildHandlerChain):

    store -> cache -> resource table -> security (pki, authn, authz, tokens, audit) -> admission chain
    -> registry -> subresource table -> handlers

Each handler is given only what it uses. Nothing is filled in afterwards: the parts are read-only wiring, and
what runs beside the server (the CRD controller, RBAC aggregation) and what must be closed at its end go to its
`Lifecycle`. `ApiServer` (server.py) starts and stops the result.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from mini_kube.store import Store

from . import datadir
from .admission import AdmissionChain, config_validation
from .admission.plugins import default_plugins
from .admission.webhook_client import CallError, WebhookClient
from .aggregator.availability import Aggregator
from .aggregator.proxy import ProxyClient
from .app import HandlerChain
from .auth.admission import RbacEscalation
from .auth.security import Security, insecure
from .config import ServerConfig
from .crd.conversion_webhook import WebhookConverter
from .crd_controller import CrdController
from .discovery import Discovery
from .handlers.kubelet_proxy import KubeletClient
from .handlers.pod_binding import PodBinding
from .handlers.pod_eviction import PodEviction
from .handlers.pod_streams import PodStreams
from .handlers.resource import ResourceHandler
from .handlers.routes import SubresourceTable
from .handlers.watch import WatchSources
from .handlers.watch_reaper import WatchReaper
from .http.fairness import ComponentSeats
from .http.inflight import InflightLimiter
from .lifecycle import Lifecycle
from .registry.cache import ObjectCache
from .registry.generic import Registry
from .registry.kinds import builtin_resources
from .registry.reader import ObjectReader
from .registry.rest.binding import BindingREST, BindingsREST
from .registry.rest.eviction import EvictionREST
from .registry.rest.reviews import AUTHN, review_storage
from .registry.setup import build_registry
from .resources import ResourceRegistry
from .store_health import StoreHealth


@dataclass(frozen=True)
class Assembly:
    """The parts of one API server, as built."""

    config: ServerConfig
    store: Store
    cache: ObjectCache
    resources: ResourceRegistry
    security: Security
    admission: AdmissionChain
    registry: Registry
    subresources: SubresourceTable
    discovery: Discovery
    watch_reaper: WatchReaper
    kubelets: KubeletClient
    handler: HandlerChain
    stop_feeding_cache: Callable[[], None]  # the store stops feeding the cache (after the last request)


async def open_store(config: ServerConfig) -> Store:
    """The SQLite store in the data dir, or the etcd store when etcd servers are configured."""
    if not config.etcd_servers:
        return await Store.open(config.store_path)
    from mini_kube.store.etcd_client import TlsOptions  # only etcd users pay for its client's import
    from mini_kube.store.etcd_store import EtcdStore

    tls = TlsOptions(config.etcd_cafile, config.etcd_certfile, config.etcd_keyfile) \
        if config.etcd_cafile or config.etcd_certfile else None
    return await EtcdStore.open(config.etcd_servers, prefix=config.etcd_prefix, tls=tls)  # type: ignore[return-value]


async def load_cache(store: Store, config: ServerConfig) -> tuple[ObjectCache, Callable[[], None]]:
    """A cache holding everything in the store, then fed by every commit (synchronously, before the write is
    answered), and the function that stops feeding it."""
    cache = ObjectCache(config.watch_history)
    snapshot = await store.range("/")
    cache.load(snapshot.kvs, snapshot.revision)
    return cache, store.subscribe(cache.apply)


def build_security(config: ServerConfig, objects: ObjectReader) -> Security:
    """TLS, authentication, RBAC and audit as configured; plain HTTP with everyone the admin if insecure."""
    if config.insecure_http:
        return insecure(objects)
    from .auth.secure import secure  # x509 and JWT: insecure servers (the tests) never import them

    return secure(config, objects)


def build_admission(config: ServerConfig, objects: ObjectReader, security: Security,
                    webhooks: WebhookClient) -> AdmissionChain:
    """The built-in plugins in upstream's order, with RBAC escalation checks when authorization is on (before
    ResourceQuota, which stays last: it charges only writes every other plugin let through)."""
    plugins = default_plugins(objects, webhooks,
                              require_default_service_account=config.require_default_service_account,
                              admission_control_config_file=config.admission_control_config_file)
    if not config.insecure_http:
        plugins.insert(len(plugins) - 1, RbacEscalation(security.rbac))
    return AdmissionChain(plugins)


def build_subresources(registry: Registry, objects: ObjectReader, security: Security,
                       kubelets: KubeletClient) -> SubresourceTable:
    """Subresources beyond status and scale, and the request-only kinds."""
    binding = BindingREST(registry)
    table = SubresourceTable()
    table.subresources.update(PodStreams(registry, objects, kubelets).handlers())
    table.subresources[("", "pods", "eviction")] = PodEviction(EvictionREST(registry))
    table.subresources[("", "pods", "binding")] = PodBinding(binding).subresource
    table.kinds[("", "Binding")] = BindingsREST(binding)
    table.kinds.update(review_storage(security.rbac))
    if security.tokens is not None and security.authenticate_credentials is not None:
        # JWT signing and the authenticators: only secure servers issue and review tokens
        from .handlers.token_request import TokenRequests
        from .registry.rest.tokens import TokenRequestREST, token_review_storage

        table.subresources[("", "serviceaccounts", "token")] = TokenRequests(
            TokenRequestREST(registry, objects, security.tokens))
        table.kinds[(AUTHN, "TokenReview")] = token_review_storage(security.authenticate_credentials,
                                                                   security.tokens.api_audiences)
    return table


def build_aggregator(registry: Registry, objects: ObjectReader, discovery: Discovery,
                     security: Security) -> Aggregator:
    """The aggregation layer, presenting the front-proxy client certificate when the server has a PKI (started
    once the server serves: its checks call extension servers)."""
    pki = security.pki
    cert = (str(pki.front_proxy_client_cert_path), str(pki.front_proxy_client_key_path)) if pki is not None else None
    return Aggregator(registry, discovery, ProxyClient(objects, cert))


async def assemble(config: ServerConfig, lifecycle: Lifecycle, ready: Callable[[], bool]) -> Assembly:
    """Build every part of a server run as `config` says (`ready` tells /readyz whether it serves yet)."""
    store = await open_store(config)
    try:
        if config.data_dir != ":memory:":
            datadir.secure_files(config.data_dir)
        cache, stop_feeding_cache = await load_cache(store, config)
        config_validation.register()  # before the rows take their validators from the table
        resources = ResourceRegistry(builtin_resources(config.service_cidr, config.node_port_range))
        objects = ObjectReader(resources, cache)
        security = build_security(config, objects)
        lifecycle.on_stop(security.close)
        webhooks = WebhookClient(objects)  # admission and conversion webhooks
        lifecycle.on_stop(webhooks.close)
        admission = build_admission(config, objects, security, webhooks)
        registry = build_registry(store, cache, resources, admission)
        crds = CrdController(registry, WebhookConverter(webhooks.post, CallError))
        crds.start()  # serve the stored CRDs; follow every CRD write from here on
        lifecycle.on_stop(crds.stop)
        kubelets = KubeletClient()
        subresources = build_subresources(registry, objects, security, kubelets)
        reaper = WatchReaper()  # ends watches whose client has gone
        resource_handler = ResourceHandler(registry, WatchSources(cache, store, reaper), subresources)
        discovery = Discovery(resources)
        aggregator = build_aggregator(registry, objects, discovery, security)
        lifecycle.on_stop(aggregator.stop)
        inflight = InflightLimiter(config.max_requests_inflight, config.max_mutating_requests_inflight)
        handler = HandlerChain(security, inflight, resources, discovery, resource_handler, StoreHealth(lambda: store),
                               ready, ComponentSeats(), aggregator)
    except BaseException:
        await lifecycle.stop()
        await store.close()
        raise
    return Assembly(config, store, cache, resources, security, admission, registry, subresources, discovery, reaper,
                    kubelets, handler, stop_feeding_cache)
