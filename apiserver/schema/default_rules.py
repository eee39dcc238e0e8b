"""Defaults that upstream computes rather than states: each rule mirrors one upstream function.

Where the value itself is stated in a description it is still read from there (`_stated`); only values
that appear in no description (e.g. `default-scheduler`, `Opaque`) are written here, each next to the
upstream constant it copies. Rules run on the dict of their definition, `BEFORE` or `AFTER` the
described defaults of that definition are filled in (see `defaults.py`).
"""

from __future__ import annotations

import base64
import copy
import functools
from collections.abc import Callable
from typing import Any

from mini_kube.apiserver.schema.described import described_default

Rule = Callable[[dict[str, Any]], None]

_CORE = "io.k8s.api.core.v1."
_APPS = "io.k8s.api.apps.v1."
RBAC_GROUP = "rbac.authorization.k8s.io"
CLUSTER_IP_FAMILY = "IPv4"  # the service CIDR family of this single-stack control plane


@functools.cache
def _stated(definition: str, prop: str) -> Any:
    return described_default(definition, prop)


def _dict(obj: dict[str, Any], key: str) -> dict[str, Any]:
    """obj[key] as a dict, created when missing (a Go struct value or an allocated pointer)."""
    value = obj.get(key)
    if not isinstance(value, dict):
        value = obj[key] = {}
    return value


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


# --- apps/v1 (pkg/apis/apps/v1/defaults.go) ---------------------------------------------------

def rolling_update_when_rolling(strategy_key: str) -> Rule:
    """SetDefaults_Deployment / _DaemonSet: a RollingUpdate strategy gets a rollingUpdate block."""
    def rule(obj: dict[str, Any]) -> None:
        spec = obj.get("spec")
        strategy = spec.get(strategy_key) if isinstance(spec, dict) else None
        if isinstance(strategy, dict) and strategy.get("type") == "RollingUpdate" \
                and strategy.get("rollingUpdate") is None:
            strategy["rollingUpdate"] = {}
    return rule


def statefulset_before(obj: dict[str, Any]) -> None:
    """SetDefaults_StatefulSet: rollingUpdate only when the type itself is defaulted; PVC retention."""
    spec = _dict(obj, "spec")
    strategy = _dict(spec, "updateStrategy")
    if not strategy.get("type") and strategy.get("rollingUpdate") is None:
        strategy["rollingUpdate"] = {}
    if spec.get("persistentVolumeClaimRetentionPolicy") is None:
        spec["persistentVolumeClaimRetentionPolicy"] = {}
    for claim in _dicts(spec.get("volumeClaimTemplates")):
        if not claim.get("apiVersion"):
            claim["apiVersion"] = "v1"
            claim["kind"] = "PersistentVolumeClaim"


# --- batch/v1 (pkg/apis/batch/v1/defaults.go) -------------------------------------------------

MAX_INT32 = 2147483647  # math.MaxInt32: backoffLimit when only backoffLimitPerIndex bounds retries


def job_before(obj: dict[str, Any]) -> None:
    """SetDefaults_Job: with backoffLimitPerIndex, an unset backoffLimit is MaxInt32 (not the stated 6)."""
    spec = _dict(obj, "spec")
    if spec.get("backoffLimit") is None and spec.get("backoffLimitPerIndex") is not None:
        spec["backoffLimit"] = MAX_INT32


def job(obj: dict[str, Any]) -> None:
    """SetDefaults_Job: completions/parallelism, podReplacementPolicy, labels from the template."""
    spec = _dict(obj, "spec")
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
    if spec.get("parallelism") is None:
        spec["parallelism"] = 1
    if spec.get("podReplacementPolicy") is None:
        spec["podReplacementPolicy"] = "Failed" if spec.get("podFailurePolicy") else "TerminatingOrFailed"
    template = spec.get("template")
    labels = template.get("metadata", {}).get("labels") if isinstance(template, dict) else None
    meta = _dict(obj, "metadata")
    if labels and not meta.get("labels"):
        meta["labels"] = dict(labels)


# --- core/v1 (pkg/apis/core/v1/defaults.go) ---------------------------------------------------

def pod_spec(obj: dict[str, Any]) -> None:
    """SetDefaults_PodSpec: the scheduler name (v1.DefaultSchedulerName)."""
    if not obj.get("schedulerName"):
        obj["schedulerName"] = "default-scheduler"


def pod(obj: dict[str, Any]) -> None:
    """SetDefaults_Pod: container requests default to their limits (Pods only, not templates)."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    for container in _dicts(spec.get("containers")) + _dicts(spec.get("initContainers")):
        resources = container.get("resources")
        if not isinstance(resources, dict):
            continue
        limits = resources.get("limits")
        if isinstance(limits, dict) and limits:
            requests = _dict(resources, "requests")
            for key, value in limits.items():
                requests.setdefault(key, value)


def image_tag(image: str) -> str:
    """The tag of an image reference as upstream parsers.ParseImageName sees it ('latest' if none)."""
    name, _, digest = image.partition("@")
    last = name.rsplit("/", 1)[-1]
    if ":" in last:
        return last.rsplit(":", 1)[1]
    return "" if digest else "latest"


def container(obj: dict[str, Any]) -> None:
    """SetDefaults_Container: Always for `:latest` or untagged images, else IfNotPresent."""
    if not obj.get("imagePullPolicy"):
        image = obj.get("image")
        tag = image_tag(image) if isinstance(image, str) and image else ""
        obj["imagePullPolicy"] = "Always" if tag == "latest" else "IfNotPresent"


def http_get(obj: dict[str, Any]) -> None:
    """SetDefaults_HTTPGetAction: the path defaults to "/"."""
    if not obj.get("path"):
        obj["path"] = "/"


def volume(obj: dict[str, Any]) -> None:
    """SetDefaults_Volume: a volume with no source is an emptyDir."""
    if all(value is None for key, value in obj.items() if key != "name"):
        obj["emptyDir"] = {}


def projected(obj: dict[str, Any]) -> None:
    """SetDefaults_ProjectedVolumeSource: same mode as the other sources (0644, stated on those)."""
    if obj.get("defaultMode") is None:
        obj["defaultMode"] = _stated(_CORE + "SecretVolumeSource", "defaultMode")


def secret(obj: dict[str, Any]) -> None:
    """SetDefaults_Secret (v1.SecretTypeOpaque); stringData merges into data as the v1 conversion does.

    Convert_v1_Secret_To_core_Secret (pkg/apis/core/v1/conversion.go) base64-encodes each stringData
    value over data's; stringData is write-only and never stored.
    """
    if not obj.get("type"):
        obj["type"] = "Opaque"
    string_data = obj.pop("stringData", None)
    if isinstance(string_data, dict) and string_data:
        data = obj.get("data")
        if not isinstance(data, dict):
            data = obj["data"] = {}
        for key, value in string_data.items():
            if isinstance(value, str):
                data[key] = base64.b64encode(value.encode()).decode()


def service(obj: dict[str, Any]) -> None:
    """SetDefaults_Service, plus the IP family fields the service registry fills in (alloc.go)."""
    spec = _dict(obj, "spec")
    svc_type = spec.get("type")
    for port in _dicts(spec.get("ports")):
        if port.get("targetPort") in (None, 0, "") and port.get("port") is not None:
            port["targetPort"] = port["port"]
    if spec.get("sessionAffinity") == "ClientIP":
        config = _dict(_dict(spec, "sessionAffinityConfig"), "clientIP")
        if config.get("timeoutSeconds") is None:
            config["timeoutSeconds"] = _stated(_CORE + "ClientIPConfig", "timeoutSeconds")
    elif spec.get("sessionAffinity") == "None":
        spec.pop("sessionAffinityConfig", None)
    external = svc_type in ("NodePort", "LoadBalancer") or bool(spec.get("externalIPs"))
    if external and not spec.get("externalTrafficPolicy"):
        spec["externalTrafficPolicy"] = _stated(_CORE + "ServiceSpec", "externalTrafficPolicy")
    if svc_type in ("ClusterIP", "NodePort", "LoadBalancer") and spec.get("internalTrafficPolicy") is None:
        spec["internalTrafficPolicy"] = _stated(_CORE + "ServiceSpec", "internalTrafficPolicy")
    if svc_type == "LoadBalancer" and spec.get("allocateLoadBalancerNodePorts") is None:
        spec["allocateLoadBalancerNodePorts"] = _stated(_CORE + "ServiceSpec", "allocateLoadBalancerNodePorts")
    if svc_type != "ExternalName":
        if spec.get("ipFamilyPolicy") is None:
            headless_without_selector = spec.get("clusterIP") == "None" and not spec.get("selector")
            spec["ipFamilyPolicy"] = "RequireDualStack" if headless_without_selector \
                else _stated(_CORE + "ServiceSpec", "ipFamilyPolicy")
        if not spec.get("ipFamilies"):
            spec["ipFamilies"] = [CLUSTER_IP_FAMILY]


def namespace(obj: dict[str, Any]) -> None:
    """SetDefaults_Namespace (name label) and SetDefaults_NamespaceStatus (v1.NamespaceActive)."""
    meta = _dict(obj, "metadata")
    if meta.get("name"):
        _dict(meta, "labels")["kubernetes.io/metadata.name"] = meta["name"]
    status = _dict(obj, "status")
    if not status.get("phase"):
        status["phase"] = "Active"


def persistent_volume_claim(obj: dict[str, Any]) -> None:
    """SetDefaults_PersistentVolumeClaim: status phase v1.ClaimPending."""
    status = _dict(obj, "status")
    if not status.get("phase"):
        status["phase"] = "Pending"


def persistent_volume(obj: dict[str, Any]) -> None:
    """SetDefaults_PersistentVolume: phase v1.VolumePending, reclaim policy v1.PersistentVolumeReclaimRetain."""
    status = _dict(obj, "status")
    if not status.get("phase"):
        status["phase"] = "Pending"
    spec = _dict(obj, "spec")
    if not spec.get("persistentVolumeReclaimPolicy"):
        spec["persistentVolumeReclaimPolicy"] = "Retain"


def replication_controller(obj: dict[str, Any]) -> None:
    """SetDefaults_ReplicationController: selector and labels from the pod template's labels."""
    spec = _dict(obj, "spec")
    template = spec.get("template")
    labels = template.get("metadata", {}).get("labels") if isinstance(template, dict) else None
    if labels:
        if not spec.get("selector"):
            spec["selector"] = dict(labels)
        meta = _dict(obj, "metadata")
        if not meta.get("labels"):
            meta["labels"] = dict(labels)


def node(obj: dict[str, Any]) -> None:
    """Node: podCIDRs mirrors podCIDR (v1 conversion), allocatable copies capacity (SetDefaults_NodeStatus)."""
    spec = _dict(obj, "spec")
    if spec.get("podCIDR") and not spec.get("podCIDRs"):
        spec["podCIDRs"] = [spec["podCIDR"]]
    status = _dict(obj, "status")
    if status.get("allocatable") is None and isinstance(status.get("capacity"), dict):
        status["allocatable"] = dict(status["capacity"])


def limit_range_item(obj: dict[str, Any]) -> None:
    """SetDefaults_LimitRangeItem: container default limit from max, default request from limit/min."""
    if obj.get("type") != "Container":
        return
    default, request = _dict(obj, "default"), _dict(obj, "defaultRequest")
    for key, value in (obj.get("max") or {}).items():
        default.setdefault(key, value)
    for key, value in default.items():
        request.setdefault(key, value)
    for key, value in (obj.get("min") or {}).items():
        request.setdefault(key, value)


# --- rbac, networking, storage, autoscaling, apiextensions ------------------------------------

def role_binding(obj: dict[str, Any]) -> None:
    """SetDefaults_RoleBinding / _ClusterRoleBinding: roleRef.apiGroup is the RBAC group."""
    ref = _dict(obj, "roleRef")
    if not ref.get("apiGroup"):
        ref["apiGroup"] = RBAC_GROUP


def subject(obj: dict[str, Any]) -> None:
    """SetDefaults_Subject: the RBAC group for User and Group subjects ("" for ServiceAccounts is omitted)."""
    if not obj.get("apiGroup") and obj.get("kind") in ("User", "Group"):
        obj["apiGroup"] = RBAC_GROUP


def network_policy(obj: dict[str, Any]) -> None:
    """SetDefaults_NetworkPolicy: policyTypes is Ingress, plus Egress when egress rules exist."""
    spec = _dict(obj, "spec")
    if not spec.get("policyTypes"):
        spec["policyTypes"] = ["Ingress", "Egress"] if spec.get("egress") else ["Ingress"]


def storage_class(obj: dict[str, Any]) -> None:
    """SetDefaults_StorageClass: storagev1.VolumeBindingImmediate."""
    if obj.get("volumeBindingMode") is None:
        obj["volumeBindingMode"] = "Immediate"


def csi_driver(obj: dict[str, Any]) -> None:
    """SetDefaults_CSIDriver: attach required, no capacity tracking, persistent lifecycle."""
    spec = _dict(obj, "spec")
    if spec.get("attachRequired") is None:
        spec["attachRequired"] = True
    if spec.get("storageCapacity") is None:
        spec["storageCapacity"] = False
    if not spec.get("volumeLifecycleModes"):
        spec["volumeLifecycleModes"] = ["Persistent"]


def _hpa_rules(given: Any, default: dict[str, Any]) -> dict[str, Any]:
    """copyHPAScalingRules: the fields `given` sets over upstream's default rules."""
    given = given if isinstance(given, dict) else {}
    rules = {}
    for key in ("stabilizationWindowSeconds", "selectPolicy", "policies", "tolerance"):  # upstream's field order
        value = given[key] if given.get(key) is not None else default.get(key)
        if value is not None:
            rules[key] = value
    return rules


HPA_SCALE_UP = {"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [
    {"type": "Pods", "value": 4, "periodSeconds": 15}, {"type": "Percent", "value": 100, "periodSeconds": 15}]}
HPA_SCALE_DOWN = {"selectPolicy": "Max", "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]}


def hpa_v2(obj: dict[str, Any]) -> None:
    """autoscaling/v2 SetDefaults_HorizontalPodAutoscaler: 80% average CPU utilization; a behavior that is given
    gets both scaling rules filled from the defaults (SetDefaults_HorizontalPodAutoscalerBehavior)."""
    spec = _dict(obj, "spec")
    if not spec.get("metrics"):
        spec["metrics"] = [{"type": "Resource", "resource": {
            "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}]
    behavior = spec.get("behavior")
    if isinstance(behavior, dict):
        behavior["scaleUp"] = _hpa_rules(behavior.get("scaleUp"), copy.deepcopy(HPA_SCALE_UP))
        behavior["scaleDown"] = _hpa_rules(behavior.get("scaleDown"), copy.deepcopy(HPA_SCALE_DOWN))


def crd(obj: dict[str, Any]) -> None:
    """SetDefaults_CustomResourceDefinition(Spec): names, conversion None, stored versions."""
    spec = _dict(obj, "spec")
    names = _dict(spec, "names")
    kind = names.get("kind")
    if kind and not names.get("singular"):
        names["singular"] = kind.lower()
    if kind and not names.get("listKind"):
        names["listKind"] = kind + "List"
    conversion = _dict(spec, "conversion")
    if not conversion.get("strategy"):
        conversion["strategy"] = "None"
    if conversion["strategy"] == "Webhook" and isinstance(conversion.get("webhook"), dict):
        conversion["webhook"].setdefault("conversionReviewVersions", ["v1"])
    status = _dict(obj, "status")
    if not status.get("storedVersions"):
        storage = [v.get("name") for v in _dicts(spec.get("versions")) if v.get("storage")]
        if storage:
            status["storedVersions"] = storage[:1]


_CRD = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition"

BEFORE: dict[str, tuple[Rule, ...]] = {
    _APPS + "StatefulSet": (statefulset_before,),
    "io.k8s.api.batch.v1.Job": (job_before,),
}

AFTER: dict[str, tuple[Rule, ...]] = {
    _APPS + "Deployment": (rolling_update_when_rolling("strategy"),),
    _APPS + "DaemonSet": (rolling_update_when_rolling("updateStrategy"),),
    "io.k8s.api.batch.v1.Job": (job,),
    _CORE + "PodSpec": (pod_spec,),
    _CORE + "Pod": (pod,),
    _CORE + "Container": (container,),
    _CORE + "EphemeralContainer": (container,),
    _CORE + "HTTPGetAction": (http_get,),
    _CORE + "Volume": (volume,),
    _CORE + "ProjectedVolumeSource": (projected,),
    _CORE + "Secret": (secret,),
    _CORE + "Service": (service,),
    _CORE + "Namespace": (namespace,),
    _CORE + "PersistentVolumeClaim": (persistent_volume_claim,),
    _CORE + "PersistentVolume": (persistent_volume,),
    _CORE + "ReplicationController": (replication_controller,),
    _CORE + "Node": (node,),
    _CORE + "LimitRangeItem": (limit_range_item,),
    "io.k8s.api.rbac.v1.RoleBinding": (role_binding,),
    "io.k8s.api.rbac.v1.ClusterRoleBinding": (role_binding,),
    "io.k8s.api.rbac.v1.Subject": (subject,),
    "io.k8s.api.networking.v1.NetworkPolicy": (network_policy,),
    "io.k8s.api.storage.v1.StorageClass": (storage_class,),
    "io.k8s.api.storage.v1.CSIDriver": (csi_driver,),
    "io.k8s.api.autoscaling.v2.HorizontalPodAutoscaler": (hpa_v2,),
    _CRD: (crd,),
}
