"""The default admission plugin list of a server, in upstream's order.

Mutating: NamespaceLifecycle, ServiceAccount, DefaultTolerationSeconds, then MutatingAdmissionWebhook (webhooks
run after the built-in mutators). Validating: the same built-ins, PodSecurity, then ValidatingAdmissionPolicy, then
ValidatingAdmissionWebhook.
Plugins added later (RBAC escalation checks) run after these.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..datadir import StartupError
from . import config_validation, podsecurity
from .chain import AdmissionPlugin
from .default_tolerations import DefaultTolerationSeconds
from .namespace_lifecycle import NamespaceLifecycle
from .podsecurity import PodSecurity
from .policy import ValidatingAdmissionPolicyPlugin
from .service_account import ServiceAccountAdmission
from .webhook_client import WebhookClient
from .webhooks import MutatingWebhooks, ValidatingWebhooks

if TYPE_CHECKING:
    from ..server import ApiServer


def pod_security(server: ApiServer) -> PodSecurity:
    """PodSecurity with the settings of --admission-control-config-file, reading Namespaces and Pods from the
    server's cache."""
    try:
        configuration = podsecurity.load(server.config.admission_control_config_file)
    except podsecurity.ConfigurationError as exc:
        raise StartupError(f"failed to initialize admission: {exc}") from None
    namespaces = server.resources.lookup("", "v1", "namespaces")
    pods = server.resources.lookup("", "v1", "pods")
    assert namespaces is not None and pods is not None

    def namespace(name: str) -> dict[str, Any] | None:
        entry = server.registry.find(namespaces, None, name)
        return entry.obj if entry is not None else None

    def pods_in(name: str) -> list[dict[str, Any]]:
        return [entry.obj for entry in server.cache.list(pods.key_prefix, name)]

    return PodSecurity(configuration, namespace, pods_in)


def default_plugins(server: ApiServer) -> list[AdmissionPlugin]:
    """Build the plugins for `server` (its webhook client is closed when the server stops)."""
    config_validation.register()
    client = WebhookClient(server.registry)
    server.on_stop.append(client.close)
    return [
        NamespaceLifecycle(),
        ServiceAccountAdmission(require_default=bool(server.config.extra.get("require_default_service_account"))),
        DefaultTolerationSeconds(),
        pod_security(server),
        MutatingWebhooks(client),
        ValidatingAdmissionPolicyPlugin(server.registry),
        ValidatingWebhooks(client),
    ]
