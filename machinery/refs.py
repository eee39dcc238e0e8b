"""Where a resource lives in the REST API: group, version, plural and scope (no HTTP stack imported, so that
light tools such as kubectl-lite share it)."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote


@dataclass(frozen=True, slots=True)
class ResourceRef:
    """Where a resource lives: group, version, plural and scope."""

    group: str
    version: str
    plural: str
    namespaced: bool = True

    def path(self, namespace: str | None = None, name: str | None = None, subresource: str = "") -> str:
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if self.namespaced and namespace:
            base += f"/namespaces/{quote(namespace, safe='')}"
        base += f"/{self.plural}"
        if name:
            base += f"/{quote(name, safe='')}"
        if subresource:
            base += f"/{subresource}"
        return base


# The resources components reach, defined once (`from mini_kube.machinery.refs import PODS`).
PODS = ResourceRef("", "v1", "pods")
NODES = ResourceRef("", "v1", "nodes", namespaced=False)
NAMESPACES = ResourceRef("", "v1", "namespaces", namespaced=False)
CONFIGMAPS = ResourceRef("", "v1", "configmaps")
SECRETS = ResourceRef("", "v1", "secrets")
SERVICES = ResourceRef("", "v1", "services")
SERVICEACCOUNTS = ResourceRef("", "v1", "serviceaccounts")
ENDPOINTS = ResourceRef("", "v1", "endpoints")
EVENTS = ResourceRef("", "v1", "events")
PERSISTENTVOLUMES = ResourceRef("", "v1", "persistentvolumes", namespaced=False)
PERSISTENTVOLUMECLAIMS = ResourceRef("", "v1", "persistentvolumeclaims")
REPLICATIONCONTROLLERS = ResourceRef("", "v1", "replicationcontrollers")
LIMITRANGES = ResourceRef("", "v1", "limitranges")
RESOURCEQUOTAS = ResourceRef("", "v1", "resourcequotas")
DEPLOYMENTS = ResourceRef("apps", "v1", "deployments")
REPLICASETS = ResourceRef("apps", "v1", "replicasets")
STATEFULSETS = ResourceRef("apps", "v1", "statefulsets")
DAEMONSETS = ResourceRef("apps", "v1", "daemonsets")
CONTROLLERREVISIONS = ResourceRef("apps", "v1", "controllerrevisions")
JOBS = ResourceRef("batch", "v1", "jobs")
CRONJOBS = ResourceRef("batch", "v1", "cronjobs")
HORIZONTALPODAUTOSCALERS = ResourceRef("autoscaling", "v2", "horizontalpodautoscalers")
PODDISRUPTIONBUDGETS = ResourceRef("policy", "v1", "poddisruptionbudgets")
ENDPOINTSLICES = ResourceRef("discovery.k8s.io", "v1", "endpointslices")
LEASES = ResourceRef("coordination.k8s.io", "v1", "leases")
EVENTS_V1 = ResourceRef("events.k8s.io", "v1", "events")
CERTIFICATESIGNINGREQUESTS = ResourceRef("certificates.k8s.io", "v1", "certificatesigningrequests", namespaced=False)
CUSTOMRESOURCEDEFINITIONS = ResourceRef("apiextensions.k8s.io", "v1", "customresourcedefinitions", namespaced=False)
ROLEBINDINGS = ResourceRef("rbac.authorization.k8s.io", "v1", "rolebindings")
VALIDATINGWEBHOOKCONFIGURATIONS = ResourceRef("admissionregistration.k8s.io", "v1",
                                              "validatingwebhookconfigurations", namespaced=False)
MUTATINGWEBHOOKCONFIGURATIONS = ResourceRef("admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations",
                                            namespaced=False)
VALIDATINGADMISSIONPOLICIES = ResourceRef("admissionregistration.k8s.io", "v1", "validatingadmissionpolicies",
                                          namespaced=False)
VALIDATINGADMISSIONPOLICYBINDINGS = ResourceRef("admissionregistration.k8s.io", "v1",
                                                "validatingadmissionpolicybindings", namespaced=False)
