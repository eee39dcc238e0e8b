"""`pods/eviction`: delete a Pod only if its PodDisruptionBudget allows it, as upstream's EvictionREST does
(pkg/registry/core/pod/storage/eviction.go); `handlers/pod_eviction.py` decodes the request and encodes the answer.

- Pods that are terminal, Pending or already being deleted go at once (no budget is consulted).
- Otherwise the budgets selecting the Pod are read: none deletes it; more than one is a 500; one is checked and
  decremented with a compare-and-swap on its status (`disruptionsAllowed` - 1, the Pod added to
  `disruptedPods`), retried on conflicts; an exhausted budget answers 429 TooManyRequests with a cause of
  type DisruptionBudget. A not-ready Pod goes without spending the budget when the budget is already met
  (or `unhealthyPodEvictionPolicy: AlwaysAllow`), guarded by a resourceVersion precondition.
- The Pod gets the `DisruptionTarget` condition (reason EvictionByEvictionAPI) before it is deleted.
- Admission sees a CREATE of pods/eviction with the Eviction object; `dryRun` and the body's deleteOptions
  (preconditions, grace period) apply.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import orjson
from mini_kube.machinery.labels import matches as selector_matches
from mini_kube.machinery.times import now_rfc3339

from ... import errors
from ...resources import ResourceType
from ..cache import Entry
from ..generic import Registry, WriteOptions
from ..strategy import WriteContext

MAX_DISRUPTED_PODS = 2000  # upstream's MaxDisruptedPodSize: evictions approved but not yet seen by the controller
RETRY_STEPS = 20  # upstream's EvictionsRetry: 20 tries on conflicts
RETRY_DELAY = 0.1  # at most this many seconds between tries, fully jittered (upstream: 0.5 s with 10 % jitter;
# in-process conflicts clear sooner, and contenders woken together would collide again)
IMMEDIATE_RETRIES = 5
BUDGET_VIOLATION = "Cannot evict pod as it would violate the pod's disruption budget."
MULTIPLE_BUDGETS = "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."
FIELD_MANAGER = "kube-apiserver"
STATUS_ORDER = ("observedGeneration", "disruptedPods", "disruptionsAllowed", "currentHealthy", "desiredHealthy",
                "expectedPods", "conditions")  # PodDisruptionBudgetStatus' fields as Go writes them


_LOCKS: dict[tuple[int, str, str], tuple[asyncio.Lock, int]] = {}


@contextlib.asynccontextmanager
async def _budget_lock(registry: Registry, namespace: str, name: str) -> AsyncIterator[None]:
    """Evictions in this server take turns on one budget: the compare-and-swap still guards against other
    writers (the controller, other API servers), but concurrent evictions no longer make each other retry."""
    key = (id(registry), namespace, name)
    lock, users = _LOCKS.get(key) or (asyncio.Lock(), 0)
    _LOCKS[key] = (lock, users + 1)
    try:
        async with lock:
            yield
    finally:
        lock, users = _LOCKS[key]
        if users == 1:
            del _LOCKS[key]
        else:
            _LOCKS[key] = (lock, users - 1)


class _Retry(Exception):
    """Try again (a conflict), carrying the last error."""

    def __init__(self, error: errors.StatusError) -> None:
        super().__init__(error.message)
        self.error = error


def too_many_requests(message: str, retry_after: int = 0) -> errors.StatusError:
    """429 with a DisruptionBudget cause, as upstream's NewTooManyRequests (Retry-After when it suggests one)."""
    details: dict[str, Any] = {"causes": [{"reason": "DisruptionBudget", "message": message}]}
    headers = None
    if retry_after:
        details["retryAfterSeconds"] = retry_after
        headers = {"Retry-After": str(retry_after)}
    return errors.StatusError(429, "TooManyRequests", BUDGET_VIOLATION, details, headers)


def still_processing(pdb_name: str) -> errors.StatusError:
    return too_many_requests(f"The disruption budget {pdb_name} is still being processed by the server.", 10)


def _forbidden(pdb_name: str, reason: str) -> errors.StatusError:
    return errors.forbidden_error(f'poddisruptionbudget.policy "{pdb_name}" is forbidden: {reason}',
                                  "poddisruptionbudget", pdb_name, "policy")


def is_ready(pod: dict[str, Any]) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or ())


def can_ignore_budget(pod: dict[str, Any]) -> bool:
    """Terminal, Pending or terminating Pods: evicting them disrupts nothing more."""
    phase = (pod.get("status") or {}).get("phase")
    return phase in ("Succeeded", "Failed", "Pending") or bool(pod["metadata"].get("deletionTimestamp"))


def enforces_resource_version(pod: dict[str, Any]) -> bool:
    """Whether deleting must be guarded against the Pod becoming ready meanwhile (not for terminal ones)."""
    phase = (pod.get("status") or {}).get("phase")
    return phase not in ("Succeeded", "Failed") and not pod["metadata"].get("deletionTimestamp")


def set_condition(conditions: list[dict[str, Any]], condition: dict[str, Any]) -> None:
    """apimachinery's SetStatusCondition: the transition time moves only when the status changes."""
    for existing in conditions:
        if existing.get("type") == condition["type"]:
            if existing.get("status") != condition["status"] or not existing.get("lastTransitionTime"):
                existing["lastTransitionTime"] = condition.get("lastTransitionTime") or now_rfc3339()
            existing["status"] = condition["status"]
            for key in ("reason", "message", "observedGeneration"):
                existing[key] = condition.get(key, "" if key != "observedGeneration" else 0)
            return
    conditions.append({"type": condition["type"], "status": condition["status"],
                       "observedGeneration": condition.get("observedGeneration", 0),
                       "lastTransitionTime": condition.get("lastTransitionTime") or now_rfc3339(),
                       "reason": condition.get("reason", ""), "message": condition.get("message", "")})


def update_disruption_allowed_condition(pdb: dict[str, Any]) -> None:
    """The DisruptionAllowed condition from `disruptionsAllowed` (component-helpers' pdb helper)."""
    status = pdb.setdefault("status", {})
    allowed = status.get("disruptionsAllowed", 0) > 0
    set_condition(status.setdefault("conditions", []), {
        "type": "DisruptionAllowed", "status": "True" if allowed else "False",
        "reason": "SufficientPods" if allowed else "InsufficientPods",
        "observedGeneration": status.get("observedGeneration", 0)})


async def _retry(attempt: Callable[[], Awaitable[Any]], steps: int = RETRY_STEPS) -> Any:
    """Run `attempt` until it does not raise _Retry (at most `steps` times); then the last error."""
    last: errors.StatusError | None = None
    for step in range(steps):
        try:
            return await attempt()
        except _Retry as exc:
            last = exc.error
            if step + 1 < steps:  # the winning write is already in the cache: the first retries go at once
                await asyncio.sleep(random.uniform(0, RETRY_DELAY) if step >= IMMEDIATE_RETRIES else 0)
    assert last is not None
    raise last


class EvictionREST:
    """`pods/eviction` of one server: `create` evicts a Pod as an Eviction asks."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry

    async def create(self, pods: ResourceType, namespace: str, name: str, eviction: dict[str, Any],
                     options: dict[str, Any], user: Any, manager: str) -> tuple[dict[str, Any], int]:
        """Evict pod `namespace/name` (`eviction` the decoded Eviction, `options` its DeleteOptions with the
        request's dryRun); the Status to answer and its HTTP code (errors are raised as Status errors)."""
        registry = self.registry
        if registry.admission is not None:  # admission sees a CREATE of pods/eviction with the Eviction object
            ctx = WriteContext(registry, pods, namespace, bool(options.get("dryRun")), "eviction", user)
            opts = WriteOptions(dry_run=ctx.dry_run, field_manager=manager, user=user, subresource="eviction")
            await registry.admission.admit("CREATE", ctx, eviction, None, opts)
            await registry.admission.validate("CREATE", ctx, eviction, None, opts)
        pdbs = registry.resources.lookup("policy", "v1", "poddisruptionbudgets")
        assert pdbs is not None
        return await Eviction(registry, pods, pdbs, namespace, name, options, user, manager).run()


class Eviction:
    """One eviction request: the Pod, its delete options, and the registry it acts through."""

    def __init__(self, registry: Registry, pods: ResourceType, pdbs: ResourceType, namespace: str, name: str,
                 options: dict[str, Any], user: Any, manager: str) -> None:
        self.registry = registry
        self.pods, self.pdbs = pods, pdbs
        self.namespace, self.name = namespace, name
        self.options = options
        self.dry_run = bool(options.get("dryRun"))
        self.user, self.manager = user, manager

    def _rv_precondition_unset(self) -> bool:
        return not (self.options.get("preconditions") or {}).get("resourceVersion")

    def _with_rv(self, pod: dict[str, Any]) -> dict[str, Any]:
        """The delete options guarded by the Pod's current resourceVersion."""
        pre = dict(self.options.get("preconditions") or {})
        pre["resourceVersion"] = pod["metadata"]["resourceVersion"]
        return {**self.options, "preconditions": pre}

    async def run(self) -> tuple[dict[str, Any], int]:
        """Evict; the Status to answer and its HTTP code (errors are raised as Status errors)."""
        pod = await self._delete_if_budget_ignored()
        if pod is None:
            return _success()
        labels = pod["metadata"].get("labels") or {}
        budgets = [orjson.loads(e.raw) for e in self.registry.cache.list(self.pdbs.key_prefix, self.namespace)
                   if selector_matches((e.obj.get("spec") or {}).get("selector"), labels)]
        if len(budgets) > 1:  # upstream answers this one as a Status without a reason
            return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                    "message": MULTIPLE_BUDGETS, "code": 500}, 500
        options = self.options
        if budgets:
            pdb = budgets[0]
            if self._unhealthy_may_go(pod, pdb):
                options = self._with_rv(pod)
            else:
                await self._check_and_decrement(pdb)
        try:
            await self._condition_and_delete(options)
        except errors.StatusError as exc:
            if exc.code == 409 and options is not self.options and self._rv_precondition_unset():
                raise still_processing(budgets[0]["metadata"]["name"]) from None  # the Pod changed meanwhile
            raise
        return _success()

    async def _delete_if_budget_ignored(self) -> dict[str, Any] | None:
        """Delete a Pod no budget guards (retrying conflicts unless the caller set a resourceVersion);
        None once deleted, else the Pod to check budgets for."""
        async def attempt() -> dict[str, Any] | None:
            pod = self.registry.get(self.pods, self.namespace, self.name).obj
            if not can_ignore_budget(pod):
                return pod
            options = self.options
            if enforces_resource_version(pod) and self._rv_precondition_unset():
                options = self._with_rv(pod)
            try:
                await self._condition_and_delete(options)
            except errors.StatusError as exc:
                if exc.code == 409 and self._rv_precondition_unset():
                    raise _Retry(exc) from None
                raise
            return None

        return await _retry(attempt)

    @staticmethod
    def _unhealthy_may_go(pod: dict[str, Any], pdb: dict[str, Any]) -> bool:
        """A not-ready Pod spends no budget: always with AlwaysAllow, else when the budget is already met."""
        if is_ready(pod):
            return False
        if (pdb.get("spec") or {}).get("unhealthyPodEvictionPolicy") == "AlwaysAllow":
            return True
        status = pdb.get("status") or {}
        desired = status.get("desiredHealthy", 0)
        return status.get("currentHealthy", 0) >= desired and desired > 0

    async def _check_and_decrement(self, first: dict[str, Any]) -> None:
        """Take one disruption from the budget with a compare-and-swap, re-reading it after a conflict."""
        state = {"pdb": first}
        name = first["metadata"]["name"]

        async def attempt() -> None:
            try:
                await self._decrement(state["pdb"])
            except errors.StatusError as exc:
                state["pdb"] = orjson.loads(self.registry.get(self.pdbs, self.namespace, name).raw)
                if exc.code == 409:
                    raise _Retry(exc) from None
                raise

        async with _budget_lock(self.registry, self.namespace, name):
            await _retry(attempt)

    async def _decrement(self, pdb: dict[str, Any]) -> None:
        meta, status = pdb["metadata"], pdb.get("status") or {}
        name = meta["name"]
        if status.get("observedGeneration", 0) < meta.get("generation", 0):
            raise still_processing(name)
        pdb["status"] = status
        allowed = status.get("disruptionsAllowed", 0)
        if allowed < 0:
            raise _forbidden(name, "pdb disruptions allowed is negative")
        if len(status.get("disruptedPods") or {}) > MAX_DISRUPTED_PODS:
            raise _forbidden(name, "DisruptedPods map too big - too many evictions not confirmed by PDB controller")
        if allowed == 0:
            raise errors.StatusError(429, "TooManyRequests", BUDGET_VIOLATION, {"causes": [{
                "reason": "DisruptionBudget",
                "message": f"The disruption budget {name} needs {status.get('desiredHealthy', 0)} healthy pods and "
                           f"has {status.get('currentHealthy', 0)} currently"}]})
        status["disruptionsAllowed"] = allowed - 1
        if allowed - 1 == 0:
            update_disruption_allowed_condition(pdb)
        if self.dry_run:
            return
        disrupted = status.get("disruptedPods") or {}
        disrupted[self.name] = now_rfc3339()
        status["disruptedPods"] = disrupted
        pdb["status"] = {k: status[k] for k in STATUS_ORDER if k in status} | status
        opts = WriteOptions(field_manager=FIELD_MANAGER, subresource="status")
        await self.registry.update(self.pdbs, self.namespace, name, pdb, opts, allow_create=False)

    async def _condition_and_delete(self, options: dict[str, Any]) -> None:
        """Mark the Pod DisruptionTarget (not on dry run), then delete it with `options`."""
        if not self.dry_run:
            pre = options.get("preconditions") or {}

            def mark(pod: dict[str, Any]) -> dict[str, Any]:
                meta = pod["metadata"]
                if pre.get("uid") and pre["uid"] != meta.get("uid"):
                    raise errors.conflict("pods", self.name, f"the UID in the precondition ({pre['uid']}) does not "
                                          f"match the UID in record ({meta.get('uid')}). The object might have been "
                                          "deleted and then recreated")
                if pre.get("resourceVersion") and pre["resourceVersion"] != meta.get("resourceVersion"):
                    raise errors.conflict("pods", self.name, "the ResourceVersion in the precondition "
                                          f"({pre['resourceVersion']}) does not match the ResourceVersion in record "
                                          f"({meta.get('resourceVersion')}). The object might have been modified")
                conditions = (pod.setdefault("status", {})).setdefault("conditions", [])
                _set_pod_condition(conditions, {"type": "DisruptionTarget", "status": "True",
                                                "reason": "EvictionByEvictionAPI",
                                                "message": "Eviction API: evicting"})
                meta.pop("resourceVersion", None)  # an unconditional write of the latest Pod
                return pod

            opts = WriteOptions(field_manager=self.manager, user=self.user, subresource="status")
            result = await self.registry.guaranteed_update(self.pods, self.namespace, self.name, mark, opts)
            if pre.get("resourceVersion") and isinstance(result, Entry):
                options = {**options, "preconditions": {**pre, "resourceVersion": str(result.revision)}}
        opts = WriteOptions(dry_run=self.dry_run, field_manager=self.manager, user=self.user)
        await self.registry.delete(self.pods, self.namespace, self.name, options, opts)


def _set_pod_condition(conditions: list[dict[str, Any]], condition: dict[str, Any]) -> None:
    """podutil.UpdatePodCondition: the transition time moves only when the status changes."""
    for existing in conditions:
        if existing.get("type") == condition["type"]:
            if existing.get("status") != condition["status"]:
                existing["lastTransitionTime"] = now_rfc3339()
            existing.update({k: v for k, v in condition.items() if k != "type"})
            return
    conditions.append({"type": condition["type"], "status": condition["status"], "lastProbeTime": None,
                       "lastTransitionTime": now_rfc3339(), "reason": condition["reason"],
                       "message": condition["message"]})


def _success() -> tuple[dict[str, Any], int]:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}, 201
