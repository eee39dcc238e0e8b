"""The default RBAC policy a Kubernetes 1.32 API server creates at start (roles, bindings, aggregation).

Written as our own compact data: every rule is (verbs, apiGroups, resources[, resourceNames]) or
(verbs, nonResourceURLs); lists are sorted as upstream's rule builder sorts them. Controller-manager
per-controller roles (`system:controller:*`) are not included.
Also the ClusterRole aggregation controller's computation (`aggregate_cluster_roles`).
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import orjson
from mini_kube.apiserver.validation.meta import SELECTOR_OPERATORS
from mini_kube.machinery.labels import matches as label_selector_matches

RBAC_GROUP = "rbac.authorization.k8s.io"
RBAC_API_VERSION = f"{RBAC_GROUP}/v1"
BOOTSTRAP_LABELS = {"kubernetes.io/bootstrapping": "rbac-defaults"}
AUTOUPDATE_ANNOTATIONS = {"rbac.authorization.kubernetes.io/autoupdate": "true"}
TO_ADMIN = "rbac.authorization.k8s.io/aggregate-to-admin"
TO_EDIT = "rbac.authorization.k8s.io/aggregate-to-edit"
TO_VIEW = "rbac.authorization.k8s.io/aggregate-to-view"

READ = ("get", "list", "watch")
WRITE = ("create", "update", "patch", "delete", "deletecollection")
READ_WRITE = READ + WRITE
READ_UPDATE = ("get", "list", "watch", "update", "patch")

CORE, APPS, AUTHN, AUTHZ, AUTOSCALING, BATCH = "", "apps", "authentication.k8s.io", "authorization.k8s.io", \
    "autoscaling", "batch"
CERTS, COORD, DISCOVERY, EXT, POLICY, NETWORKING, STORAGE, EVENTS, NODE = (
    "certificates.k8s.io", "coordination.k8s.io", "discovery.k8s.io", "extensions", "policy",
    "networking.k8s.io", "storage.k8s.io", "events.k8s.io", "node.k8s.io")


def rule(verbs: Sequence[str], groups: Sequence[str] | str, resources: Sequence[str],
         names: Sequence[str] = ()) -> dict[str, list[str]]:
    """A resource PolicyRule with sorted, de-duplicated lists."""
    out = {"verbs": sorted(set(verbs)), "apiGroups": sorted({groups} if isinstance(groups, str) else set(groups)),
           "resources": sorted(set(resources))}
    if names:
        out["resourceNames"] = sorted(set(names))
    return out


def urls(verbs: Sequence[str], paths: Sequence[str]) -> dict[str, list[str]]:
    """A non-resource PolicyRule."""
    return {"verbs": sorted(set(verbs)), "nonResourceURLs": sorted(set(paths))}


def events_rule() -> dict[str, list[str]]:
    return rule(("create", "update", "patch"), (CORE, EVENTS), ("events",))


def _signer_approver(signer: str) -> list[dict[str, list[str]]]:
    return [rule(("approve",), CERTS, ("signers",), (signer,))]


_NODE_RULES = [
    rule(("create",), AUTHN, ("tokenreviews",)),
    rule(("create",), AUTHZ, ("subjectaccessreviews", "localsubjectaccessreviews")),
    rule(READ, CORE, ("services",)),
    rule(("create", "get", "list", "watch"), CORE, ("nodes",)),
    rule(("update", "patch"), CORE, ("nodes/status",)),
    rule(("update", "patch"), CORE, ("nodes",)),
    rule(("create", "update", "patch"), CORE, ("events",)),
    rule(READ, CORE, ("pods",)),
    rule(("create", "delete"), CORE, ("pods",)),
    rule(("update", "patch"), CORE, ("pods/status",)),
    rule(("create",), CORE, ("pods/eviction",)),
    rule(READ, CORE, ("secrets", "configmaps")),
    rule(("get",), CORE, ("persistentvolumeclaims", "persistentvolumes")),
    rule(("get",), CORE, ("endpoints",)),
    rule(("create", "get", "list", "watch"), CERTS, ("certificatesigningrequests",)),
    rule(("get", "create", "update", "patch", "delete"), COORD, ("leases",)),
    rule(("get",), STORAGE, ("volumeattachments",)),
    rule(("create",), CORE, ("serviceaccounts/token",)),
    rule(("get", "update", "patch"), CORE, ("persistentvolumeclaims/status",)),
    rule(READ, STORAGE, ("csidrivers",)),
    rule(("get", "create", "update", "patch", "delete"), STORAGE, ("csinodes",)),
    rule(READ, NODE, ("runtimeclasses",)),
]

# name -> (extra labels, aggregate-from label or None, rules)
_CLUSTER_ROLES: dict[str, tuple[dict[str, str], str | None, list[dict[str, list[str]]]]] = {
    "cluster-admin": ({}, None, [rule(("*",), "*", ("*",)), urls(("*",), ("*",))]),
    "system:discovery": ({}, None, [urls(("get",), (
        "/livez", "/readyz", "/healthz", "/version", "/version/", "/openapi", "/openapi/*",
        "/api", "/api/*", "/apis", "/apis/*"))]),
    "system:monitoring": ({}, None, [urls(("get",), (
        "/metrics", "/metrics/slis", "/livez", "/readyz", "/healthz", "/livez/*", "/readyz/*", "/healthz/*"))]),
    "system:basic-user": ({}, None, [
        rule(("create",), AUTHZ, ("selfsubjectaccessreviews", "selfsubjectrulesreviews")),
        rule(("create",), AUTHN, ("selfsubjectreviews",)),
    ]),
    "system:public-info-viewer": ({}, None, [urls(("get",), ("/livez", "/readyz", "/healthz", "/version",
                                                             "/version/"))]),
    "admin": ({}, TO_ADMIN, []),
    "edit": ({TO_ADMIN: "true"}, TO_EDIT, []),
    "view": ({TO_EDIT: "true"}, TO_VIEW, []),
    "system:aggregate-to-admin": ({TO_ADMIN: "true"}, None, [
        rule(("create",), AUTHZ, ("localsubjectaccessreviews",)),
        rule(READ_WRITE, RBAC_GROUP, ("roles", "rolebindings")),
    ]),
    "system:aggregate-to-edit": ({TO_EDIT: "true"}, None, [
        rule(READ, CORE, ("pods/attach", "pods/proxy", "pods/exec", "pods/portforward", "secrets", "services/proxy")),
        rule(("impersonate",), CORE, ("serviceaccounts",)),
        rule(WRITE, CORE, ("pods", "pods/attach", "pods/proxy", "pods/exec", "pods/portforward")),
        rule(("create",), CORE, ("pods/eviction",)),
        rule(WRITE, CORE, ("replicationcontrollers", "replicationcontrollers/scale", "serviceaccounts", "services",
                           "services/proxy", "persistentvolumeclaims", "configmaps", "secrets", "events")),
        rule(("create",), CORE, ("serviceaccounts/token",)),
        rule(WRITE, APPS, ("statefulsets", "statefulsets/scale", "daemonsets", "deployments", "deployments/scale",
                           "deployments/rollback", "replicasets", "replicasets/scale")),
        rule(WRITE, AUTOSCALING, ("horizontalpodautoscalers",)),
        rule(WRITE, BATCH, ("jobs", "cronjobs")),
        rule(WRITE, EXT, ("daemonsets", "deployments", "deployments/scale", "deployments/rollback", "ingresses",
                          "replicasets", "replicasets/scale", "replicationcontrollers/scale", "networkpolicies")),
        rule(WRITE, POLICY, ("poddisruptionbudgets",)),
        rule(WRITE, NETWORKING, ("networkpolicies", "ingresses")),
        rule(READ_WRITE, COORD, ("leases",)),
    ]),
    "system:aggregate-to-view": ({TO_VIEW: "true"}, None, [
        rule(READ, CORE, ("pods", "replicationcontrollers", "replicationcontrollers/scale", "serviceaccounts",
                          "services", "services/status", "endpoints", "persistentvolumeclaims",
                          "persistentvolumeclaims/status", "configmaps")),
        rule(READ, CORE, ("limitranges", "resourcequotas", "bindings", "events", "pods/status",
                          "resourcequotas/status", "namespaces/status", "replicationcontrollers/status", "pods/log")),
        rule(READ, CORE, ("namespaces",)),
        rule(READ, DISCOVERY, ("endpointslices",)),
        rule(READ, APPS, ("controllerrevisions", "statefulsets", "statefulsets/status", "statefulsets/scale",
                          "daemonsets", "daemonsets/status", "deployments", "deployments/status", "deployments/scale",
                          "replicasets", "replicasets/status", "replicasets/scale")),
        rule(READ, AUTOSCALING, ("horizontalpodautoscalers", "horizontalpodautoscalers/status")),
        rule(READ, BATCH, ("jobs", "cronjobs", "cronjobs/status", "jobs/status")),
        rule(READ, EXT, ("daemonsets", "daemonsets/status", "deployments", "deployments/scale", "deployments/status",
                         "ingresses", "ingresses/status", "replicasets", "replicasets/scale", "replicasets/status",
                         "replicationcontrollers/scale", "networkpolicies")),
        rule(READ, POLICY, ("poddisruptionbudgets", "poddisruptionbudgets/status")),
        rule(READ, NETWORKING, ("networkpolicies", "ingresses", "ingresses/status")),
    ]),
    "system:heapster": ({}, None, [
        rule(READ, CORE, ("events", "pods", "nodes", "namespaces")),
        rule(READ, EXT, ("deployments",)),
    ]),
    "system:node": ({}, None, _NODE_RULES),
    "system:node-problem-detector": ({}, None, [
        rule(("get",), CORE, ("nodes",)),
        rule(("patch",), CORE, ("nodes/status",)),
        events_rule(),
    ]),
    "system:kubelet-api-admin": ({}, None, [
        rule(READ, CORE, ("nodes",)),
        rule(("proxy",), CORE, ("nodes",)),
        rule(("*",), CORE, ("nodes/proxy", "nodes/metrics", "nodes/stats", "nodes/log")),
    ]),
    "system:node-bootstrapper": ({}, None, [
        rule(("create", "get", "list", "watch"), CERTS, ("certificatesigningrequests",)),
    ]),
    "system:auth-delegator": ({}, None, [
        rule(("create",), AUTHN, ("tokenreviews",)),
        rule(("create",), AUTHZ, ("subjectaccessreviews",)),
    ]),
    "system:kube-aggregator": ({}, None, [rule(READ, CORE, ("services", "endpoints"))]),
    "system:kube-controller-manager": ({}, None, [
        events_rule(),
        rule(("create",), COORD, ("leases",)),
        rule(("get", "update"), COORD, ("leases",), ("kube-controller-manager",)),
        rule(("create",), CORE, ("secrets", "serviceaccounts")),
        rule(("delete",), CORE, ("secrets",)),
        rule(("get",), CORE, ("namespaces", "secrets", "serviceaccounts", "configmaps")),
        rule(("update",), CORE, ("secrets", "serviceaccounts")),
        rule(("create",), AUTHN, ("tokenreviews",)),
        rule(("create",), AUTHZ, ("subjectaccessreviews",)),
        rule(("list", "watch"), "*", ("*",)),
        rule(("create",), CORE, ("serviceaccounts/token",)),
    ]),
    "system:kube-dns": ({}, None, [rule(("list", "watch"), CORE, ("endpoints", "services"))]),
    "system:persistent-volume-provisioner": ({}, None, [
        rule(("get", "list", "watch", "create", "delete"), CORE, ("persistentvolumes",)),
        rule(("get", "list", "watch", "update"), CORE, ("persistentvolumeclaims",)),
        rule(READ, STORAGE, ("storageclasses",)),
        rule(("watch",), CORE, ("events",)),
        events_rule(),
    ]),
    "system:certificates.k8s.io:certificatesigningrequests:nodeclient": ({}, None, [
        rule(("create",), CERTS, ("certificatesigningrequests/nodeclient",))]),
    "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient": ({}, None, [
        rule(("create",), CERTS, ("certificatesigningrequests/selfnodeclient",))]),
    "system:volume-scheduler": ({}, None, [
        rule(READ_UPDATE, CORE, ("persistentvolumes",)),
        rule(READ, STORAGE, ("storageclasses",)),
        rule(READ_UPDATE, CORE, ("persistentvolumeclaims",)),
    ]),
    "system:certificates.k8s.io:legacy-unknown-approver": ({}, None, _signer_approver("kubernetes.io/legacy-unknown")),
    "system:certificates.k8s.io:kubelet-serving-approver": ({}, None,
                                                            _signer_approver("kubernetes.io/kubelet-serving")),
    "system:certificates.k8s.io:kube-apiserver-client-approver": (
        {}, None, _signer_approver("kubernetes.io/kube-apiserver-client")),
    "system:certificates.k8s.io:kube-apiserver-client-kubelet-approver": (
        {}, None, _signer_approver("kubernetes.io/kube-apiserver-client-kubelet")),
    "system:service-account-issuer-discovery": ({}, None, [urls(("get",), (
        "/.well-known/openid-configuration", "/openid/v1/jwks"))]),
    "system:node-proxier": ({}, None, [
        rule(("list", "watch"), CORE, ("services", "endpoints")),
        rule(READ, CORE, ("nodes",)),
        events_rule(),
        rule(("list", "watch"), DISCOVERY, ("endpointslices",)),
    ]),
    "system:kube-scheduler": ({}, None, [
        events_rule(),
        rule(("create",), COORD, ("leases",)),
        rule(("get", "update"), COORD, ("leases",), ("kube-scheduler",)),
        rule(READ, CORE, ("nodes",)),
        rule(("get", "list", "watch", "delete"), CORE, ("pods",)),
        rule(("create",), CORE, ("pods/binding", "bindings")),
        rule(("patch", "update"), CORE, ("pods/status",)),
        rule(READ, CORE, ("services", "replicationcontrollers")),
        rule(READ, (APPS, EXT), ("replicasets",)),
        rule(READ, APPS, ("statefulsets",)),
        rule(READ, POLICY, ("poddisruptionbudgets",)),
        rule(READ, CORE, ("persistentvolumeclaims", "persistentvolumes")),
        rule(("create",), AUTHN, ("tokenreviews",)),
        rule(("create",), AUTHZ, ("subjectaccessreviews",)),
        rule(READ, STORAGE, ("csinodes",)),
        rule(READ, CORE, ("namespaces",)),
        rule(READ, STORAGE, ("csidrivers",)),
        rule(READ, STORAGE, ("csistoragecapacities",)),
    ]),
}

# binding name (= role name) -> subjects as (kind, name[, namespace])
_CLUSTER_ROLE_BINDINGS: dict[str, list[tuple[str, ...]]] = {
    "cluster-admin": [("Group", "system:masters")],
    "system:monitoring": [("Group", "system:monitoring")],
    "system:discovery": [("Group", "system:authenticated")],
    "system:basic-user": [("Group", "system:authenticated")],
    "system:public-info-viewer": [("Group", "system:authenticated"), ("Group", "system:unauthenticated")],
    "system:node-proxier": [("User", "system:kube-proxy")],
    "system:kube-controller-manager": [("User", "system:kube-controller-manager")],
    "system:kube-dns": [("ServiceAccount", "kube-dns", "kube-system")],
    "system:kube-scheduler": [("User", "system:kube-scheduler")],
    "system:volume-scheduler": [("User", "system:kube-scheduler")],
    "system:node": [],
    "system:service-account-issuer-discovery": [("Group", "system:serviceaccounts")],
}

# (namespace, name) -> rules
_ROLES: dict[tuple[str, str], list[dict[str, list[str]]]] = {
    ("kube-system", "extension-apiserver-authentication-reader"): [
        rule(READ, CORE, ("configmaps",), ("extension-apiserver-authentication",))],
    ("kube-system", "system::leader-locking-kube-controller-manager"): [
        rule(("watch",), CORE, ("configmaps",)),
        rule(("get", "update"), CORE, ("configmaps",), ("kube-controller-manager",))],
    ("kube-system", "system::leader-locking-kube-scheduler"): [
        rule(("watch",), CORE, ("configmaps",)),
        rule(("get", "update"), CORE, ("configmaps",), ("kube-scheduler",))],
    ("kube-system", "system:controller:bootstrap-signer"): [rule(READ, CORE, ("secrets",))],
    ("kube-system", "system:controller:cloud-provider"): [rule(("create", "get", "list", "watch"), CORE,
                                                               ("configmaps",))],
    ("kube-system", "system:controller:token-cleaner"): [rule(("delete", "get", "list", "watch"), CORE, ("secrets",)),
                                                          events_rule()],
    ("kube-public", "system:controller:bootstrap-signer"): [
        rule(READ, CORE, ("configmaps",)),
        rule(("update",), CORE, ("configmaps",), ("cluster-info",)),
        events_rule()],
}

# (namespace, binding name) -> (role name, subjects)
_ROLE_BINDINGS: dict[tuple[str, str], tuple[str, list[tuple[str, ...]]]] = {
    ("kube-system", "system::extension-apiserver-authentication-reader"): (
        "extension-apiserver-authentication-reader",
        [("User", "system:kube-controller-manager"), ("User", "system:kube-scheduler")]),
    ("kube-system", "system::leader-locking-kube-controller-manager"): (
        "system::leader-locking-kube-controller-manager",
        [("User", "system:kube-controller-manager"), ("ServiceAccount", "kube-controller-manager", "kube-system")]),
    ("kube-system", "system::leader-locking-kube-scheduler"): (
        "system::leader-locking-kube-scheduler",
        [("User", "system:kube-scheduler"), ("ServiceAccount", "kube-scheduler", "kube-system")]),
    ("kube-system", "system:controller:bootstrap-signer"): (
        "system:controller:bootstrap-signer", [("ServiceAccount", "bootstrap-signer", "kube-system")]),
    ("kube-system", "system:controller:cloud-provider"): (
        "system:controller:cloud-provider", [("ServiceAccount", "cloud-provider", "kube-system")]),
    ("kube-system", "system:controller:token-cleaner"): (
        "system:controller:token-cleaner", [("ServiceAccount", "token-cleaner", "kube-system")]),
    ("kube-public", "system:controller:bootstrap-signer"): (
        "system:controller:bootstrap-signer", [("ServiceAccount", "bootstrap-signer", "kube-system")]),
}


def _metadata(name: str, namespace: str = "", labels: Mapping[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    meta["labels"] = dict(sorted({**BOOTSTRAP_LABELS, **(labels or {})}.items()))
    meta["annotations"] = dict(AUTOUPDATE_ANNOTATIONS)
    return meta


def _subject(spec: tuple[str, ...]) -> dict[str, str]:
    if spec[0] == "ServiceAccount":
        return {"kind": "ServiceAccount", "name": spec[1], "namespace": spec[2]}
    return {"kind": spec[0], "apiGroup": RBAC_GROUP, "name": spec[1]}


def cluster_roles(aggregated: bool = True) -> list[dict[str, Any]]:
    """The default ClusterRoles; with `aggregated`, admin/edit/view already hold their aggregated rules."""
    roles = []
    for name, (labels, aggregate_from, rules) in sorted(_CLUSTER_ROLES.items()):
        role: dict[str, Any] = {"kind": "ClusterRole", "apiVersion": RBAC_API_VERSION,
                                "metadata": _metadata(name, labels=labels), "rules": copy.deepcopy(rules)}
        if aggregate_from:
            role["aggregationRule"] = {"clusterRoleSelectors": [{"matchLabels": {aggregate_from: "true"}}]}
        roles.append(role)
    if aggregated:
        updates = aggregate_cluster_roles(roles)
        for role in roles:
            if role["metadata"]["name"] in updates:
                role["rules"] = updates[role["metadata"]["name"]]
    return roles


def cluster_role_bindings() -> list[dict[str, Any]]:
    return [{"kind": "ClusterRoleBinding", "apiVersion": RBAC_API_VERSION, "metadata": _metadata(name),
             "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": name},
             "subjects": [_subject(s) for s in subjects]}
            for name, subjects in sorted(_CLUSTER_ROLE_BINDINGS.items())]


def roles() -> list[dict[str, Any]]:
    """The default Roles in kube-system and kube-public."""
    return [{"kind": "Role", "apiVersion": RBAC_API_VERSION, "metadata": _metadata(name, namespace),
             "rules": copy.deepcopy(rules)} for (namespace, name), rules in sorted(_ROLES.items())]


def role_bindings() -> list[dict[str, Any]]:
    return [{"kind": "RoleBinding", "apiVersion": RBAC_API_VERSION, "metadata": _metadata(name, namespace),
             "roleRef": {"apiGroup": RBAC_GROUP, "kind": "Role", "name": role},
             "subjects": [_subject(s) for s in subjects]}
            for (namespace, name), (role, subjects) in sorted(_ROLE_BINDINGS.items())]


def default_objects() -> list[dict[str, Any]]:
    """Everything the bootstrap creates, cluster-scoped first (a copy of its own for the caller to change)."""
    return orjson.loads(_default_objects_json())


@functools.cache
def _default_objects_json() -> bytes:
    """The default objects, built (admin/edit/view aggregated) once per process: every server starts from them."""
    return orjson.dumps([*cluster_roles(), *cluster_role_bindings(), *roles(), *role_bindings()])


# -- aggregation ---------------------------------------------------------------------------------------------

def selector_matches(selector: Mapping[str, Any] | None, labels: Mapping[str, str]) -> bool:
    """A metav1.LabelSelector as validation matches it, except that an unknown operator selects nothing."""
    if any(expr.get("operator") not in SELECTOR_OPERATORS for expr in (selector or {}).get("matchExpressions") or ()):
        return False
    return label_selector_matches(selector, labels)


def _aggregate_once(role: Mapping[str, Any], by_name: Mapping[str, Mapping[str, Any]]) -> list[Any]:
    selectors = (role.get("aggregationRule") or {}).get("clusterRoleSelectors") or ()
    own = (role.get("metadata") or {}).get("name")
    rules: list[Any] = []
    for name in sorted(by_name):
        other = by_name[name]
        labels = (other.get("metadata") or {}).get("labels") or {}
        if name == own or not any(selector_matches(s, labels) for s in selectors):
            continue
        for r in other.get("rules") or ():
            if r not in rules:
                rules.append(copy.deepcopy(r))
    return rules


def aggregate_cluster_roles(roles: Iterable[Mapping[str, Any]]) -> dict[str, list[Any]]:
    """For each ClusterRole with an aggregationRule whose rules would change: name -> its new rules.

    Rules are gathered from the selected roles in name order, without duplicates; chains (view -> edit ->
    admin) are followed to a fixed point, as the aggregation controller converges.
    """
    by_name = {(r.get("metadata") or {}).get("name", ""): dict(r) for r in roles}
    changed: dict[str, list[Any]] = {}
    for _ in range(len(by_name) + 1):
        progress = False
        for name, role in sorted(by_name.items()):
            if not (role.get("aggregationRule") or {}).get("clusterRoleSelectors"):
                continue
            new_rules = _aggregate_once(role, by_name)
            if role.get("rules") != new_rules:
                role["rules"] = new_rules
                changed[name] = new_rules
                progress = True
        if not progress:
            break
    return changed
