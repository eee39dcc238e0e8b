"""Which columns and row printer serve each kind: one table keyed by (group, kind), plus CRD columns.

Each built-in row carries its printer from this table (`registry/kinds.py`); `printer_for` looks it up for rows
built without one."""

from __future__ import annotations

from typing import Any

import mini_kube.apiserver.printers.columns as c
import mini_kube.apiserver.printers.rows_apps as apps
import mini_kube.apiserver.printers.rows_cluster as cluster
import mini_kube.apiserver.printers.rows_core as core
import mini_kube.apiserver.printers.rows_pod as pod
from mini_kube.apiserver.printers.custom import custom_columns
from mini_kube.apiserver.printers.printer import Printer
from mini_kube.apiserver.resources import KindPrinter, ResourceType

_ADMISSION = "admissionregistration.k8s.io"
_RBAC = "rbac.authorization.k8s.io"
_STORAGE = "storage.k8s.io"

PRINTERS: dict[tuple[str, str], Printer] = {
    ("", "Pod"): Printer(c.POD, pod.pod, pod.pod_conditions),
    ("", "PodTemplate"): Printer(c.POD_TEMPLATE, pod.pod_template),
    ("", "ReplicationController"): Printer(c.REPLICATION_CONTROLLER, apps.replication_controller),
    ("", "Service"): Printer(c.SERVICE, core.service),
    ("", "Endpoints"): Printer(c.ENDPOINTS, core.endpoints),
    ("", "Node"): Printer(c.NODE, core.node),
    ("", "Event"): Printer(c.EVENT, core.event),
    ("events.k8s.io", "Event"): Printer(c.EVENT, core.events_v1_event),
    ("", "Namespace"): Printer(c.NAMESPACE, core.namespace),
    ("", "Secret"): Printer(c.SECRET, core.secret),
    ("", "ServiceAccount"): Printer(c.SERVICE_ACCOUNT, core.service_account),
    ("", "PersistentVolume"): Printer(c.PERSISTENT_VOLUME, core.persistent_volume),
    ("", "PersistentVolumeClaim"): Printer(c.PERSISTENT_VOLUME_CLAIM, core.persistent_volume_claim),
    ("", "ComponentStatus"): Printer(c.COMPONENT_STATUS, core.component_status),
    ("", "ConfigMap"): Printer(c.CONFIG_MAP, core.config_map),
    ("", "ResourceQuota"): Printer(c.RESOURCE_QUOTA, core.resource_quota),
    ("apps", "ReplicaSet"): Printer(c.REPLICA_SET, apps.replica_set),
    ("apps", "Deployment"): Printer(c.DEPLOYMENT, apps.deployment),
    ("apps", "DaemonSet"): Printer(c.DAEMON_SET, apps.daemon_set),
    ("apps", "StatefulSet"): Printer(c.STATEFUL_SET, apps.stateful_set),
    ("apps", "ControllerRevision"): Printer(c.CONTROLLER_REVISION, apps.controller_revision),
    ("batch", "Job"): Printer(c.JOB, apps.job),
    ("batch", "CronJob"): Printer(c.CRON_JOB, apps.cron_job),
    ("autoscaling", "Scale"): Printer(c.SCALE, apps.scale),
    ("autoscaling", "HorizontalPodAutoscaler"): Printer(c.HORIZONTAL_POD_AUTOSCALER, apps.horizontal_pod_autoscaler),
    ("policy", "PodDisruptionBudget"): Printer(c.POD_DISRUPTION_BUDGET, apps.pod_disruption_budget),
    ("networking.k8s.io", "Ingress"): Printer(c.INGRESS, cluster.ingress),
    ("networking.k8s.io", "IngressClass"): Printer(c.INGRESS_CLASS, cluster.ingress_class),
    ("networking.k8s.io", "NetworkPolicy"): Printer(c.NETWORK_POLICY, cluster.network_policy),
    ("discovery.k8s.io", "EndpointSlice"): Printer(c.ENDPOINT_SLICE, cluster.endpoint_slice),
    (_RBAC, "RoleBinding"): Printer(c.ROLE_BINDING, cluster.role_binding),
    (_RBAC, "ClusterRoleBinding"): Printer(c.CLUSTER_ROLE_BINDING, cluster.role_binding),
    ("certificates.k8s.io", "CertificateSigningRequest"):
        Printer(c.CERTIFICATE_SIGNING_REQUEST, cluster.certificate_signing_request),
    ("coordination.k8s.io", "Lease"): Printer(c.LEASE, cluster.lease),
    ("scheduling.k8s.io", "PriorityClass"): Printer(c.PRIORITY_CLASS, cluster.priority_class),
    ("node.k8s.io", "RuntimeClass"): Printer(c.RUNTIME_CLASS, cluster.runtime_class),
    (_STORAGE, "StorageClass"): Printer(c.STORAGE_CLASS, cluster.storage_class),
    (_STORAGE, "VolumeAttachment"): Printer(c.VOLUME_ATTACHMENT, cluster.volume_attachment),
    (_STORAGE, "CSIDriver"): Printer(c.CSI_DRIVER, cluster.csi_driver),
    (_STORAGE, "CSINode"): Printer(c.CSI_NODE, cluster.csi_node),
    (_STORAGE, "CSIStorageCapacity"): Printer(c.CSI_STORAGE_CAPACITY, cluster.csi_storage_capacity),
    (_ADMISSION, "MutatingWebhookConfiguration"): Printer(c.WEBHOOK_CONFIGURATION, cluster.webhook_configuration),
    (_ADMISSION, "ValidatingWebhookConfiguration"): Printer(c.WEBHOOK_CONFIGURATION, cluster.webhook_configuration),
    (_ADMISSION, "ValidatingAdmissionPolicy"): Printer(c.ADMISSION_POLICY, cluster.admission_policy),
    (_ADMISSION, "ValidatingAdmissionPolicyBinding"):
        Printer(c.ADMISSION_POLICY_BINDING, cluster.admission_policy_binding),
}
# Role, ClusterRole, LimitRange, CustomResourceDefinition and anything unknown: NAME and CREATED AT.
DEFAULT_PRINTER = Printer(c.DEFAULT, core.default_row, default=True)


def _custom_printer(resource: ResourceType) -> Printer:
    cols, cell_fns = custom_columns(tuple(resource.printer_columns))

    def row(obj: dict[str, Any], now: float) -> list:
        return [(obj.get("metadata") or {}).get("name", ""), *(fn(obj, now) for fn in cell_fns)]

    return Printer(cols, row)


def builtin_printer(group: str, kind: str) -> Printer:
    """A built-in kind's printer (the default one, NAME and CREATED AT, for kinds not in the table)."""
    return PRINTERS.get((group, kind), DEFAULT_PRINTER)


def printer_for(resource: ResourceType) -> KindPrinter:
    """The printer of a resource: its row's, else CRD columns for custom resources, the built-in table, else the
    default."""
    if resource.printer is not None:
        return resource.printer
    if resource.crd is not None:
        return _custom_printer(resource)
    return builtin_printer(resource.group, resource.kind)


def builtin_printer_for(resource: ResourceType) -> Printer:
    """The built-in printer of a resource (its columns and cells), whatever its row carries."""
    if resource.crd is not None:
        return _custom_printer(resource)
    return builtin_printer(resource.group, resource.kind)
