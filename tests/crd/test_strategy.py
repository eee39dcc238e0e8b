"""Status and scale subresources, generation, and selectable fields of custom resources."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from mini_kube.apiserver.crd.strategy import (
    apply_scale,
    field_set,
    prepare_for_create,
    prepare_for_status_update,
    prepare_for_update,
    scale_of,
)
from mini_kube.apiserver.errors import StatusError

OLD = {"apiVersion": "example.com/v1", "kind": "Agent",
       "metadata": {"name": "a1", "namespace": "demo", "generation": 1, "resourceVersion": "5", "uid": "u",
                    "creationTimestamp": "2026-11-22T02:09:05Z", "labels": {"a": "b"}},
       "spec": {"model": "small", "replicas": 2}, "status": {"phase": "Running", "replicas": 1}}
SCALE = {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas",
         "labelSelectorPath": ".status.selector"}


def test_create_drops_status_with_status_subresource() -> None:
    obj: dict[str, Any] = {"metadata": {"name": "x"}, "spec": {}, "status": {"phase": "Hacked"}}
    prepare_for_create(obj, has_status=True)
    assert obj == {"metadata": {"name": "x", "generation": 1}, "spec": {}}
    obj = {"metadata": {}, "status": {"phase": "Kept"}}
    prepare_for_create(obj, has_status=False)
    assert obj["status"] == {"phase": "Kept"}


def test_main_endpoint_ignores_status_and_bumps_generation_on_spec_change() -> None:
    new = copy.deepcopy(OLD)
    new["status"] = {"phase": "Hacked"}
    new["metadata"]["labels"] = {"a": "c"}
    prepare_for_update(new, OLD, has_status=True)
    assert new["status"] == OLD["status"]
    assert new["metadata"]["generation"] == 1  # only metadata changed
    new["spec"]["replicas"] = 5
    prepare_for_update(new, OLD, has_status=True)
    assert new["metadata"]["generation"] == 2


def test_without_status_subresource_status_changes_bump_generation() -> None:
    new = copy.deepcopy(OLD)
    new["status"] = {"phase": "Done"}
    prepare_for_update(new, OLD, has_status=False)
    assert new["status"] == {"phase": "Done"} and new["metadata"]["generation"] == 2


def test_status_endpoint_ignores_everything_but_status() -> None:
    new = copy.deepcopy(OLD)
    new["spec"]["replicas"] = 9
    new["metadata"]["labels"] = {"x": "y"}
    new["status"] = {"phase": "Done"}
    stored = prepare_for_status_update(new, OLD)
    assert stored["spec"] == OLD["spec"] and stored["metadata"]["labels"] == {"a": "b"}
    assert stored["status"] == {"phase": "Done"}
    assert stored["metadata"]["generation"] == 1
    assert "status" not in prepare_for_status_update({"metadata": {}}, OLD)


def test_scale_of_custom_resource() -> None:
    obj = copy.deepcopy(OLD)
    obj["status"]["selector"] = "app=a1"
    assert scale_of(obj, SCALE) == {
        "kind": "Scale", "apiVersion": "autoscaling/v1",
        "metadata": {"name": "a1", "namespace": "demo", "uid": "u", "resourceVersion": "5",
                     "creationTimestamp": "2026-11-22T02:09:05Z"},
        "spec": {"replicas": 2}, "status": {"replicas": 1, "selector": "app=a1"}}
    empty = {"metadata": {"name": "b"}, "spec": {}}
    assert scale_of(empty, SCALE)["spec"] == {} and scale_of(empty, SCALE)["status"] == {"replicas": 0}


def test_apply_scale_writes_spec_replicas() -> None:
    scaled = apply_scale(OLD, SCALE, {"spec": {"replicas": 7}, "metadata": {"resourceVersion": "5"}})
    assert scaled["spec"]["replicas"] == 7 and OLD["spec"]["replicas"] == 2
    nested = apply_scale({"spec": {}}, {"specReplicasPath": ".spec.scaling.size"}, {"spec": {"replicas": 3}})
    assert nested["spec"] == {"scaling": {"size": 3}}
    with pytest.raises(StatusError) as err:
        apply_scale({"spec": {}}, SCALE, {"spec": {}})
    assert err.value.message == 'the spec replicas field ".spec.replicas" cannot be empty'


def test_field_set_for_field_selectors() -> None:
    fields = field_set(OLD, True, [{"jsonPath": ".spec.model"}, {"jsonPath": ".spec.replicas"},
                                   {"jsonPath": ".spec.missing"}])
    assert fields == {"metadata.name": "a1", "metadata.namespace": "demo", "spec.model": "small",
                      "spec.replicas": "2", "spec.missing": ""}
    assert field_set(OLD, False) == {"metadata.name": "a1"}
