"""The default admission plugin list of a server, in upstream's order.

Mutating: NamespaceLifecycle, ServiceAccount, DefaultTolerationSeconds, then MutatingAdmissionWebhook (webhooks
run after the built-in mutators). Validating: the same built-ins, then ValidatingAdmissionPolicy, then ValidatingAdmissionWebhook.
Plugins added later (RBAC escalation checks) run after these.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import config_validation
from .chain import AdmissionPlugin
from .default_tolerations import DefaultTolerationSeconds
from .namespace_lifecycle import NamespaceLifecycle
from .policy import ValidatingAdmissionPolicyPlugin
from .service_account import ServiceAccountAdmission
from .webhook_client import WebhookClient
from .webhooks import MutatingWebhooks, ValidatingWebhooks

if TYPE_CHECKING:
    from ..server import ApiServer


def default_plugins(server: ApiServer) -> list[AdmissionPlugin]:
    """Build the plugins for `server` (its webhook client is closed when the server stops)."""
    config_validation.register()
    client = WebhookClient(server.registry)
    server.on_stop.append(client.close)
    return [
        NamespaceLifecycle(),
        ServiceAccountAdmission(require_default=bool(server.config.extra.get("require_default_service_account"))),
        DefaultTolerationSeconds(),
        MutatingWebhooks(client),
        ValidatingAdmissionPolicyPlugin(server.registry),
        ValidatingWebhooks(client),
    ]
