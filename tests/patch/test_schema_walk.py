"""The schema accessor over built-in definitions and CRD structural schemas."""

from __future__ import annotations

import pytest
from mini_kube.apiserver.patch import SchemaNode
from mini_kube.apiserver.patch.schema_walk import deduced


def test_builtin_navigation_and_patch_metadata(pod):
    spec = pod.field("spec")
    containers = spec.field("containers")
    assert (containers.kind, containers.patch_strategy, containers.merge_key) == ("list", "merge", "name")
    assert containers.list_relationship() == ("map", ("name",))
    ports = containers.items().field("ports")
    assert ports.list_map_keys == ("containerPort", "protocol") and ports.items().key_defaults == {"protocol": "TCP"}
    volumes = spec.field("volumes")
    assert volumes.patch_strategy == "merge,retainKeys"
    assert spec.field("tolerations").is_atomic and spec.field("nodeSelector").is_atomic
    assert spec.field("nodeSelector").map_values().kind == "scalar"
    assert pod.field("metadata").field("labels").map_type == "" and not pod.field("metadata").field("labels").is_atomic
    assert pod.field("metadata").field("finalizers").list_relationship() == ("set", ())
    assert pod.field("metadata").field("ownerReferences").merge_key == "uid"
    assert pod.field("nope") is None and pod.map_values() is None


def test_type_level_extensions_and_scalars(deployment):
    spec = deployment.field("spec")
    assert spec.field("selector").map_type == "atomic" and spec.field("selector").is_atomic
    assert spec.field("strategy").patch_strategy == "retainKeys"
    assert spec.field("strategy").field("rollingUpdate").field("maxSurge").kind == "scalar"  # IntOrString
    assert spec.field("replicas").kind == "scalar"


def test_nodes_are_memoized(deployment):
    assert SchemaNode.for_builtin("io.k8s.api.apps.v1.Deployment") is deployment
    spec = deployment.field("spec")
    assert deployment.field("spec") is spec
    # A $ref without field-level extensions shares the definition's node.
    assert spec.field("template").field("spec") is SchemaNode.for_builtin("io.k8s.api.core.v1.PodSpec")
    with pytest.raises(KeyError):
        SchemaNode.for_builtin("io.k8s.api.core.v1.Nope")


def test_structural_schemas():
    schema = {"type": "object", "properties": {
        "spec": {"type": "object", "properties": {
            "ids": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"},
            "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
            "atomic": {"type": "object", "x-kubernetes-map-type": "atomic", "properties": {"a": {"type": "string"}}},
        }}}}
    node = SchemaNode.for_structural(schema)
    assert SchemaNode.for_structural(schema) is node and node.origin == "structural"
    spec = node.field("spec")
    assert spec.field("ids").list_relationship() == ("set", ())
    assert spec.field("free").map_values() is deduced()
    assert spec.field("atomic").is_atomic
    assert spec.map_values() is None  # undeclared fields are not allowed here
    # metadata is the built-in ObjectMeta, as upstream wires it for custom resources.
    assert node.field("metadata").field("ownerReferences").merge_key == "uid"
    assert SchemaNode.for_structural(None) is deduced()


def test_deduced_node():
    node = deduced()
    assert node.kind == "any" and node.map_values() is node and node.field("x") is None
    assert node.list_relationship() == ("atomic", ())


def test_structural_validation_keywords_do_not_change_the_shape():
    node = SchemaNode.for_structural({"type": "object", "properties": {"spec": {
        "type": "object", "oneOf": [{"required": ["a"]}, {"required": ["b"]}],
        "properties": {"a": {"type": "string"}, "b": {"x-kubernetes-int-or-string": True}}}}})
    spec = node.field("spec")
    assert spec.kind == "map" and not spec.is_atomic and spec.field("b").kind == "scalar"
