"""The kind rules added from mutation fuzzing are what the served API answers: each bad object is a 422 Invalid
with upstream's cause and is not stored (the object reaches validation defaulted and in its stored shape)."""

from __future__ import annotations

import pytest
from mini_kube.client import Invalid, NotFound, ResourceRef
from mini_kube.machinery.refs import (
    CERTIFICATESIGNINGREQUESTS,
    HORIZONTALPODAUTOSCALERS,
    LIMITRANGES,
    NODES,
    PERSISTENTVOLUMES,
)


def _cases(name: str) -> list[tuple[ResourceRef, dict, str]]:
    return [
        (PERSISTENTVOLUMES, {"spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/x"},
                        "persistentVolumeReclaimPolicy": "Keep"}}, "spec.persistentVolumeReclaimPolicy"),
        (LIMITRANGES, {"spec": {"limits": [{"type": "Container", "min": {"cpu": "2"}, "max": {"cpu": "1"}}]}},
         # defaulting sets default (from max) and defaultRequest (from default), both below min, as upstream does
         "spec.limits[0].min[cpu] spec.limits[0].defaultRequest[cpu] spec.limits[0].default[cpu]"),
        (CERTIFICATESIGNINGREQUESTS, {"spec": {"request": "aGk=", "signerName": "example.com/x", "usages": ["client auth"]}},
         "spec.request"),
        (HORIZONTALPODAUTOSCALERS, {"spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 2, "behavior": {
            "scaleUp": {"policies": [{"type": "Pods", "value": 1, "periodSeconds": 7200}]}}}},
         "spec.behavior.scaleUp.policies[0].periodSeconds"),
        (NODES, {"spec": {"podCIDR": "10.244.0.0"}}, "spec.podCIDRs[0]"),
    ]


@pytest.mark.parametrize("index", range(5))
def test_bad_objects_are_refused_and_not_stored(mini_kube_session, kube_namespace, index):
    client = mini_kube_session.client
    name = f"fuzz-{kube_namespace}"
    ref, body, field = _cases(name)[index]
    namespace = kube_namespace if ref.namespaced else None
    with pytest.raises(Invalid) as caught:
        client.create(ref, {"metadata": {"name": name}, **body}, namespace)
    assert caught.value.status == 422
    assert [c["field"] for c in caught.value.body["details"]["causes"]] == field.split()
    with pytest.raises(NotFound):
        client.get(ref, name, namespace)
