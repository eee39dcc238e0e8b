"""ResourceQuota: refuse a write that would take a namespace past one of its quotas, and charge what it uses to
the quotas' status, as upstream's plugin (k8s.io/apiserver/pkg/admission/plugin/resourcequota) does.

The last validating plugin. For each quota of the namespace that covers the object (it tracks one of the
object's resources and the object falls under all its scopes), the object must carry what the quota requires
(`failed quota: q: must specify cpu for: app`), the quota's usage must be known (`status unknown for quota`),
and the usage plus what the write adds must stay within `status.hard` (`exceeded quota: q, requested: pods=1,
used: pods=2, limited: pods=2`): each a 403. The new usage is then written to each quota's status with a
compare-and-swap on its resourceVersion; a quota another writer changed meanwhile is read again and checked
again (the quotas already charged are not charged twice), so concurrent creates never overshoot. As upstream's
evaluator, the writes waiting in one namespace are taken up as a batch: each checked against the usage the writes
before it left, then one status write per quota for them all. Dry runs are checked but charge nothing; the
quota controller gives back what deleted objects used.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import orjson
from mini_kube.machinery.quota import resources as rl
from mini_kube.machinery.quota.evaluators import IGNORED, Evaluator, Registry, hard_names
from mini_kube.machinery.times import now

from .. import errors
from ..registry.generic import Registry as Storage
from ..registry.generic import WriteOptions
from ..resources import ResourceType
from .chain import AdmissionPlugin, Attributes

Obj = dict[str, Any]
RETRIES = 3  # upstream's: quotas that lost a compare-and-swap are read and checked again this many times
FIELD_MANAGER = "kube-apiserver"


@dataclass(slots=True)
class _Waiter:
    """One write waiting for its namespace's quotas to be checked and charged."""

    attrs: Attributes
    evaluator: Evaluator
    done: asyncio.Future[None]

    def finish(self, error: BaseException | None = None) -> None:
        if not self.done.done():  # the request may have gone meanwhile
            if error is None:
                self.done.set_result(None)
            else:
                self.done.set_exception(error)


def _forbidden(attrs: Attributes, text: str) -> errors.StatusError:
    res = attrs.resource
    return errors.forbidden_error(f'{res.group_resource} "{attrs.name}" is forbidden: {text}', res.plural, attrs.name,
                                  res.group)


def _used(quota: Obj) -> rl.ResourceList:
    return rl.parse_list((quota.get("status") or {}).get("used"))


def _hard(quota: Obj) -> rl.ResourceList:
    return rl.parse_list((quota.get("status") or {}).get("hard"))


def check_request(quotas: list[Obj], attrs: Attributes, evaluator: Evaluator) -> list[Obj]:
    """CheckRequest: copies of `quotas` with the usage the write adds (those it does not concern unchanged);
    a 403 StatusError when the write does not fit."""
    obj = attrs.obj or {}
    covering: list[int] = []
    for i, quota in enumerate(quotas):
        if not evaluator.matches(quota, obj):
            continue
        name = quota["metadata"]["name"]
        tracked = evaluator.matching_resources(hard_names(quota))
        problem = evaluator.constraints(tracked, obj)
        if problem:
            raise _forbidden(attrs, f"failed quota: {name}: {problem}")
        used = (quota.get("status") or {}).get("used") or {}
        if any(n not in used for n in tracked):
            raise _forbidden(attrs, f"status unknown for quota: {name}, resources: {','.join(sorted(tracked))}")
        covering.append(i)
    moment = now()
    delta = evaluator.usage(obj, moment)
    negative = rl.negative(delta)
    if negative:
        raise _forbidden(attrs, f"quota usage is negative for resource(s): {','.join(sorted(negative))}")
    if attrs.operation == "UPDATE":
        if attrs.old is None:
            raise _forbidden(attrs, "unable to get previous usage since prior version of object was not found")
        if (attrs.old.get("metadata") or {}).get("resourceVersion"):
            delta = rl.subtract_non_negative(delta, evaluator.usage(attrs.old, moment))
    delta = rl.remove_zeros(delta)
    if not delta or not covering:
        return quotas
    result = [orjson.loads(orjson.dumps(q)) for q in quotas]
    for i in covering:
        quota = result[i]
        hard, used = _hard(quota), _used(quota)
        requested = rl.mask(delta, hard)
        new_used = rl.add(used, requested)
        allowed, exceeded = rl.less_than_or_equal(rl.mask(new_used, requested), hard)
        if not allowed:
            raise _forbidden(attrs, f"exceeded quota: {quota['metadata']['name']}, requested: "
                                    f"{rl.pretty(rl.mask(requested, exceeded))}, used: "
                                    f"{rl.pretty(rl.mask(used, exceeded))}, limited: "
                                    f"{rl.pretty(rl.mask(hard, exceeded))}")
        quota.setdefault("status", {})["used"] = rl.to_json(new_used)
    return result


class ResourceQuotaAdmission(AdmissionPlugin):
    name = "ResourceQuota"
    operations = ("CREATE", "UPDATE")

    def __init__(self) -> None:
        self.registry = Registry()
        self.waiting: dict[str, list[_Waiter]] = {}  # namespace -> writes not yet taken up
        self.draining: dict[str, asyncio.Task[None]] = {}  # namespace -> the task working through them

    def _evaluator(self, attrs: Attributes) -> Evaluator | None:
        res = attrs.resource
        if not attrs.namespace or not res.namespaced or (res.group, res.plural) in IGNORED:
            return None
        evaluator = self.registry.get(res.group, res.plural)
        return evaluator if evaluator.handles(attrs.operation, attrs.subresource) else None

    async def validate(self, attrs: Attributes) -> None:
        evaluator = self._evaluator(attrs)
        if evaluator is None:
            return
        registry = attrs.context.registry
        quotas_res = registry.resources.lookup("", "v1", "resourcequotas")
        assert quotas_res is not None
        namespace = attrs.namespace or ""
        if not registry.cache.list(quotas_res.key_prefix, namespace):
            return  # no quota here: nothing to check, nothing to wait for
        waiter = _Waiter(attrs, evaluator, asyncio.get_running_loop().create_future())
        self.waiting.setdefault(namespace, []).append(waiter)
        if namespace not in self.draining:
            self.draining[namespace] = asyncio.create_task(self._drain(registry, quotas_res, namespace),
                                                           name=f"quota-{namespace}")
        await waiter.done

    async def _drain(self, registry: Storage, quotas_res: ResourceType, namespace: str) -> None:
        """Check and charge the namespace's waiting writes, a batch at a time (one status write per quota for
        the whole batch), until none wait."""
        try:
            while batch := self.waiting.pop(namespace, None):
                try:
                    await self._charge(registry, quotas_res, namespace, batch)
                except Exception as exc:  # noqa: BLE001 - a failure answers every write of the batch
                    for waiter in batch:
                        waiter.finish(exc)
        finally:
            del self.draining[namespace]

    async def _charge(self, registry: Storage, quotas_res: ResourceType, namespace: str, batch: list[_Waiter]) -> None:
        """checkQuotas: each write against the quotas as the writes before it left them; the quotas that
        changed written once with a compare-and-swap; those that lost it read again and the writes still
        waiting checked again against them only (up to RETRIES times), so nothing is charged twice."""
        pending = batch
        names: set[str] | None = None  # the quotas still to charge (None: all of the namespace)
        last: errors.StatusError | None = None
        for _ in range(RETRIES + 1):
            if names is not None:  # a compare-and-swap lost: see the write that won (another API server's too)
                await registry.store.sync()
            original = [orjson.loads(e.raw) for e in registry.cache.list(quotas_res.key_prefix, namespace)]
            if names is not None:
                original = [q for q in original if q["metadata"]["name"] in names]
            quotas = original
            charged: list[_Waiter] = []
            for waiter in pending:
                try:
                    after = check_request(quotas, waiter.attrs, waiter.evaluator) if quotas else quotas
                except errors.StatusError as exc:
                    waiter.finish(exc)
                    continue
                if waiter.attrs.dry_run or after is quotas:
                    waiter.finish()
                    continue
                quotas = after
                charged.append(waiter)
            if not charged:
                return
            failed: set[str] = set()
            for before, after in zip(original, quotas, strict=True):
                if rl.equals(_used(before), _used(after)):
                    continue
                try:
                    await registry.update(quotas_res, namespace, after["metadata"]["name"], after,
                                          WriteOptions(field_manager=FIELD_MANAGER, subresource="status"),
                                          allow_create=False)
                except errors.StatusError as exc:
                    if exc.code not in (404, 409):
                        raise
                    last = exc
                    if exc.code == 409:
                        failed.add(after["metadata"]["name"])
            if not failed:
                for waiter in charged:
                    waiter.finish()
                return
            pending, names = charged, failed
        assert last is not None
        for waiter in pending:
            waiter.finish(last)
