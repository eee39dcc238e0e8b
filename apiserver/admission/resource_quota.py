"""ResourceQuota: refuse a write that would take a namespace past one of its quotas, and charge what it uses to
the quotas' status, as upstream's plugin (k8s.io/apiserver/pkg/admission/plugin/resourcequota) does.

The last validating plugin. For each quota of the namespace that covers the object (it tracks one of the
object's resources and the object falls under all its scopes), the object must carry what the quota requires
(`failed quota: q: must specify cpu for: app`), the quota's usage must be known (`status unknown for quota`),
and the usage plus what the write adds must stay within `status.hard` (`exceeded quota: q, requested: pods=1,
used: pods=2, limited: pods=2`): each a 403. The new usage is then written to each quota's status with a
compare-and-swap on its resourceVersion; a quota another writer changed meanwhile is read again and checked
again (the quotas already charged are not charged twice), so concurrent creates never overshoot. Writes in one
namespace take turns in this server. Dry runs are checked but charge nothing; the quota controller gives back
what deleted objects used.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import orjson
from mini_kube.machinery.quota import resources as rl
from mini_kube.machinery.quota.evaluators import IGNORED, Evaluator, Registry, hard_names
from mini_kube.machinery.times import now

from .. import errors
from ..registry.generic import WriteOptions
from .chain import AdmissionPlugin, Attributes

Obj = dict[str, Any]
RETRIES = 3  # upstream's: quotas that lost a compare-and-swap are read and checked again this many times
FIELD_MANAGER = "kube-apiserver"


class _NamespaceLocks:
    """One lock per namespace while someone holds or waits for it."""

    def __init__(self) -> None:
        self._locks: dict[str, tuple[asyncio.Lock, int]] = {}

    @contextlib.asynccontextmanager
    async def hold(self, namespace: str) -> AsyncIterator[None]:
        lock, users = self._locks.get(namespace) or (asyncio.Lock(), 0)
        self._locks[namespace] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._locks[namespace]
            if users == 1:
                del self._locks[namespace]
            else:
                self._locks[namespace] = (lock, users - 1)


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
        self.locks = _NamespaceLocks()

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
        async with self.locks.hold(namespace):
            pending: set[str] | None = None  # the quotas still to charge (None: all of the namespace)
            last: errors.StatusError | None = None
            for _ in range(RETRIES + 1):
                quotas = [orjson.loads(e.raw) for e in registry.cache.list(quotas_res.key_prefix, namespace)]
                if pending is not None:
                    quotas = [q for q in quotas if q["metadata"]["name"] in pending]
                if not quotas:
                    return
                charged = check_request(quotas, attrs, evaluator)
                if attrs.dry_run:
                    return
                failed: set[str] = set()
                for before, after in zip(quotas, charged, strict=True):
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
                    return
                pending = failed
            assert last is not None
            raise last

