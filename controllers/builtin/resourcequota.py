"""The resource quota controller ("resourcequota"), as kube-controller-manager's (pkg/controller/resourcequota):
it keeps each ResourceQuota's `status.hard` equal to its `spec.hard` and computes `status.used` from what the
namespace holds, through upstream's evaluators (`machinery/quota`): object counts (`count/<resource>.<group>`,
`pods`, `services`, `secrets`, `configmaps`, `replicationcontrollers`, `resourcequotas`,
`persistentvolumeclaims`, `services.loadbalancers`, `services.nodeports`), compute resources
(`requests.cpu`, `limits.memory`, `requests.storage`, ephemeral storage, extended resources...) and the scopes
(Terminating, NotTerminating, BestEffort, NotBestEffort, PriorityClass, CrossNamespacePodAffinity).

A quota is recalculated when it is created or its `spec.hard` changes, when an object it counts is deleted or
stops counting (a Pod that ended, a Service that changed type), and every `resync` seconds (upstream's
`--resource-quota-sync-period`, 5 minutes): status-only changes made by others are reset then. Usage is
charged on create by the ResourceQuota admission plugin; this controller gives it back. Every resource that
can be created, listed, watched and deleted is watched (again after CRDs change), through the shared informers.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from typing import Any

from mini_kube.client import ApiClient, ResourceRef
from mini_kube.client.discovery import Rediscovery, Served
from mini_kube.client.informer import Informer, SharedInformerFactory, object_key
from mini_kube.machinery.quota import resources as rl
from mini_kube.machinery.quota.evaluators import (
    IGNORED,
    Evaluator,
    Registry,
    scope_selectors,
    update_changes_usage,
)
from mini_kube.machinery.refs import CUSTOMRESOURCEDEFINITIONS, RESOURCEQUOTAS
from mini_kube.machinery.times import now

from ..reconciler import Controller, Result

log = logging.getLogger("mini-kube.resourcequota")
RESYNC = 300.0  # kube-controller-manager's --resource-quota-sync-period
REDISCOVER_AFTER = 0.5
Obj = dict[str, Any]


class NotSynced(Exception):
    """An informer a quota needs has not listed its resource yet."""


class ResourceQuotaController(Controller):
    name = "resourcequota"
    workers = 2

    def __init__(self, client: ApiClient, informers: SharedInformerFactory | None = None, *,
                 resync: float = RESYNC, **kwargs: Any) -> None:
        super().__init__(client, informers, **kwargs)
        self.resync = resync
        self.evaluators = Registry()
        self.monitors: dict[tuple[str, str], Informer] = {}
        self.discovery = Rediscovery(client, self._monitor_served, delay=REDISCOVER_AFTER, name=self.name)

    def setup(self) -> None:
        self.quotas = self.watch(RESOURCEQUOTAS, enqueue=False)
        self.quotas.add_handler(self._quota_changed)
        self.watch(CUSTOMRESOURCEDEFINITIONS, enqueue=False).add_handler(lambda *_: self.discovery.schedule())

    async def start(self) -> None:
        await self.discovery.run()
        await super().start()
        if self.resync > 0:
            self._tasks.append(asyncio.create_task(self._resync_loop(), name="resourcequota-resync"))

    async def stop(self) -> None:
        self.discovery.cancel()
        await super().stop()

    # -- what to recalculate ----------------------------------------------------------------------------
    def _quota_changed(self, event: str, old: Obj | None, new: Obj | None) -> None:
        """New and deleted quotas, and changes to spec.hard (status changes are this controller's own)."""
        if event == "update" and old is not None and new is not None and rl.equals(
                rl.parse_list((old.get("spec") or {}).get("hard")), rl.parse_list((new.get("spec") or {}).get("hard"))):
            return
        obj = new or old
        if obj:
            self.queue.add(object_key(obj))

    def _object_changed(self, group_resource: tuple[str, str], event: str, old: Obj | None, new: Obj | None) -> None:
        if event == "delete" or (event == "update" and old is not None and new is not None
                                 and update_changes_usage(group_resource, old, new, now())):
            namespace = ((new or old or {}).get("metadata") or {}).get("namespace")
            if namespace:
                self._replenish(group_resource, namespace)

    def _replenish(self, group_resource: tuple[str, str], namespace: str) -> None:
        """Queue the quotas of `namespace` that track something of `group_resource`."""
        evaluator = self.evaluators.find(*group_resource)
        if evaluator is None:
            return
        for quota in self.quotas.list(namespace):
            if evaluator.matching_resources(((quota.get("status") or {}).get("hard") or {}).keys()):
                self.queue.add(object_key(quota))

    async def _resync_loop(self) -> None:
        while True:
            await asyncio.sleep(self.resync)
            for key in list(self.quotas.objects):
                self.queue.add(key)

    # -- what to watch ----------------------------------------------------------------------------------
    def _monitor_served(self, found: Served) -> None:
        """Monitor every namespaced resource that can be created, listed, watched and deleted."""
        for ref, verbs, _ in found:
            group_resource = (ref.group, ref.plural)
            if not ref.namespaced or "/" in ref.plural or group_resource in IGNORED or group_resource in self.monitors:
                continue
            if not {"create", "list", "watch", "delete"} <= set(verbs):
                continue
            self._monitor(ref)

    def _monitor(self, ref: ResourceRef) -> None:
        group_resource = (ref.group, ref.plural)
        self.evaluators.get(*group_resource)  # object counting for resources without their own evaluator
        informer = self.factory.informer(ref)
        informer.add_handler(functools.partial(self._object_changed, group_resource))
        self.monitors[group_resource] = informer
        if informer not in self.informers:
            self.informers.append(informer)
        informer.start()

    # -- recalculating ----------------------------------------------------------------------------------
    def calculate_usage(self, namespace: str, quota: Obj, hard: list[str]) -> tuple[rl.ResourceList, list[str]]:
        """CalculateUsage: what the namespace uses of each of `hard` that an evaluator knows; also the names
        whose resource's informer has not synced yet (left out)."""
        selectors = scope_selectors(quota)
        moment = now()
        usage: rl.ResourceList = {}
        unsynced: list[str] = []
        for group_resource, informer in list(self.monitors.items()):
            evaluator = self.evaluators.find(*group_resource)
            names = evaluator.matching_resources(hard) if evaluator is not None else []
            if not names or evaluator is None:
                continue
            if not informer.synced.is_set():
                unsynced += names
                continue
            if type(evaluator) is Evaluator:  # counting only: the namespace index has the number, nothing decoded
                count = 0 if selectors else len(informer.index_keys("namespace", namespace))
                stats = {name: rl.quantity(count) for name in names}
            else:
                stats = evaluator.usage_stats(informer.list(namespace), selectors, names, moment)
            usage = rl.add(usage, rl.mask(stats, names))
        return usage, unsynced

    async def reconcile(self, key: Any) -> Result | None:
        quota = self.quotas.get(key)
        if quota is None:
            return None
        namespace = quota["metadata"].get("namespace") or ""
        spec_hard = (quota.get("spec") or {}).get("hard") or {}
        status = quota.get("status") or {}
        hard = rl.parse_list(spec_hard)
        old_used = rl.parse_list(status.get("used"))
        dirty = status.get("hard") is None or status.get("used") is None or \
            not rl.equals(hard, rl.parse_list(status.get("hard")))
        usage, unsynced = self.calculate_usage(namespace, quota, list(hard))
        used = rl.mask({**old_used, **usage}, hard)
        dirty = dirty or not rl.equals(used, old_used)
        if dirty:
            update = {**quota, "status": {"hard": {name: spec_hard[name] for name in sorted(spec_hard)},
                                          "used": rl.to_json(used)}}
            await self.client.replace_status(RESOURCEQUOTAS, update, namespace)
        if unsynced:
            raise NotSynced(f"not yet synced: {', '.join(sorted(unsynced))}")
        return None

