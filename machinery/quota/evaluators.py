"""Quota evaluators: for one resource, which quota names it charges, what an object uses, and whether a quota
(its hard names and scopes) covers the object. Upstream's pod, service and persistent volume claim evaluators,
and the object count evaluator every other resource gets (`count/<resource>.<group>`, with the legacy names
`configmaps`, `secrets`, `replicationcontrollers` and `resourcequotas` as aliases)."""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable
from decimal import Decimal
from typing import Any

from mini_kube.machinery.quantity import Quantity

from . import pods
from .resources import ResourceList, add, intersection, parse_list, quantity

Obj = dict[str, Any]
GroupResource = tuple[str, str]
STORAGE_CLASS_SUFFIX = ".storageclass.storage.k8s.io/"
LEGACY_ALIASES: dict[GroupResource, str] = {("", "configmaps"): "configmaps", ("", "resourcequotas"): "resourcequotas",
                                            ("", "replicationcontrollers"): "replicationcontrollers",
                                            ("", "secrets"): "secrets"}
# virtual resources that are never stored, and events, which quota never counted
IGNORED: frozenset[GroupResource] = frozenset((
    ("", "bindings"), ("", "componentstatuses"), ("authentication.k8s.io", "tokenreviews"),
    ("authentication.k8s.io", "selfsubjectreviews"), ("authorization.k8s.io", "subjectaccessreviews"),
    ("authorization.k8s.io", "selfsubjectaccessreviews"), ("authorization.k8s.io", "localsubjectaccessreviews"),
    ("authorization.k8s.io", "selfsubjectrulesreviews"), ("", "events"), ("events.k8s.io", "events")))


def object_count_name(group: str, resource: str) -> str:
    return f"count/{resource}.{group}" if group else f"count/{resource}"


def scope_selectors(quota: Obj) -> list[Obj]:
    """A quota's scopes as selector requirements (each scope an `Exists`), then its scopeSelector's."""
    spec = quota.get("spec") or {}
    selectors = [{"scopeName": scope, "operator": "Exists"} for scope in spec.get("scopes") or ()]
    return selectors + list((spec.get("scopeSelector") or {}).get("matchExpressions") or ())


def hard_names(quota: Obj) -> list[str]:
    return list(((quota.get("status") or {}).get("hard") or {}).keys())


class Evaluator:
    """Object counting for one resource; subclasses measure more."""

    def __init__(self, group: str, resource: str) -> None:
        self.group_resource = (group, resource)
        alias = LEGACY_ALIASES.get(self.group_resource)
        self.names = (object_count_name(group, resource), *((alias,) if alias else ()))

    def handles(self, operation: str, subresource: str) -> bool:
        """Whether this write may change what the resource uses (object counts: creates only)."""
        return operation == "CREATE" and not subresource

    def matching_resources(self, names: Iterable[str]) -> list[str]:
        return intersection(names, self.names)

    def matches_scope(self, selector: Obj, obj: Obj) -> bool:
        return False

    def matching_scopes(self, obj: Obj, selectors: list[Obj]) -> list[Obj]:
        return [s for s in selectors if self.matches_scope(s, obj)]

    def matches(self, quota: Obj, obj: Obj) -> bool:
        """Whether the quota tracks something of this resource and the object falls under all its scopes."""
        if not self.matching_resources(hard_names(quota)):
            return False
        return all(self.matches_scope(s, obj) for s in scope_selectors(quota))

    def constraints(self, required: list[str], obj: Obj) -> str | None:
        """What the object lacks for a quota that tracks `required` (an error text), or None."""
        return None

    def usage(self, obj: Obj, now: dt.datetime) -> ResourceList:
        return {name: quantity(1) for name in self.names}

    def usage_stats(self, objects: Iterable[Obj], selectors: list[Obj], names: list[str],
                    now: dt.datetime) -> ResourceList:
        """CalculateUsageStats: the summed usage of the objects under every selector, each name of `names`
        zero at least."""
        used: ResourceList = {name: quantity(0) for name in names}
        for obj in objects:
            if all(self.matches_scope(s, obj) for s in selectors):
                used = add(used, self.usage(obj, now))
        return used


class PodEvaluator(Evaluator):
    def __init__(self) -> None:
        super().__init__("", "pods")

    def handles(self, operation: str, subresource: str) -> bool:
        return (operation == "CREATE" and not subresource) or (operation == "UPDATE" and subresource == "resize")

    def matching_resources(self, names: Iterable[str]) -> list[str]:
        names = list(names)
        result = intersection(names, pods.POD_RESOURCES)
        return result + [n for n in names if n.startswith(pods.POD_RESOURCE_PREFIXES) or pods.is_extended_for_quota(n)]

    def matches_scope(self, selector: Obj, obj: Obj) -> bool:
        return pods.matches_scope(selector, obj)

    def constraints(self, required: list[str], obj: Obj) -> str | None:
        return pods.missing_requests(required, obj)

    def usage(self, obj: Obj, now: dt.datetime) -> ResourceList:
        return pods.usage(obj, now)


class ServiceEvaluator(Evaluator):
    NAMES = ("count/services", "services", "services.nodeports", "services.loadbalancers")

    def __init__(self) -> None:
        super().__init__("", "services")

    def handles(self, operation: str, subresource: str) -> bool:
        return operation in ("CREATE", "UPDATE") and not subresource  # a Service may change its type

    def matching_resources(self, names: Iterable[str]) -> list[str]:
        return intersection(names, self.NAMES)

    def usage(self, obj: Obj, now: dt.datetime) -> ResourceList:
        spec = obj.get("spec") or {}
        ports = spec.get("ports") or []
        node_ports, balancers = 0, 0
        if spec.get("type") == "NodePort":
            node_ports = len(ports)
        elif spec.get("type") == "LoadBalancer":
            balancers = 1
            if spec.get("allocateLoadBalancerNodePorts") is False:  # only ports that ask for one explicitly
                node_ports = sum(1 for p in ports if p.get("nodePort"))
            else:
                node_ports = len(ports)
        return {"count/services": quantity(1), "services": quantity(1),
                "services.loadbalancers": quantity(balancers), "services.nodeports": quantity(node_ports)}


def quota_service_type(service: Obj) -> str:
    """GetQuotaServiceType: NodePort and LoadBalancer count; every other type is the same to quota."""
    kind = (service.get("spec") or {}).get("type") or ""
    return kind if kind in ("NodePort", "LoadBalancer") else ""


class ClaimEvaluator(Evaluator):
    NAMES = ("persistentvolumeclaims", "requests.storage")

    def __init__(self) -> None:
        super().__init__("", "persistentvolumeclaims")

    def handles(self, operation: str, subresource: str) -> bool:
        return operation in ("CREATE", "UPDATE") and not subresource

    def matching_resources(self, names: Iterable[str]) -> list[str]:
        result = []
        for name in names:
            if name == "count/persistentvolumeclaims" or name in self.NAMES or \
                    any(name.endswith(STORAGE_CLASS_SUFFIX + n) for n in self.NAMES):
                result.append(name)
        return result

    def usage(self, obj: Obj, now: dt.datetime) -> ResourceList:
        spec = obj.get("spec") or {}
        storage_class = spec.get("storageClassName") or \
            ((obj.get("metadata") or {}).get("annotations") or {}).get("volume.beta.kubernetes.io/storage-class") or ""
        result: ResourceList = {"persistentvolumeclaims": quantity(1), "count/persistentvolumeclaims": quantity(1)}
        if storage_class:
            result[storage_class + STORAGE_CLASS_SUFFIX + "persistentvolumeclaims"] = quantity(1)
        requested = parse_list((spec.get("resources") or {}).get("requests")).get("storage")
        if requested is not None:
            allocated = parse_list((obj.get("status") or {}).get("allocatedResources")).get("storage")
            if allocated is not None and allocated.value > requested.value:  # an expansion that failed still counts
                requested = allocated
            if requested.value != requested.value.to_integral_value():  # whole bytes (issue 94313)
                requested = Quantity(Decimal(math.ceil(requested.value)), requested.format)
            result["requests.storage"] = requested
            if storage_class:
                result[storage_class + STORAGE_CLASS_SUFFIX + "requests.storage"] = requested
        return result


def _allocated_storage(claim: Obj) -> Any:
    return ((claim.get("status") or {}).get("allocatedResources") or {}).get("storage")


def update_changes_usage(group_resource: GroupResource, old: Obj, new: Obj, now: dt.datetime) -> bool:
    """DefaultUpdateFilter: whether an update may lower what quota counts for the object (a Pod that ended, a
    Service that changed type, a claim whose allocated storage changed), so its quotas are recalculated."""
    if group_resource == ("", "pods"):
        return pods.charged(old, now) and not pods.charged(new, now)
    if group_resource == ("", "services"):
        return quota_service_type(old) != quota_service_type(new)
    if group_resource == ("", "persistentvolumeclaims"):
        return bool(_allocated_storage(old) != _allocated_storage(new))
    return False


class Registry:
    """The evaluator of each resource: the special ones, else object counting (made on first use)."""

    def __init__(self) -> None:
        self._evaluators: dict[GroupResource, Evaluator] = {
            e.group_resource: e for e in (PodEvaluator(), ServiceEvaluator(), ClaimEvaluator())}

    def get(self, group: str, resource: str) -> Evaluator:
        found = self._evaluators.get((group, resource))
        if found is None:
            found = self._evaluators[(group, resource)] = Evaluator(group, resource)
        return found

    def find(self, group: str, resource: str) -> Evaluator | None:
        return self._evaluators.get((group, resource))

    def all(self) -> list[Evaluator]:
        return list(self._evaluators.values())
