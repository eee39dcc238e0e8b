"""NamespaceLifecycle: no new content in missing or terminating namespaces; system namespaces stay."""

from __future__ import annotations

from .. import errors
from ..errors import StatusError
from .chain import AdmissionPlugin, Attributes

IMMORTAL = ("default", "kube-system", "kube-public")


class NamespaceLifecycle(AdmissionPlugin):
    name = "NamespaceLifecycle"
    operations = ("CREATE", "DELETE")

    async def mutate(self, attrs: Attributes) -> None:
        res = attrs.resource
        if attrs.operation != "CREATE" or not res.namespaced or not attrs.namespace:
            return
        registry = attrs.context.registry
        ns_res = registry.resources.lookup("", "v1", "namespaces")
        assert ns_res is not None
        namespace = registry.find(ns_res, None, attrs.namespace)
        if namespace is None:
            raise errors.not_found("namespaces", attrs.namespace)
        if namespace.obj.get("metadata", {}).get("deletionTimestamp") or \
                (namespace.obj.get("status") or {}).get("phase") == "Terminating":
            if res.group == "" and res.plural == "events":
                return
            raise StatusError(403, "Forbidden", f"{res.group_resource} \"{attrs.name}\" is forbidden: unable to "
                              f"create new content in namespace {attrs.namespace} because it is being terminated",
                              {"name": attrs.name, "kind": res.plural, "causes": [{
                                  "reason": "NamespaceTerminating",
                                  "message": f"namespace {attrs.namespace} is being terminated",
                                  "field": "metadata.namespace"}]})

    async def validate(self, attrs: Attributes) -> None:
        res = attrs.resource
        if attrs.operation == "DELETE" and res.group == "" and res.plural == "namespaces" and attrs.name in IMMORTAL:
            raise StatusError(403, "Forbidden", f'namespaces "{attrs.name}" is forbidden: this namespace may not '
                              "be deleted", {"name": attrs.name, "kind": "namespaces"})
