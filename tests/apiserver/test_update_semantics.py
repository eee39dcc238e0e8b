"""Updates as upstream's generic store and strategies make them: what a `/status` write may change besides the
status, and updates that name no resourceVersion (unconditional where the kind's strategy allows it)."""

from __future__ import annotations

import json

import pytest
from mini_kube.client import ApiError, ResourceRef

from tests.helpers import kubectl

LEASES = ResourceRef("coordination.k8s.io", "v1", "leases")
CONFIGMAPS = ResourceRef("", "v1", "configmaps")
TEMPLATE = {"metadata": {"labels": {"app": "a"}}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
OBJECTS = [
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "status-ns"}},
    {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "status-svc", "namespace": "default"},
     "spec": {"ports": [{"port": 80}]}},
    {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "status-job", "namespace": "default"},
     "spec": {"suspend": True, "template": {**TEMPLATE, "spec": {**TEMPLATE["spec"], "restartPolicy": "Never"}}}},
    {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "status-cj", "namespace": "default"},
     "spec": {"schedule": "*/1 * * * ?", "jobTemplate": {"spec": {"template": {
         **TEMPLATE, "spec": {**TEMPLATE["spec"], "restartPolicy": "Never"}}}}}},
    {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "status-rs", "namespace": "default"},
     "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "a"}}, "template": TEMPLATE}},
]


def _kind_name(obj: dict) -> tuple[str, str, str]:
    meta = obj["metadata"]
    return obj["kind"].lower(), meta["name"], meta.get("namespace", "")


def _get(kube, kind: str, name: str, namespace: str) -> dict:
    scope = ["-n", namespace] if namespace else []
    return json.loads(kubectl(kube, "get", kind, name, *scope, "-o", "json").stdout)


def _replace_status(kube, obj: dict) -> dict:
    return json.loads(kubectl(kube, "replace", "--subresource=status", "-o", "json", "-f", "-",
                              input=json.dumps(obj)).stdout)


@pytest.mark.parametrize("manifest", OBJECTS, ids=lambda o: o["kind"])
@pytest.mark.slow
def test_a_status_write_keeps_its_label_and_annotation_changes(mini_kube, manifest):
    kubectl(mini_kube, "create", "-f", "-", input=json.dumps(manifest))
    kind, name, namespace = _kind_name(manifest)
    obj = _get(mini_kube, kind, name, namespace)
    obj["metadata"].setdefault("annotations", {})["patched-through"] = "status"
    obj["metadata"].setdefault("labels", {})["via"] = "status"
    written = _replace_status(mini_kube, obj)
    assert written["metadata"]["annotations"]["patched-through"] == "status"
    stored = _get(mini_kube, kind, name, namespace)
    assert stored["metadata"]["annotations"]["patched-through"] == "status"
    assert stored["metadata"]["labels"]["via"] == "status"
    assert stored["spec"] == obj["spec"]


def test_a_status_write_cannot_change_what_the_kinds_status_strategy_resets(mini_kube):
    """Deployments keep their labels, Pods their owner references (upstream's status strategies reset them)."""
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment",
                  "metadata": {"name": "status-deploy", "namespace": "default", "labels": {"tier": "web"}},
                  "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "a"}}, "template": TEMPLATE}}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "status-pod", "namespace": "default"},
           "spec": TEMPLATE["spec"]}
    for manifest in (deployment, pod):
        kubectl(mini_kube, "create", "-f", "-", input=json.dumps(manifest))
    obj = _get(mini_kube, "deployment", "status-deploy", "default")
    obj["metadata"]["labels"] = {"tier": "db"}
    obj["metadata"]["annotations"] = {"note": "kept"}
    _replace_status(mini_kube, obj)
    stored = _get(mini_kube, "deployment", "status-deploy", "default")
    assert stored["metadata"]["labels"] == {"tier": "web"}
    assert stored["metadata"]["annotations"] == {"note": "kept"}

    obj = _get(mini_kube, "pod", "status-pod", "default")
    obj["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner",
                                           "uid": "6f1b9a3e-0000-4000-8000-000000000001"}]
    obj["metadata"]["labels"] = {"seen": "yes"}
    _replace_status(mini_kube, obj)
    stored = _get(mini_kube, "pod", "status-pod", "default")
    assert "ownerReferences" not in stored["metadata"]
    assert stored["metadata"]["labels"] == {"seen": "yes"}


@pytest.mark.slow
def test_an_update_without_resource_version_is_unconditional_where_the_kind_allows_it(mini_kube):
    kubectl(mini_kube, "create", "configmap", "plain", "--from-literal=a=1")
    manifest = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "plain", "namespace": "default"},
                "data": {"a": "2"}}
    kubectl(mini_kube, "replace", "-f", "-", input=json.dumps(manifest))
    assert _get(mini_kube, "configmap", "plain", "default")["data"] == {"a": "2"}
    # the status subresource likewise (a Namespace's, through kubectl)
    kubectl(mini_kube, "create", "namespace", "plain-ns")
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "plain-ns", "annotations": {"a": "b"}},
          "status": {"phase": "Active"}}
    _replace_status(mini_kube, ns)
    assert _get(mini_kube, "namespace", "plain-ns", "")["metadata"]["annotations"] == {"a": "b"}


def test_an_update_without_resource_version_is_refused_for_kinds_that_need_one(mini_kube):
    mini_kube.client.create(LEASES, {"metadata": {"name": "held"}}, "default")
    with pytest.raises(ApiError) as caught:
        mini_kube.client.replace(LEASES, {"metadata": {"name": "held"}, "spec": {"holderIdentity": "me"}}, "default")
    body = caught.value.body
    assert caught.value.status == 422
    assert body["message"] == ('leases.coordination.k8s.io "held" is invalid: metadata.resourceVersion: '
                               "Invalid value: 0x0: must be specified for an update")
    assert body["details"] == {"name": "held", "group": "coordination.k8s.io", "kind": "leases", "causes": [
        {"reason": "FieldValueInvalid", "message": "Invalid value: 0x0: must be specified for an update",
         "field": "metadata.resourceVersion"}]}
    assert "holderIdentity" not in mini_kube.client.get(LEASES, "held", "default")["spec"]
