"""The default admission plugin list of a server, in upstream's order.

Mutating: NamespaceLifecycle, ServiceAccount, DefaultTolerationSeconds, then MutatingAdmissionWebhook (webhooks
run after the built-in mutators). Validating: the same built-ins, then ValidatingAdmissionPolicy, then ValidatingAdmissionWebhook.
Plugins added after these (RBAC escalation checks) run after them.
"""

from __future__ import annotations

from ..registry.reader import ObjectReader
from . import config_validation
from .chain import AdmissionPlugin
from .default_tolerations import DefaultTolerationSeconds
from .namespace_lifecycle import NamespaceLifecycle
from .policy import ValidatingAdmissionPolicyPlugin
from .service_account import ServiceAccountAdmission
from .webhook_client import WebhookClient
from .webhooks import MutatingWebhooks, ValidatingWebhooks


def default_plugins(objects: ObjectReader, webhooks: WebhookClient, *,
                    require_default_service_account: bool = False) -> list[AdmissionPlugin]:
    """The built-in plugins, reading policies and webhook configurations through `objects` and calling webhooks
    through `webhooks` (its owner closes it)."""
    config_validation.register()
    return [
        NamespaceLifecycle(),
        ServiceAccountAdmission(require_default=require_default_service_account),
        DefaultTolerationSeconds(),
        MutatingWebhooks(webhooks),
        ValidatingAdmissionPolicyPlugin(objects),
        ValidatingWebhooks(webhooks),
    ]
