"""Schema validation of custom resources: kube-openapi's checks, worded as the apiserver reports them."""

from __future__ import annotations

from typing import Any

import pytest
from mini_kube.apiserver.crd.schema_validation import VersionSchema
from mini_kube.apiserver.errors import invalid_object


def errors_of(schema: dict[str, Any], value: Any, old: Any = None) -> list[str]:
    vs = VersionSchema({"type": "object", "properties": {"spec": schema}})
    obj = {"spec": value}
    return [str(e) for e in vs.validate(obj, None if old is None else {"spec": old})]


def test_agent_bad_schema_matches_reference_output(agent_crd: dict[str, Any]) -> None:
    vs = VersionSchema.for_version(agent_crd, "v1")
    bad = {"apiVersion": "example.com/v1", "kind": "Agent", "metadata": {"name": "bad2", "namespace": "demo"},
           "spec": {"model": "huge", "replicas": 50, "prompt": 42}}
    errs = vs.validate(bad)
    # the reference server prints these three lines (in map order, which varies between runs)
    assert sorted(str(e) for e in errs) == [
        'spec.model: Unsupported value: "huge": supported values: "small", "medium", "large"',
        'spec.prompt: Invalid value: "integer": spec.prompt in body must be of type string: "integer"',
        "spec.replicas: Invalid value: 50: spec.replicas in body should be less than or equal to 10",
    ]
    status = invalid_object("Agent", "example.com", "bad2", errs).status()
    assert status["message"].startswith('Agent.example.com "bad2" is invalid: [') or \
        status["message"].startswith('Agent "bad2" is invalid: [')
    assert {c["reason"] for c in status["details"]["causes"]} == {
        "FieldValueNotSupported", "FieldValueTypeInvalid", "FieldValueInvalid"}


def test_valid_agent_has_no_errors(agent_crd: dict[str, Any], agent: dict[str, Any]) -> None:
    vs = VersionSchema.for_version(agent_crd, "v1")
    vs.apply_defaults(agent)
    assert vs.validate(agent) == []


def test_required_and_minimum(agent_crd: dict[str, Any]) -> None:
    vs = VersionSchema.for_version(agent_crd, "v1")
    obj = {"apiVersion": "example.com/v1", "kind": "Agent", "metadata": {"name": "x"}, "spec": {"replicas": 0}}
    assert [str(e) for e in vs.validate(obj)] == [
        "spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1",
        "spec.model: Required value",
    ]


def test_wrong_kind_or_api_version_stops_validation(agent_crd: dict[str, Any]) -> None:
    vs = VersionSchema.for_version(agent_crd, "v1")
    obj = {"apiVersion": "example.com/v2", "kind": "Agent", "spec": {}}
    assert [str(e) for e in vs.validate(obj)] == [
        'apiVersion: Invalid value: "example.com/v2": must be example.com/v1']


@pytest.mark.parametrize(("schema", "value", "expected"), [
    ({"type": "string", "maxLength": 3}, "abcd", "spec: Too long: may not be more than 3 bytes"),
    ({"type": "string", "minLength": 3}, "ab", 'spec: Invalid value: "ab": spec in body should be at least 3 chars long'),
    ({"type": "string", "pattern": "^[a-z]+$"}, "A1",
     "spec: Invalid value: \"A1\": spec in body should match '^[a-z]+$'"),
    ({"type": "integer", "maximum": 5, "exclusiveMaximum": True}, 5,
     "spec: Invalid value: 5: spec in body should be less than 5"),
    ({"type": "integer", "minimum": 5, "exclusiveMinimum": True}, 5,
     "spec: Invalid value: 5: spec in body should be greater than 5"),
    ({"type": "number", "maximum": 1.5}, 2.25, "spec: Invalid value: 2.25: spec in body should be less than or equal to 1.5"),
    ({"type": "integer", "multipleOf": 3}, 7, "spec: Invalid value: 7: spec in body should be a multiple of 3"),
    ({"type": "integer"}, "7", 'spec: Invalid value: "string": spec in body must be of type integer: "string"'),
    ({"type": "integer"}, 1.5, 'spec: Invalid value: "number": spec in body must be of type integer: "number"'),
    ({"type": "boolean"}, None, 'spec: Invalid value: "null": spec in body must be of type boolean: "null"'),
    ({"type": "array", "items": {"type": "string"}, "maxItems": 1}, ["a", "b"],
     "spec: Too many: 2: must have at most 1 items"),
    ({"type": "array", "items": {"type": "string"}, "minItems": 2}, ["a"],
     "spec: Invalid value: 1: spec in body should have at least 2 items"),
    ({"type": "object", "maxProperties": 1}, {"a": 1, "b": 2}, "spec: Too many: 2: must have at most 1 items"),
    ({"type": "string", "format": "uuid"}, "nope",
     'spec: Invalid value: "nope": spec in body must be of type uuid: "nope"'),
    ({"type": "string", "format": "date-time"}, "yesterday",
     'spec: Invalid value: "yesterday": spec in body must be of type date-time: "yesterday"'),
    ({"type": "integer", "enum": [1, 2]}, 3, 'spec: Unsupported value: 3: supported values: "1", "2"'),
])
def test_value_checks_are_worded_like_kube_openapi(schema: dict[str, Any], value: Any, expected: str) -> None:
    assert errors_of(schema, value) == [expected]


def test_valid_values_pass() -> None:
    assert errors_of({"type": "number", "maximum": 3}, 2) == []  # an integer is a number
    assert errors_of({"type": "integer"}, 2.0) == []  # an integral float is an integer
    assert errors_of({"type": "string", "format": "date-time"}, "2024-05-01T10:00:00Z") == []
    assert errors_of({"type": "string", "format": "email"}, "a@b.c") == []
    assert errors_of({"type": "string", "nullable": True}, None) == []
    assert errors_of({"type": "string", "format": "unknown-format"}, "anything") == []


def test_int_or_string() -> None:
    schema = {"x-kubernetes-int-or-string": True}
    assert errors_of(schema, 3) == []
    assert errors_of(schema, "50%") == []
    assert errors_of(schema, True) == [
        'spec: Invalid value: "boolean": spec in body must be of type integer,string: "boolean"']


def test_nested_paths_use_dots_and_indexes() -> None:
    schema = {"type": "object", "properties": {"items": {"type": "array", "items": {
        "type": "object", "required": ["name"], "properties": {"port": {"type": "integer", "maximum": 10}}}}},
        "additionalProperties": False}
    errs = errors_of(schema, {"items": [{"name": "a"}, {"port": 11}]})
    assert errs == ["spec.items[1].port: Invalid value: 11: spec.items[1].port in body should be less than or equal to 10",
                    "spec.items[1].name: Required value"]
    labels = {"type": "object", "additionalProperties": {"type": "string", "maxLength": 2}}
    assert errors_of(labels, {"a.b/c": "xyz"}) == ["spec.a.b/c: Too long: may not be more than 2 bytes"]


def test_update_ratchets_unchanged_invalid_values() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer", "maximum": 1},
                                               "b": {"type": "integer", "maximum": 1}}}
    # a was already invalid and did not change: tolerated; b changed: reported
    assert errors_of(schema, {"a": 5, "b": 7}, old={"a": 5, "b": 0}) == [
        "spec.b: Invalid value: 7: spec.b in body should be less than or equal to 1"]
    assert errors_of(schema, {"a": 5}, old={"a": 4}) == [
        "spec.a: Invalid value: 5: spec.a in body should be less than or equal to 1"]


def test_any_of_reports_on_the_root() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
              "anyOf": [{"required": ["a"]}, {"required": ["b"]}]}
    assert errors_of(schema, {}) == ['<nil>: Invalid value: "": "spec" must validate at least one schema (anyOf)',
                                     "spec.a: Required value"]


def test_status_subresource_validates_status_with_relative_names(agent_crd: dict[str, Any]) -> None:
    vs = VersionSchema.for_version(agent_crd, "v1")
    old = {"apiVersion": "example.com/v1", "kind": "Agent", "metadata": {"name": "a"}, "spec": {"model": "small"}}
    new = {**old, "status": {"phase": 3}}
    assert [str(e) for e in vs.validate_status(new, old)] == [
        'status.phase: Invalid value: "integer": phase in body must be of type string: "integer"']


def test_list_type_set_and_map_duplicates() -> None:
    schema = {"type": "object", "properties": {
        "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
        "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                  "items": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}}},
    }}
    errs = errors_of(schema, {"tags": ["a", "b", "a"], "ports": [{"name": "x"}, {"name": "x"}]})
    assert errs == ['spec.tags[2]: Duplicate value: "a"',
                    'spec.ports[1]: Duplicate value: map[string]interface {}{"name":"x"}']


def test_embedded_resource_needs_type_meta() -> None:
    schema = {"type": "object", "properties": {"template": {
        "type": "object", "x-kubernetes-embedded-resource": True, "x-kubernetes-preserve-unknown-fields": True}}}
    errs = errors_of(schema, {"template": {"kind": "Pod", "metadata": {"name": "Bad_Name"}}})
    assert errs == ["spec.template.apiVersion: Required value"]
    errs = errors_of(schema, {"template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a/b"}}})
    assert errs == ["spec.template.metadata.name: Invalid value: \"a/b\": may not contain '/'"]


def test_scale_paths_must_hold_int32(agent_crd: dict[str, Any]) -> None:
    agent_crd["spec"]["versions"][0]["subresources"]["scale"] = {
        "specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}
    schema = agent_crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    schema["properties"]["status"]["properties"]["replicas"] = {"type": "integer"}
    vs = VersionSchema.for_version(agent_crd, "v1")
    obj = {"apiVersion": "example.com/v1", "kind": "Agent", "spec": {"model": "small", "replicas": 3},
           "status": {"replicas": -1}}
    assert [str(e) for e in vs.validate(obj)] == [
        ".status.replicas: Invalid value: -1: should be a non-negative integer"]


def test_null_against_an_enum_is_unsupported_even_if_nullable() -> None:
    assert errors_of({"type": "string", "nullable": True, "enum": ["a"]}, None) == [
        'spec: Unsupported value: "null": supported values: "a"']
