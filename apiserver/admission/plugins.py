"""The default admission plugin list of a server, in upstream's order.

Mutating: NamespaceLifecycle, LimitRanger, ServiceAccount, Priority, DefaultTolerationSeconds, RuntimeClass, then
MutatingAdmissionWebhook (webhooks run after the built-in mutators). Validating: the same built-ins with PodSecurity
before RuntimeClass, then ValidatingAdmissionPolicy, then ValidatingAdmissionWebhook, then ResourceQuota (last, so
that only writes every other plugin let through are charged).
RBAC escalation checks (assemble.py) go just before ResourceQuota.
"""

from __future__ import annotations

from typing import Any

from ..datadir import StartupError
from ..registry.reader import ObjectReader
from . import config_validation, podsecurity
from .chain import AdmissionPlugin
from .default_tolerations import DefaultTolerationSeconds
from .limit_ranger import LimitRanger
from .namespace_lifecycle import NamespaceLifecycle
from .podsecurity import PodSecurity
from .policy import ValidatingAdmissionPolicyPlugin
from .priority import PriorityAdmission
from .resource_quota import ResourceQuotaAdmission
from .runtime_class import RuntimeClassAdmission
from .service_account import ServiceAccountAdmission
from .webhook_client import WebhookClient
from .webhooks import MutatingWebhooks, ValidatingWebhooks


def pod_security(objects: ObjectReader, config_file: str | None) -> PodSecurity:
    """PodSecurity with the settings of --admission-control-config-file (`config_file`), reading Namespaces and
    Pods through `objects`."""
    try:
        configuration = podsecurity.load(config_file)
    except podsecurity.ConfigurationError as exc:
        raise StartupError(f"failed to initialize admission: {exc}") from None
    namespaces = objects.resources.lookup("", "v1", "namespaces")
    pods = objects.resources.lookup("", "v1", "pods")
    assert namespaces is not None and pods is not None

    def namespace(name: str) -> dict[str, Any] | None:
        entry = objects.find(namespaces, None, name)
        return entry.obj if entry is not None else None

    def pods_in(name: str) -> list[dict[str, Any]]:
        return [entry.obj for entry in objects.cache.list(pods.key_prefix, name)]

    return PodSecurity(configuration, namespace, pods_in)


def default_plugins(objects: ObjectReader, webhooks: WebhookClient, *, require_default_service_account: bool = False,
                    admission_control_config_file: str | None = None) -> list[AdmissionPlugin]:
    """The built-in plugins, reading policies, webhook configurations, Namespaces and Pods through `objects` and
    calling webhooks through `webhooks` (its owner closes it)."""
    config_validation.register()
    return [
        NamespaceLifecycle(),
        LimitRanger(),
        ServiceAccountAdmission(require_default=require_default_service_account),
        PriorityAdmission(),
        DefaultTolerationSeconds(),
        pod_security(objects, admission_control_config_file),
        RuntimeClassAdmission(),
        MutatingWebhooks(webhooks),
        ValidatingAdmissionPolicyPlugin(objects),
        ValidatingWebhooks(webhooks),
        ResourceQuotaAdmission(),
    ]
