"""Per-kind validation as data: each built-in kind's name rule, create checks and update checks.

A kind's `Rules` is its row's `validator` (`registry/kinds.py` attaches them; custom resources get theirs from
`crd/rows.py`). Kinds without an entry get metadata validation only, with DNS-1123 subdomain names.
`validate(kind, group, obj, old)` and `metadata_errors(kind, group, ...)` look a built-in kind's rules up by name.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mini_kube.apiserver.resources import KindValidator, ResourceType, builtin_rows
from mini_kube.apiserver.validation import (
    batch,
    certificates,
    classes,
    cluster,
    config,
    csi,
    limits,
    policy,
    quota,
    rbac,
    revisions,
    services,
    storage,
    workloads,
)
from mini_kube.apiserver.validation.errs import FieldError, forbidden
from mini_kube.apiserver.validation.meta import (
    NameValidator,
    validate_object_meta,
    validate_object_meta_update,
)
from mini_kube.apiserver.validation.pods import validate_pod, validate_pod_template_spec, validate_pod_update
from mini_kube.machinery.names import (
    name_is_dns1035_label,
    name_is_dns_label,
    name_is_dns_subdomain,
    path_segment_name,
)
from mini_kube.machinery.quantity import parse_quantity

Obj = dict[str, Any]
Check = Callable[[Obj], list[FieldError]]
UpdateCheck = Callable[[Obj, Obj], list[FieldError]]


def any_name(name: str, prefix: bool) -> list[str]:
    """Kinds whose names upstream does not restrict (CertificateSigningRequest)."""
    return []


@dataclass(frozen=True, slots=True)
class Rules:
    """How one kind is validated. `update` replaces re-running `create` on updates when given. `core_metadata`:
    core's own ObjectMeta rules (finalizer names) apply on top of the generic ones every store runs."""

    name: NameValidator = name_is_dns_subdomain
    create: Check | None = None
    update: UpdateCheck | None = None
    core_metadata: bool = True

    def metadata_errors(self, obj: Obj, old: Obj | None, namespaced: bool = True) -> list[FieldError]:
        """Metadata errors of a create or update: the name rule, scope, labels, annotations, owners, finalizers."""
        if old is not None:
            return validate_object_meta_update(obj.get("metadata"), old.get("metadata"), kube=self.core_metadata)
        return validate_object_meta(obj.get("metadata"), namespaced, self.name, kube=self.core_metadata)

    def errors(self, obj: Obj, old: Obj | None = None) -> list[FieldError]:
        """The kind's own rules (not metadata) for a create (`old` None) or an update."""
        if old is not None and self.update is not None:
            return self.update(obj, old)
        return self.create(obj) if self.create is not None else []


def _pod_template(obj: Obj) -> list[FieldError]:
    return validate_pod_template_spec(obj.get("template"), "template")


def _namespace_update(new: Obj, old: Obj) -> list[FieldError]:
    """Namespace updates check metadata only (spec.finalizers change through `/finalize`)."""
    return []


def _pvc_update(new: Obj, old: Obj) -> list[FieldError]:
    """A claim's spec is fixed once created, except growing its storage request (and binding it once)."""
    spec, before = dict(new.get("spec") or {}), dict(old.get("spec") or {})
    errs: list[FieldError] = []
    grown = ((spec.get("resources") or {}).get("requests") or {}).get("storage")
    was = ((before.get("resources") or {}).get("requests") or {}).get("storage")
    a, b = parse_quantity(grown) if grown is not None else None, parse_quantity(was) if was is not None else None
    if a is not None and b is not None and a.value < b.value:
        errs.append(forbidden("spec.resources.requests.storage", "field can not be less than previous value"))
    for value in (spec, before):
        value.pop("resources", None)
        value.pop("volumeAttributesClassName", None)
    if not before.get("volumeName"):
        before["volumeName"] = spec.get("volumeName")
    if {k: v for k, v in spec.items() if v is not None} != {k: v for k, v in before.items() if v is not None}:
        errs.append(forbidden("spec", "spec is immutable after creation except resources.requests and "
                                      "volumeAttributesClassName for bound claims"))
    return errs


CORE = ""
APPS = "apps"
RBAC = "rbac.authorization.k8s.io"

RULES: dict[tuple[str, str], Rules] = {
    (CORE, "ConfigMap"): Rules(create=config.validate_config_map, update=config.validate_config_map_update),
    (CORE, "Secret"): Rules(create=config.validate_secret, update=config.validate_secret_update),
    (CORE, "Namespace"): Rules(name_is_dns_label, cluster.validate_namespace, _namespace_update),
    (CORE, "Service"): Rules(name_is_dns1035_label, services.validate_service, services.validate_service_update),
    (CORE, "Pod"): Rules(create=validate_pod, update=validate_pod_update),
    (CORE, "PodTemplate"): Rules(create=_pod_template),
    (CORE, "ReplicationController"): Rules(create=workloads.validate_replication_controller),
    (CORE, "Endpoints"): Rules(create=cluster.validate_endpoints),
    (CORE, "PersistentVolumeClaim"): Rules(create=cluster.validate_persistent_volume_claim, update=_pvc_update),
    # core/v1 Events skip core's own ObjectMeta rules (upstream keeps them lenient for old clients), but not the
    # generic ones every store runs in BeforeCreate/BeforeUpdate: a name (a path segment), labels, owners.
    (CORE, "Event"): Rules(path_segment_name, cluster.validate_core_event, core_metadata=False),
    (CORE, "Node"): Rules(create=classes.validate_node, update=classes.validate_node_update),
    (CORE, "PersistentVolume"): Rules(create=storage.validate_persistent_volume,
                                      update=storage.validate_persistent_volume_update),
    (CORE, "LimitRange"): Rules(create=limits.validate_limit_range),
    (CORE, "ResourceQuota"): Rules(create=quota.validate_resource_quota, update=quota.validate_resource_quota_update),
    ("storage.k8s.io", "VolumeAttachment"): Rules(create=storage.validate_volume_attachment,
                                                  update=storage.validate_volume_attachment_update),
    ("storage.k8s.io", "CSIDriver"): Rules(create=csi.validate_csi_driver, update=csi.validate_csi_driver_update),
    ("storage.k8s.io", "CSIStorageCapacity"): Rules(create=csi.validate_csi_storage_capacity,
                                                    update=csi.validate_csi_storage_capacity_update),
    ("storage.k8s.io", "CSINode"): Rules(create=csi.validate_csi_node, update=csi.validate_csi_node_update),
    ("storage.k8s.io", "StorageClass"): Rules(create=classes.validate_storage_class),
    ("node.k8s.io", "RuntimeClass"): Rules(create=classes.validate_runtime_class),
    ("events.k8s.io", "Event"): Rules(create=cluster.validate_events_v1_event),
    (APPS, "Deployment"): Rules(create=workloads.validate_deployment),
    (APPS, "ReplicaSet"): Rules(create=workloads.validate_replica_set),
    (APPS, "StatefulSet"): Rules(name_is_dns_label, workloads.validate_stateful_set,
                                 workloads.validate_stateful_set_update),
    (APPS, "DaemonSet"): Rules(create=workloads.validate_daemon_set),
    (APPS, "ControllerRevision"): Rules(create=revisions.validate_controller_revision,
                                        update=revisions.validate_controller_revision_update),
    ("batch", "Job"): Rules(create=batch.validate_job, update=batch.validate_job_update),
    ("batch", "CronJob"): Rules(create=batch.validate_cron_job),
    (RBAC, "Role"): Rules(path_segment_name, rbac.validate_role),
    (RBAC, "ClusterRole"): Rules(path_segment_name, rbac.validate_cluster_role),
    (RBAC, "RoleBinding"): Rules(path_segment_name, rbac.validate_role_binding,
                                 lambda new, old: rbac.validate_role_binding(new) + rbac.validate_binding_update(new,
                                                                                                                 old)),
    (RBAC, "ClusterRoleBinding"): Rules(path_segment_name, rbac.validate_cluster_role_binding,
                                        lambda new, old: rbac.validate_cluster_role_binding(new)
                                        + rbac.validate_binding_update(new, old)),
    ("networking.k8s.io", "Ingress"): Rules(create=policy.validate_ingress),
    ("networking.k8s.io", "IngressClass"): Rules(create=classes.validate_ingress_class,
                                                update=classes.validate_ingress_class_update),
    ("networking.k8s.io", "NetworkPolicy"): Rules(create=policy.validate_network_policy),
    ("autoscaling", "HorizontalPodAutoscaler"): Rules(create=policy.validate_horizontal_pod_autoscaler),
    ("policy", "PodDisruptionBudget"): Rules(create=policy.validate_pod_disruption_budget),
    ("coordination.k8s.io", "Lease"): Rules(create=cluster.validate_lease),
    ("discovery.k8s.io", "EndpointSlice"): Rules(create=cluster.validate_endpoint_slice,
                                                 update=cluster.validate_endpoint_slice_update),
    ("scheduling.k8s.io", "PriorityClass"): Rules(create=cluster.validate_priority_class,
                                                  update=cluster.validate_priority_class_update),
    ("certificates.k8s.io", "CertificateSigningRequest"): Rules(any_name, certificates.validate_csr,
                                                                certificates.validate_csr_update),
    # CRDs are validated by their strategy (crd/validation.py); their metadata as a custom resource's
    ("apiextensions.k8s.io", "CustomResourceDefinition"): Rules(core_metadata=False),
}
DEFAULT_RULES = Rules()
CUSTOM_METADATA = Rules(core_metadata=False)  # custom resources: the generic metadata rules only


def custom_resource_rules(create: Check, update: UpdateCheck) -> Rules:
    """The validator of a custom resource version: generic metadata rules, then its schema."""
    return Rules(create=create, update=update, core_metadata=False)


@functools.cache
def _namespaced() -> dict[tuple[str, str], bool]:
    return {(r.group, r.kind): r.namespaced for r in builtin_rows()}


def name_validator(kind: str, group: str = "") -> NameValidator:
    """The name rule of a kind (DNS-1123 subdomain unless the table says otherwise)."""
    return RULES.get((group, kind), DEFAULT_RULES).name


def rules_for(kind: str, group: str) -> Rules:
    """A built-in kind's rules (the validator its row carries)."""
    return RULES.get((group, kind), DEFAULT_RULES)


def metadata_errors(kind: str, group: str, obj: Obj, old: Obj | None = None, namespaced: bool | None = None,
                    builtin: bool = True) -> list[FieldError]:
    """Metadata errors of a create or update: the kind's name rule, scope, labels, annotations, owners, finalizers.

    `builtin=False` (custom resources) leaves out core's extra rule on finalizer names."""
    if namespaced is None:
        namespaced = _namespaced().get((group, kind), True)
    rules = rules_for(kind, group) if builtin else CUSTOM_METADATA
    return rules.metadata_errors(obj, old, namespaced)


def validator_of(res: ResourceType) -> KindValidator:
    """The validator of a served resource: the row's own (rows built without one: by the kind's name)."""
    if res.validator is not None:
        return res.validator
    return CUSTOM_METADATA if res.crd is not None else rules_for(res.kind, res.group)


def validate_metadata(res: ResourceType, obj: Obj, old: Obj | None = None) -> list[FieldError]:
    """Metadata errors for an object of a served resource (built-in or custom)."""
    return validator_of(res).metadata_errors(obj, old, res.namespaced)


def validate(kind: str, group: str, obj: Obj, old: Obj | None = None) -> list[FieldError]:
    """The kind's own rules (not metadata) for a create (`old` None) or an update of a built-in kind."""
    return rules_for(kind, group).errors(obj, old)


def validate_all(kind: str, group: str, obj: Obj, old: Obj | None = None) -> list[FieldError]:
    """Metadata errors followed by the kind's own rules, as the server reports them."""
    return metadata_errors(kind, group, obj, old) + validate(kind, group, obj, old)


__all__ = ["RULES", "Rules", "custom_resource_rules", "metadata_errors", "name_validator", "rules_for", "validate",
           "validate_all", "validate_metadata", "validator_of"]
