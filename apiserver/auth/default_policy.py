"""The default RBAC policy at start (upstream's rbac/bootstrap-roles post-start hook) and the ClusterRole
aggregation controller that keeps aggregated roles' rules the union of the roles they select."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from mini_kube.apiserver.auth import bootstrap
from mini_kube.apiserver.auth.rbac import RBAC_GROUP
from mini_kube.apiserver.errors import StatusError
from mini_kube.apiserver.lifecycle import Lifecycle
from mini_kube.apiserver.registry.generic import Registry, WriteOptions


async def bootstrap_policy(registry: Registry, lifecycle: Lifecycle) -> None:
    """Create missing default RBAC objects (all at once: the store commits them together), then keep aggregated
    ClusterRoles up to date. One refused (e.g. another server on the same etcd made it first) is left as it is."""
    opts = WriteOptions(field_manager="kube-apiserver")
    creates = []
    for obj in bootstrap.default_objects():
        plural = obj["kind"].lower() + "s"
        res = registry.resources.lookup(RBAC_GROUP, "v1", plural)
        assert res is not None
        namespace = obj["metadata"].get("namespace")
        if registry.find(res, namespace, obj["metadata"]["name"]) is None:
            creates.append(registry.create(res, namespace, obj, opts))
    for outcome in await asyncio.gather(*creates, return_exceptions=True):
        if isinstance(outcome, BaseException) and not isinstance(outcome, StatusError):
            raise outcome
    await aggregate_now(registry)
    lifecycle.spawn(_aggregation_loop(registry), "clusterrole-aggregation")


async def aggregate_now(registry: Registry) -> None:
    """Run the ClusterRole aggregation controller once."""
    res = registry.resources.lookup(RBAC_GROUP, "v1", "clusterroles")
    assert res is not None
    roles = [e.obj for e in registry.cache.list(res.key_prefix)]
    for name, rules in bootstrap.aggregate_cluster_roles(roles).items():
        def mutate(obj: dict[str, Any], rules: list[Any] = rules) -> dict[str, Any]:
            obj["rules"] = rules
            return obj

        with contextlib.suppress(StatusError):
            await registry.guaranteed_update(res, None, name, mutate,
                                             WriteOptions(field_manager="clusterrole-aggregation-controller"))


async def _aggregation_loop(registry: Registry) -> None:
    res = registry.resources.lookup(RBAC_GROUP, "v1", "clusterroles")
    assert res is not None
    watcher = registry.cache.watch(res.key_prefix, None)
    try:
        while True:
            if await watcher.queue.get() is None:
                watcher = registry.cache.watch(res.key_prefix, None)
            while not watcher.queue.empty():
                watcher.queue.get_nowait()
            await aggregate_now(registry)
    finally:
        watcher.close()
