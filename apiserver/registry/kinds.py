"""The kinds the server serves, each a row of the resource table with its parts: the strategy the registry writes
it through, the validator and the Table printer.

Built-in rows come from `resources.BUILTIN_TABLE` with their strategy from `builtin_strategies` (upstream's
per-kind strategy flags and subclasses), their validator from `validation.kinds.RULES` and their printer from
`printers.registry.PRINTERS`. A CustomResourceDefinition's rows get theirs from the CRD: one strategy for its
versions, a validator and a printer per version. Nothing downstream looks a kind's parts up by its name.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from ..crd.conversion_webhook import WebhookConverter
from ..crd.printers import TablePrinter
from ..crd.rows import compiled_schemas, resource_rows
from ..crd.schema_validation import VersionSchema
from ..errors import FieldError
from ..resources import KindPrinter, ResourceType, builtin_rows
from ..validation.kinds import Rules, custom_resource_rules, rules_for
from .strategies.certificates import CertificateSigningRequestStrategy
from .strategies.crd import CrdStrategy
from .strategies.custom import CustomResourceStrategy
from .strategies.daemonset import DaemonSetStrategy
from .strategies.event import EventsV1Strategy
from .strategies.hpa import HorizontalPodAutoscalerStrategy
from .strategies.job import JobStrategy
from .strategies.namespace import NamespaceStrategy
from .strategies.node import NodeStrategy
from .strategies.pod import PodStrategy
from .strategies.service import ServiceStrategy
from .strategies.volume import PersistentVolumeClaimStrategy, PersistentVolumeStrategy
from .strategy import STATUS_METADATA, Strategy

DEFAULT_SERVICE_CIDR = "10.0.0.0/24"
DEFAULT_NODE_PORTS = (30000, 32767)
APPS = "apps"
ADMISSION = "admissionregistration.k8s.io"
NETWORKING = "networking.k8s.io"
FLOWCONTROL = "flowcontrol.apiserver.k8s.io"
STORAGE = "storage.k8s.io"


def builtin_strategies(service_cidr: str = DEFAULT_SERVICE_CIDR,
                       node_ports: tuple[int, int] = DEFAULT_NODE_PORTS) -> dict[tuple[str, str], Strategy]:
    """(group, kind) -> the kind's strategy, for kinds whose strategy is not the generic one (fresh instances:
    a Service strategy holds its in-flight allocations)."""
    tracked = Strategy(generation=True)

    def conditional(*, generation: bool = False, status_metadata: tuple[str, ...] = STATUS_METADATA) -> Strategy:
        """A kind whose updates must name the resourceVersion they replace (AllowUnconditionalUpdate false)."""
        return Strategy(generation=generation, status_metadata=status_metadata, unconditional_update=False)

    return {
        ("", "Namespace"): NamespaceStrategy(),
        ("", "Node"): NodeStrategy(),
        ("", "Pod"): PodStrategy(returns_deleted_object=True,
                                 status_metadata=tuple(k for k in STATUS_METADATA if k != "ownerReferences")),
        ("", "Service"): ServiceStrategy(service_cidr, node_ports, returns_deleted_object=True),
        ("", "ServiceAccount"): Strategy(returns_deleted_object=True),
        ("", "PersistentVolume"): PersistentVolumeStrategy(returns_deleted_object=True),
        ("", "PersistentVolumeClaim"): PersistentVolumeClaimStrategy(returns_deleted_object=True),
        ("", "ReplicationController"): Strategy(generation=True, default_gc_policy="Orphan"),
        (APPS, "Deployment"): Strategy(generation=True,
                                       status_metadata=tuple(k for k in STATUS_METADATA if k != "labels")),
        (APPS, "ReplicaSet"): tracked,
        (APPS, "StatefulSet"): tracked,
        (APPS, "DaemonSet"): DaemonSetStrategy(generation=True),
        ("batch", "Job"): JobStrategy(generation=True),
        ("batch", "CronJob"): tracked,
        ("policy", "PodDisruptionBudget"): conditional(generation=True),
        ("autoscaling", "HorizontalPodAutoscaler"): HorizontalPodAutoscalerStrategy(generation=True),
        ("events.k8s.io", "Event"): EventsV1Strategy(),
        ("apiextensions.k8s.io", "CustomResourceDefinition"): CrdStrategy(generation=True,
                                                                          unconditional_update=False),
        ("apiregistration.k8s.io", "APIService"): conditional(),
        ("discovery.k8s.io", "EndpointSlice"): tracked,
        ("scheduling.k8s.io", "PriorityClass"): tracked,
        ("coordination.k8s.io", "Lease"): conditional(),
        ("node.k8s.io", "RuntimeClass"): conditional(),
        (STORAGE, "StorageClass"): Strategy(returns_deleted_object=True),
        (STORAGE, "CSIDriver"): conditional(),
        (STORAGE, "CSINode"): conditional(),
        (STORAGE, "CSIStorageCapacity"): conditional(),
        (STORAGE, "VolumeAttachment"): conditional(status_metadata=()),
        ("certificates.k8s.io", "CertificateSigningRequest"): CertificateSigningRequestStrategy(),
        (NETWORKING, "Ingress"): tracked,
        (NETWORKING, "IngressClass"): tracked,
        (NETWORKING, "NetworkPolicy"): tracked,
        (ADMISSION, "MutatingWebhookConfiguration"): conditional(generation=True),
        (ADMISSION, "ValidatingWebhookConfiguration"): conditional(generation=True),
        (ADMISSION, "ValidatingAdmissionPolicy"): conditional(generation=True, status_metadata=()),
        (ADMISSION, "ValidatingAdmissionPolicyBinding"): conditional(generation=True),
        (FLOWCONTROL, "FlowSchema"): Strategy(generation=True, status_metadata=()),
        (FLOWCONTROL, "PriorityLevelConfiguration"): Strategy(generation=True, status_metadata=()),
    }


class BuiltinPrinter:
    """A built-in kind's printer from `printers/`, loaded when it first prints (start-up does not import the
    printers: most servers never answer a Table)."""

    def __init__(self, group: str, kind: str) -> None:
        self.group, self.kind = group, kind
        self._printer: KindPrinter | None = None

    def table(self, objs: Iterable[dict[str, Any]], now: datetime, include_object: str = "Metadata",
              list_meta: Mapping[str, Any] | None = None, headers: bool = True, version: str = "v1"
              ) -> dict[str, Any]:
        if self._printer is None:
            from ..printers.registry import builtin_printer

            self._printer = builtin_printer(self.group, self.kind)
        return self._printer.table(objs, now, include_object, list_meta, headers=headers, version=version)


def builtin_resources(service_cidr: str = DEFAULT_SERVICE_CIDR,
                      node_ports: tuple[int, int] = DEFAULT_NODE_PORTS) -> list[ResourceType]:
    """Fresh built-in rows with their parts (each server gets its own: strategies hold allocation state)."""
    strategies = builtin_strategies(service_cidr, node_ports)
    rows = builtin_rows()
    for row in rows:
        key = (row.group, row.kind)
        row.strategy = strategies.get(key) or Strategy()
        row.validator = rules_for(row.kind, row.group)
        row.printer = BuiltinPrinter(row.group, row.kind)
    return rows


def custom_resources(crd: dict[str, Any], converter: WebhookConverter | None = None) -> list[ResourceType]:
    """The rows a CRD serves (one per served version), with their parts: one strategy for the CRD's versions
    (converting through `converter` when the CRD's conversion strategy is Webhook), each version's schema as its
    validator, its printer columns as its printer."""
    schemas = compiled_schemas(crd)
    by_webhook = ((crd.get("spec") or {}).get("conversion") or {}).get("strategy") == "Webhook"
    strategy = CustomResourceStrategy(schemas, converter if by_webhook else None)
    rows = resource_rows(crd, schemas)
    for row in rows:
        row.strategy = strategy
        row.validator = _schema_rules(schemas[row.version])
        row.printer = TablePrinter(row.printer_columns)
    return rows


def _schema_rules(schema: VersionSchema) -> Rules:
    """A custom resource version's validator: its schema (OpenAPI and CEL rules) on create and update."""

    def create(obj: dict[str, Any]) -> list[FieldError]:
        return schema.validate(obj, None)

    return custom_resource_rules(create, schema.validate)
