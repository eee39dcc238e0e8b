"""The Agent controller: each Agent becomes a ConfigMap, a Deployment and a Service that it owns.

- Level-triggered: a reconcile reads the Agent, its runtime (the namespace's ServingRuntime of that name, else
  the ClusterServingRuntime) and its base ConfigMap from the informers' caches, renders the children, and applies
  (server-side apply, field manager `agent-operator`, forced) only those whose live state lacks the intent.
- Watches: Agents (spec changes), the owned children (drift: a deleted or hand-edited child is restored, the
  Deployment's rollout is reflected in status), runtimes and ConfigMaps (through indices of Agents by runtime
  name and by referenced ConfigMap, not a scan of every Agent).
- A missing runtime: `RuntimeResolved=False` (RuntimeNotFound), no Deployment (an existing one is kept as it
  is); the Agent recovers when the runtime appears. Failed writes are retried with back-off.
"""

from __future__ import annotations

import logging
from typing import Any

from mini_kube.client import ApiError, ResourceRef
from mini_kube.client.events import EventRecorder
from mini_kube.client.informer import SharedInformerFactory, object_key
from mini_kube.controllers.reconciler import Controller, Result, generation_changed, owner_key
from mini_kube.machinery.meta import meta
from mini_kube.machinery.refs import CONFIGMAPS, DEPLOYMENTS, SERVICES

from . import render
from .api import (
    AGENTS,
    API_VERSION,
    CLUSTER_SERVING_RUNTIMES,
    COMPONENT,
    FIELD_MANAGER,
    MANAGED_SELECTOR,
    RUNTIME_RESOLVED,
    SERVING_RUNTIMES,
    config_map_name,
)
from .conditions import Observed, agent_status, same_status

log = logging.getLogger("mini-kube.agent-operator")
BY_RUNTIME = "runtime"  # "<namespace>/<runtime name>"
BY_RUNTIME_NAME = "runtime-name"  # "<runtime name>" (for ClusterServingRuntimes)
BY_CONFIGMAP = "configmap-ref"  # "<namespace>/<configmap name>"


def _runtime_of(agent: dict[str, Any]) -> str:
    return str((agent.get("spec") or {}).get("runtime") or "")


def _configmap_of(agent: dict[str, Any]) -> str:
    return str(((agent.get("spec") or {}).get("configMapRef") or {}).get("name") or "")


class AgentController(Controller):
    """Reconciles Agents (`namespace/name` keys)."""

    name = "agent"
    workers = 16

    def __init__(self, client: Any, informers: SharedInformerFactory | None = None,
                 events: EventRecorder | None = None, *, workers: int | None = None) -> None:
        super().__init__(client, informers, events or EventRecorder(client, COMPONENT))
        if workers:
            self.workers = workers
        self.writes = 0  # apply and status requests made (for the status endpoint and tests)
        self.reconciles = 0

    def setup(self) -> None:
        self.agents = self.watch(AGENTS, predicate=generation_changed)
        self.agents.add_index(BY_RUNTIME, lambda a: (f"{meta(a).get('namespace')}/{_runtime_of(a)}",))
        self.agents.add_index(BY_RUNTIME_NAME, lambda a: (_runtime_of(a),))
        self.agents.add_index(BY_CONFIGMAP, lambda a: (f"{meta(a).get('namespace')}/{_configmap_of(a)}",)
                              if _configmap_of(a) else ())
        self.runtimes = self.watch(SERVING_RUNTIMES, enqueue=False)
        self.runtimes.add_handler(self._on_runtime)
        self.cluster_runtimes = self.watch(CLUSTER_SERVING_RUNTIMES, enqueue=False)
        self.cluster_runtimes.add_handler(self._on_runtime)
        self.configmaps = self.watch(CONFIGMAPS, enqueue=False)
        self.configmaps.add_handler(self._on_configmap)
        self.deployments = self.watch(DEPLOYMENTS, label_selector=MANAGED_SELECTOR, enqueue=owner_key("Agent"))
        self.services = self.watch(SERVICES, label_selector=MANAGED_SELECTOR, enqueue=owner_key("Agent"))

    # -- event handlers: which Agents a change concerns ----------------------------------------------------
    def _on_runtime(self, event: str, old: dict[str, Any] | None, new: dict[str, Any] | None) -> None:
        if event == "update" and not generation_changed(old, new):
            return
        obj = new or old or {}
        namespace, name = meta(obj).get("namespace"), meta(obj).get("name", "")
        keys = self.agents.index_keys(BY_RUNTIME, f"{namespace}/{name}") if namespace else \
            self.agents.index_keys(BY_RUNTIME_NAME, name)
        for key in keys:
            self.queue.add(key)

    def _on_configmap(self, event: str, old: dict[str, Any] | None, new: dict[str, Any] | None) -> None:
        for obj in (new, old) if event == "update" else (new or old,):
            if not obj:
                continue
            owner = owner_key("Agent")(obj)
            if owner:
                self.queue.add(owner)
            for key in self.agents.index_keys(BY_CONFIGMAP, object_key(obj)):
                self.queue.add(key)

    # -- reconcile -----------------------------------------------------------------------------------------
    def resolve_runtime(self, namespace: str, name: str) -> tuple[dict[str, Any] | None, str]:
        """The namespace's ServingRuntime `name`, else the ClusterServingRuntime `name`, with its kind."""
        found = self.runtimes.get(f"{namespace}/{name}")
        if found is not None:
            return found, "ServingRuntime"
        found = self.cluster_runtimes.get(name)
        return (found, "ClusterServingRuntime") if found is not None else (None, "")

    async def reconcile(self, key: Any) -> Result | None:
        agent = self.agents.get(key)
        if agent is None or meta(agent).get("deletionTimestamp"):
            return None  # its children go through garbage collection
        self.reconciles += 1
        agent.setdefault("apiVersion", API_VERSION)
        agent.setdefault("kind", "Agent")
        namespace, name = meta(agent)["namespace"], meta(agent)["name"]
        runtime, kind = self.resolve_runtime(namespace, _runtime_of(agent))
        seen = Observed(runtime_kind=kind, runtime_name=meta(runtime)["name"] if runtime else "")
        base: dict[str, str] | None = None
        if _configmap_of(agent):
            referenced = self.configmaps.get(f"{namespace}/{_configmap_of(agent)}")
            if referenced is None:
                seen.missing_configmap = _configmap_of(agent)
            else:
                base = referenced.get("data") or {}
        data = render.config_data(agent, base)
        failures: list[ApiError] = []

        async def apply(ref: ResourceRef, desired: dict[str, Any], live: dict[str, Any] | None) -> Any:
            try:  # one child failing does not hold the others back
                return await self._apply(agent, ref, desired, live)
            except ApiError as exc:
                failures.append(exc)
                seen.failure = seen.failure or f"{desired['kind']} {meta(desired)['name']}: {exc}"
                return live

        if not seen.missing_configmap:
            await apply(CONFIGMAPS, render.configmap(agent, data),
                        self.configmaps.get(f"{namespace}/{config_map_name(name)}"))
        seen.deployment = self.deployments.get(key)
        if runtime is not None and not seen.missing_configmap:
            seen.deployment = await apply(DEPLOYMENTS, render.deployment(agent, runtime, kind, data), seen.deployment)
        seen.service = await apply(SERVICES, render.service(agent), self.services.get(key))
        await self._write_status(agent, seen)
        if failures:
            raise failures[0]  # retried with back-off
        return None

    async def _apply(self, agent: dict[str, Any], ref: ResourceRef, desired: dict[str, Any],
                     live: dict[str, Any] | None) -> dict[str, Any]:
        """Apply `desired` unless `live` already has it; returns the live object."""
        if render.is_applied(desired, live):
            return live  # type: ignore[return-value]
        try:
            applied = await self.client.apply(ref, desired, meta(desired)["namespace"], field_manager=FIELD_MANAGER,
                                              force=True)
        except ApiError as exc:
            log.warning("agent %s/%s: applying %s %s failed: %s", meta(agent)["namespace"], meta(agent)["name"],
                        desired["kind"], meta(desired)["name"], exc)
            self.events.event(agent, "Warning", "FailedApply", f"{desired['kind']} {meta(desired)['name']}: {exc}")
            raise
        self.writes += 1
        verb = "Created" if live is None else "Updated"
        self.events.event(agent, "Normal", verb, f"{verb} {desired['kind']} {meta(desired)['name']}")
        return applied

    async def _write_status(self, agent: dict[str, Any], seen: Observed) -> None:
        status = agent_status(agent, seen)
        old = agent.get("status") or {}
        if same_status(old, status):
            return
        was: dict[str, Any] = next((c for c in old.get("conditions") or () if c.get("type") == RUNTIME_RESOLVED), {})
        now = next(c for c in status["conditions"] if c["type"] == RUNTIME_RESOLVED)
        if now["status"] == "False" and was.get("reason") != now["reason"]:
            self.events.event(agent, "Warning", now["reason"], now["message"])
        body = {"apiVersion": API_VERSION, "kind": "Agent",
                "metadata": {"name": meta(agent)["name"], "namespace": meta(agent)["namespace"]}, "status": status}
        await self.client.apply(AGENTS, body, meta(agent)["namespace"], field_manager=FIELD_MANAGER, force=True,
                                subresource="status")
        self.writes += 1
