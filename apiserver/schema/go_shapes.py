"""Fields a Go apiserver always writes, even when unset, so that our objects read back the same.

Go's JSON encoder ignores `omitempty` on struct values and writes non-`omitempty` fields at their zero
value. So a Deployment always has `status: {}`, a pod template `metadata: {creationTimestamp: null}`,
a container `resources: {}`, and a DaemonSet's status its four counters at 0. The schema cannot say
which fields are struct values rather than pointers, so:

- derived from the schema: `metadata`/`spec`/`status` of every object with ObjectMeta (upstream API
  convention: these are never pointers); required scalar fields of status-only types (required means
  no `omitempty`, so Go writes the zero);
- listed below: the other struct-valued fields of the served kinds (from the Go types in k8s.io/api).
"""

from __future__ import annotations

import functools
from typing import Any

from mini_kube.apiserver.schema.definitions import REF_PREFIX, definitions, references

OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
_TIMES = {"io.k8s.apimachinery.pkg.apis.meta.v1.Time", "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime"}
_CORE = "io.k8s.api.core.v1."

# Struct-valued (non-pointer) fields beyond metadata/spec/status, per k8s.io/api Go types.
STRUCT_FIELDS: dict[str, tuple[str, ...]] = {
    _CORE + "Container": ("resources",),
    _CORE + "EphemeralContainer": ("resources",),
    _CORE + "PersistentVolumeClaimSpec": ("resources",),
    _CORE + "ServiceStatus": ("loadBalancer",),
    _CORE + "ContainerStatus": ("state", "lastState"),
    _CORE + "NodeStatus": ("daemonEndpoints", "nodeInfo"),
    _CORE + "NodeDaemonEndpoints": ("kubeletEndpoint",),
    _CORE + "Event": ("involvedObject", "source", "firstTimestamp", "lastTimestamp", "eventTime"),
    "io.k8s.api.events.v1.Event": ("deprecatedSource", "deprecatedFirstTimestamp",
                                   "deprecatedLastTimestamp", "eventTime"),
    "io.k8s.api.networking.v1.IngressStatus": ("loadBalancer",),
    "io.k8s.api.apps.v1.DeploymentSpec": ("strategy", "template"),
    "io.k8s.api.apps.v1.DaemonSetSpec": ("updateStrategy", "template"),
    "io.k8s.api.apps.v1.StatefulSetSpec": ("updateStrategy", "template"),
    "io.k8s.api.apps.v1.ReplicaSetSpec": ("template",),
    "io.k8s.api.batch.v1.JobSpec": ("template",),
    "io.k8s.api.batch.v1.CronJobSpec": ("jobTemplate",),
    "io.k8s.api.rbac.v1.RoleBinding": ("roleRef",),
    "io.k8s.api.rbac.v1.ClusterRoleBinding": ("roleRef",),
    "io.k8s.api.admissionregistration.v1.ValidatingWebhook": ("clientConfig",),
    "io.k8s.api.admissionregistration.v1.MutatingWebhook": ("clientConfig",),
    "io.k8s.api.autoscaling.v1.HorizontalPodAutoscalerSpec": ("scaleTargetRef",),
    "io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerSpec": ("scaleTargetRef",),
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionSpec": ("names",),
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionStatus":
        ("acceptedNames",),
}

# Scalars without `omitempty` that the schema does not list as required (`+optional` in Go).
ZERO_FIELDS: dict[str, dict[str, Any]] = {
    "io.k8s.api.apps.v1.StatefulSetStatus": {"availableReplicas": 0},
    _CORE + "Event": {"reportingComponent": "", "reportingInstance": ""},
}

_ZERO = {"string": "", "integer": 0, "number": 0, "boolean": False}


def _target(schema: dict[str, Any]) -> str | None:
    ref = schema.get("$ref")
    return ref.removeprefix(REF_PREFIX) if ref else None


def _zero_of(prop_schema: dict[str, Any]) -> Any:
    """The Go zero value of a field: {} for a struct, None for a Time, or the scalar zero."""
    target = _target(prop_schema)
    if target in _TIMES:
        return None
    if target is not None:
        return {}
    types = prop_schema.get("type") or []
    kinds = [types] if isinstance(types, str) else [t for t in types if t != "null"]
    return _ZERO.get(kinds[0]) if kinds else None


def _edges(name: str) -> list[tuple[str, str]]:
    """(property, referenced definition) pairs, through arrays and maps."""
    return [(prop, target) for prop, _, target in references(name)]


def _closure(roots: set[str], skip_status: bool) -> set[str]:
    seen, todo = set(), list(roots)
    while todo:
        name = todo.pop()
        if name in seen or name not in definitions():
            continue
        seen.add(name)
        todo.extend(target for prop, target in _edges(name) if not (skip_status and prop == "status"))
    return seen


@functools.cache
def status_only() -> frozenset[str]:
    """Definitions reachable only through a `status` field (written by the server, never by users)."""
    kinds = {name for name, schema in definitions().items() if "x-kubernetes-group-version-kind" in schema}
    under_status = {target for name in definitions() for prop, target in _edges(name) if prop == "status"}
    return frozenset(_closure(under_status, False) - _closure(kinds, True))


@functools.cache
def always_written(name: str) -> tuple[tuple[str, Any], ...]:
    """(property, zero value) pairs Go writes for definition `name` when they are unset."""
    schema = definitions()[name]
    props = schema.get("properties") or {}
    fields: dict[str, Any] = {}
    if name == OBJECT_META:
        fields["creationTimestamp"] = None
    if _target(props.get("metadata", {})) == OBJECT_META:
        for prop in ("metadata", "spec", "status"):
            if prop in props and _target(props[prop]):
                fields[prop] = {}
    for prop in STRUCT_FIELDS.get(name, ()):
        fields[prop] = _zero_of(props[prop])
    if name in status_only():
        for prop in schema.get("required") or ():
            sub = props.get(prop)
            if sub is None or sub.get("type") in (None, "object") and _target(sub) not in _TIMES:
                continue
            fields.setdefault(prop, _zero_of(sub))
    fields.update(ZERO_FIELDS.get(name, {}))
    return tuple(fields.items())
