"""ServiceAccount admission: pods run as a service account that exists, with its API token mounted.

Mirrors plugin/pkg/admission/serviceaccount (1.32) on pod creation: `spec.serviceAccountName` defaults to
`default` (and `spec.serviceAccount` mirrors it, as the v1 conversion does); a named account that does not
exist is refused with `pods "x" is forbidden: error looking up service account ns/sa: serviceaccount "sa" not
found`; unless automounting is off (pod, then account), a projected `kube-api-access-xxxxx` volume (token,
kube-root-ca.crt, namespace) is mounted read-only at /var/run/secrets/kubernetes.io/serviceaccount in every
container; the account's imagePullSecrets are copied when the pod has none.

One deliberate difference: upstream also refuses pods while a namespace's `default` account is missing (the
token controller creates it). mini-kube has no such controller yet, so a missing `default` account is
tolerated (nothing mounted) unless `require_default` is set.
"""

from __future__ import annotations

import secrets
from typing import Any

from .. import errors
from ..registry.generic import GENERATE_CHARS
from .chain import AdmissionPlugin, Attributes

DEFAULT = "default"
MOUNT_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
VOLUME_PREFIX = "kube-api-access-"
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
TOKEN_EXPIRATION = 3607


def token_volume(name: str) -> dict[str, Any]:
    """The projected volume upstream mounts: a bound token, the cluster CA bundle and the namespace."""
    return {"name": name, "projected": {"sources": [
        {"serviceAccountToken": {"expirationSeconds": TOKEN_EXPIRATION, "path": "token"}},
        {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
        {"downwardAPI": {"items": [{"path": "namespace",
                                    "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}},
    ], "defaultMode": 420}}


def mount_token(spec: dict[str, Any]) -> None:
    """Add the token volume and mount it in every (init) container that has nothing at the mount path."""
    volumes = spec.get("volumes") or []
    existing = next((v.get("name") for v in volumes if str(v.get("name", "")).startswith(VOLUME_PREFIX)), None)
    name = existing or VOLUME_PREFIX + "".join(secrets.choice(GENERATE_CHARS) for _ in range(5))
    needed = False
    for field in ("initContainers", "containers"):
        for container in spec.get(field) or ():
            mounts = container.get("volumeMounts") or []
            if any(m.get("mountPath") == MOUNT_PATH for m in mounts):
                continue
            container["volumeMounts"] = [*mounts, {"name": name, "readOnly": True, "mountPath": MOUNT_PATH}]
            needed = True
    if needed and existing is None:
        spec["volumes"] = [*volumes, token_volume(name)]


class ServiceAccountAdmission(AdmissionPlugin):
    name = "ServiceAccount"
    operations = ("CREATE",)

    def __init__(self, require_default: bool = False) -> None:
        self.require_default = require_default

    def handles(self, attrs: Attributes) -> bool:
        res = attrs.resource
        return (attrs.operation == "CREATE" and res.group == "" and res.plural == "pods" and not attrs.subresource
                and isinstance(attrs.obj, dict))

    def _account(self, attrs: Attributes, name: str) -> dict[str, Any] | None:
        registry = attrs.context.registry
        res = registry.resources.lookup("", "v1", "serviceaccounts")
        entry = registry.find(res, attrs.namespace, name) if res is not None else None
        if entry is None and (name != DEFAULT or self.require_default):
            pod = attrs.name
            raise errors.forbidden_error(
                f'pods "{pod}" is forbidden: error looking up service account {attrs.namespace}/{name}: '
                f'serviceaccount "{name}" not found', "pods", pod)
        return entry.obj if entry is not None else None

    async def mutate(self, attrs: Attributes) -> None:
        pod = attrs.obj
        assert pod is not None
        spec = pod.setdefault("spec", {})
        if MIRROR_ANNOTATION in ((pod.get("metadata") or {}).get("annotations") or {}):
            return
        name = spec.get("serviceAccountName") or spec.get("serviceAccount") or DEFAULT
        spec["serviceAccountName"] = spec["serviceAccount"] = name
        account = self._account(attrs, name)
        if account is None:
            return
        automount = spec.get("automountServiceAccountToken")
        if automount is None:
            automount = account.get("automountServiceAccountToken")
        if automount is not False:
            mount_token(spec)
        if not spec.get("imagePullSecrets") and account.get("imagePullSecrets"):
            spec["imagePullSecrets"] = [{"name": s.get("name", "")} for s in account["imagePullSecrets"]]

    async def validate(self, attrs: Attributes) -> None:
        pod = attrs.obj
        assert pod is not None
        spec = pod.get("spec") or {}
        if MIRROR_ANNOTATION in ((pod.get("metadata") or {}).get("annotations") or {}):
            if spec.get("serviceAccountName"):
                raise errors.forbidden_error(f'pods "{attrs.name}" is forbidden: a mirror pod may not reference '
                                             "service accounts", "pods", attrs.name)
            return
        if not spec.get("serviceAccountName"):
            raise errors.forbidden_error(f'pods "{attrs.name}" is forbidden: no service account specified for pod '
                                         f"{attrs.namespace}/{attrs.name}", "pods", attrs.name)
        self._account(attrs, spec["serviceAccountName"])
