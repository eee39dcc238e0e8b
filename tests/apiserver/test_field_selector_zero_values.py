"""A field selector sees an omitted field as its Go zero value, as upstream's GetAttrs formats the typed field:
the conformance suite lists its nodes with `spec.unschedulable=false`, and Nodes rarely carry that field."""

from __future__ import annotations

import json

from tests.helpers import kubectl

NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "zero-node"}}
POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "zero-pod"},
       "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
RS = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "zero-rs"},
      "spec": {"replicas": 0, "selector": {"matchLabels": {"a": "b"}},
               "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "x"}]}}}}


def _names(kube, *args: str) -> list[str]:
    listed = json.loads(kubectl(kube, "get", *args, "-o", "json").stdout)
    return [item["metadata"]["name"] for item in listed["items"]]


def test_omitted_fields_match_their_go_zero_value(mini_kube):
    for obj in (NODE, POD, RS):
        kubectl(mini_kube, "create", "-f", "-", input=json.dumps(obj))
    assert "zero-node" in _names(mini_kube, "nodes", "--field-selector", "spec.unschedulable=false")
    assert "zero-node" not in _names(mini_kube, "nodes", "--field-selector", "spec.unschedulable=true")
    assert "zero-node" in _names(mini_kube, "nodes", "--field-selector", "spec.unschedulable!=true")
    assert _names(mini_kube, "pods", "--field-selector", "spec.hostNetwork=false") == ["zero-pod"]
    assert _names(mini_kube, "pods", "--field-selector", "spec.hostNetwork=true") == []
    assert _names(mini_kube, "rs", "--field-selector", "status.replicas=0") == ["zero-rs"]
    kubectl(mini_kube, "patch", "node", "zero-node", "-p", '{"spec":{"unschedulable":true}}')
    assert "zero-node" in _names(mini_kube, "nodes", "--field-selector", "spec.unschedulable=true")
