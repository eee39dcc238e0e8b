"""Defaulting and pruning of custom resources, as the apiserver applies them on decode."""

from __future__ import annotations

import copy
from typing import Any

from mini_kube.apiserver.crd.schema_validation import VersionSchema


def schema(props: dict[str, Any], **extra: Any) -> VersionSchema:
    return VersionSchema({"type": "object", "properties": {"spec": {"type": "object", "properties": props, **extra}}})


def test_reference_agent_gets_replicas_default(agent_crd: dict[str, Any], agent: dict[str, Any]) -> None:
    vs = VersionSchema.for_version(agent_crd, "v1")
    assert vs.prune(agent) == []
    vs.apply_defaults(agent)
    assert agent["spec"] == {"model": "small", "prompt": "hello", "replicas": 1}


def test_unknown_fields_are_pruned_and_reported(agent_crd: dict[str, Any]) -> None:
    vs = VersionSchema.for_version(agent_crd, "v1")
    obj = {"apiVersion": "example.com/v1", "kind": "Agent", "metadata": {"name": "bad1", "namespace": "demo"},
           "spec": {"model": "huge", "replicas": 50, "unknownField": 1}, "extra": {"a": 1}}
    # the reference server rejects this with: strict decoding error: unknown field "spec.unknownField"
    assert vs.prune(obj) == ["extra", "spec.unknownField"]
    assert obj == {"apiVersion": "example.com/v1", "kind": "Agent", "metadata": {"name": "bad1", "namespace": "demo"},
                   "spec": {"model": "huge", "replicas": 50}}


def test_metadata_is_cut_to_object_meta() -> None:
    vs = schema({})
    obj = {"metadata": {"name": "a", "labels": {}, "bogus": 1, "generation": 0, "finalizers": ["x"],
                        "ownerReferences": [{"kind": "K", "name": "o", "junk": True}]}, "spec": {}}
    assert vs.prune(obj) == ["metadata.bogus", "metadata.ownerReferences[0].junk"]
    assert obj["metadata"] == {"name": "a", "finalizers": ["x"], "ownerReferences": [{"kind": "K", "name": "o"}]}


def test_preserve_unknown_fields_keeps_everything_below() -> None:
    vs = schema({"raw": {"type": "object", "x-kubernetes-preserve-unknown-fields": True,
                         "properties": {"known": {"type": "object", "properties": {"a": {"type": "string"}}}}}})
    obj = {"spec": {"raw": {"anything": {"deep": [1, {"x": 2}]}, "known": {"a": "x", "b": "pruned"}}}}
    assert vs.prune(obj) == ["spec.raw.known.b"]
    assert obj["spec"]["raw"] == {"anything": {"deep": [1, {"x": 2}]}, "known": {"a": "x"}}


def test_embedded_resources_keep_type_and_object_meta() -> None:
    vs = schema({"template": {"type": "object", "x-kubernetes-embedded-resource": True,
                              "properties": {"spec": {"type": "object", "properties": {"image": {"type": "string"}}}}}})
    obj = {"spec": {"template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "zzz": 1},
                                 "spec": {"image": "nginx", "cmd": "x"}, "other": 1}}}
    assert vs.prune(obj) == ["spec.template.other", "spec.template.spec.cmd", "spec.template.metadata.zzz"]
    assert obj["spec"]["template"] == {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                                       "spec": {"image": "nginx"}}


def test_items_and_additional_properties_are_pruned() -> None:
    vs = schema({"list": {"type": "array", "items": {"type": "object", "properties": {"a": {"type": "string"}}}},
                 "map": {"type": "object", "additionalProperties": {"type": "object", "properties": {
                     "b": {"type": "integer"}}}}})
    obj = {"spec": {"list": [{"a": "x", "z": 1}, {"y": 2}], "map": {"k": {"b": 1, "c": 2}}}}
    assert vs.prune(obj) == ["spec.list[0].z", "spec.list[1].y", "spec.map.k.c"]
    assert obj["spec"] == {"list": [{"a": "x"}, {}], "map": {"k": {"b": 1}}}


def test_non_nullable_nulls_without_default_are_dropped() -> None:
    vs = schema({"a": {"type": "string"}, "b": {"type": "string", "nullable": True},
                 "c": {"type": "string", "default": "dflt"}})
    obj = {"spec": {"a": None, "b": None, "c": None}}
    assert vs.prune(obj) == []
    assert obj["spec"] == {"b": None, "c": None}
    vs.apply_defaults(obj)
    assert obj["spec"] == {"b": None, "c": "dflt"}


def test_defaults_nested_in_arrays_maps_and_defaulted_objects() -> None:
    item = {"type": "object", "properties": {"port": {"type": "integer", "default": 80},
                                             "proto": {"type": "string", "default": "TCP"}}}
    vs = schema({
        "ports": {"type": "array", "items": item},
        "byName": {"type": "object", "additionalProperties": item},
        "config": {"type": "object", "default": {}, "properties": {
            "level": {"type": "string", "default": "info"},
            "nested": {"type": "object", "default": {"on": True}, "properties": {
                "on": {"type": "boolean"}, "n": {"type": "integer", "default": 3}}}}},
        "labels": {"type": "object", "additionalProperties": {"type": "string", "default": "x"}},
    })
    obj = {"spec": {"ports": [{}, {"port": 8080}], "byName": {"web": {"proto": "UDP"}}, "labels": {"a": None}}}
    vs.apply_defaults(obj)
    assert obj["spec"] == {
        "ports": [{"port": 80, "proto": "TCP"}, {"port": 8080, "proto": "TCP"}],
        "byName": {"web": {"port": 80, "proto": "UDP"}},
        "labels": {"a": "x"},
        "config": {"level": "info", "nested": {"on": True, "n": 3}},
    }


def test_defaults_are_copies() -> None:
    vs = schema({"tags": {"type": "array", "items": {"type": "string"}, "default": ["a"]}})
    first, second = {"spec": {}}, {"spec": {}}
    vs.apply_defaults(first)
    vs.apply_defaults(second)
    first["spec"]["tags"].append("b")
    assert second["spec"]["tags"] == ["a"]


def test_no_default_for_present_values_and_missing_parents() -> None:
    vs = schema({"a": {"type": "object", "properties": {"b": {"type": "integer", "default": 1}}}})
    obj: dict[str, Any] = {"spec": {}}
    vs.apply_defaults(obj)
    assert obj == {"spec": {}}  # a is absent and has no default: nothing below it is created


def test_conversion_none_rewrites_api_version_and_prunes_to_the_target(agent_crd: dict[str, Any]) -> None:
    v2 = copy.deepcopy(agent_crd["spec"]["versions"][0])
    v2.update(name="v2", storage=False)
    del v2["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["prompt"]
    agent_crd["spec"]["versions"].append(v2)
    stored = {"apiVersion": "example.com/v1", "kind": "Agent", "metadata": {"name": "a1"},
              "spec": {"model": "small", "prompt": "hello", "replicas": 1}}
    as_v2 = VersionSchema.for_version(agent_crd, "v2").convert(copy.deepcopy(stored))
    assert as_v2 == {"apiVersion": "example.com/v2", "kind": "Agent", "metadata": {"name": "a1"},
                     "spec": {"model": "small", "replicas": 1}}
    back = VersionSchema.for_version(agent_crd, "v1").convert(copy.deepcopy(stored))
    assert back == stored
