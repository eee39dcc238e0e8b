"""Strict field validation says what the apiserver's strict decoder says."""

from __future__ import annotations

import orjson
import pytest
from mini_kube.apiserver.errors import StatusError
from mini_kube.apiserver.schema.field_shapes import custom_shape
from mini_kube.apiserver.schema.fields import (
    duplicate_fields,
    may_have_duplicates,
    strict_problems,
    type_errors,
    unknown_fields,
)
from mini_kube.apiserver.schema.messages import field_validation, warning_header, yaml_problems
from mini_kube.apiserver.schema.yamlload import load_yaml

DEPLOY = "io.k8s.api.apps.v1.Deployment"
CM = "io.k8s.api.core.v1.ConfigMap"

# The body upstream's field validation integration test posts (test/integration/apiserver).
INVALID_JSON = b"""{
  "apiVersion": "apps/v1", "kind": "Deployment",
  "metadata": {"name": "dupename", "name": "d", "labels": {"app": "nginx"}, "unknownMeta": "metaVal"},
  "spec": {
    "unknown1": "val1", "unknownDupe": "valDupe", "unknownDupe": "valDupe2", "paused": true, "paused": false,
    "selector": {"matchLabels": {"app": "nginx"}},
    "template": {"metadata": {"labels": {"app": "nginx"}}, "spec": {"containers": [{
      "name": "nginx", "image": "nginx:latest", "unknownNested": "val1",
      "imagePullPolicy": "Always", "imagePullPolicy": "Never"}]}}}}"""

INVALID_YAML = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: dupename
  name: d
  unknownMeta: metaVal
  labels:
    app: nginx
spec:
  unknown1: val1
  unknownDupe: valDupe
  unknownDupe: valDupe2
  paused: true
  paused: false
  selector:
    matchLabels:
      app: nginx
  template:
    metadata:
      labels:
        app: nginx
    spec:
      containers:
      - name: nginx
        image: nginx:latest
        unknownNested: val1
        imagePullPolicy: Always
        imagePullPolicy: Never"""


def test_unknown_fields_paths():
    obj = {"bogus": 1, "metadata": {"name": "x", "labelz": {}}, "spec": {
        "replicaz": 2, "template": {"spec": {"containers": [{"name": "c"}, {"name": "d", "imagez": "x"}]}}}}
    assert unknown_fields(DEPLOY, obj) == [
        "bogus", "metadata.labelz", "spec.replicaz", "spec.template.spec.containers[1].imagez"]


def test_known_shapes_are_not_unknown():
    obj = {"apiVersion": "apps/v1", "kind": "Deployment",
           "metadata": {"labels": {"any-key": "v"}, "annotations": {"a/b": "c"},
                        "managedFields": [{"fieldsV1": {"f:spec": {"f:replicas": {}}}}]},
           "spec": {"strategy": {"rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 1}},
                    "template": {"spec": {"containers": [{"resources": {"limits": {"cpu": "1", "memory": 5}}}]}}}}
    assert unknown_fields(DEPLOY, obj) == []
    revision = {"data": {"anything": {"goes": [1, {"here": True}]}}, "revision": 1}
    assert unknown_fields("io.k8s.api.apps.v1.ControllerRevision", revision) == []


def test_empty_structs_reject_fields():
    crd = {"spec": {"versions": [{"name": "v1", "subresources": {"status": {"x": 1}}}]}}
    assert unknown_fields("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition",
                          crd) == ["spec.versions[0].subresources.status.x"]


def test_strict_problems_interleave_duplicates_and_unknowns_in_document_order():
    assert strict_problems(DEPLOY, INVALID_JSON, orjson.loads(INVALID_JSON)) == [
        'duplicate field "metadata.name"', 'unknown field "metadata.unknownMeta"', 'unknown field "spec.unknown1"',
        'unknown field "spec.unknownDupe"', 'duplicate field "spec.paused"',
        'unknown field "spec.template.spec.containers[0].unknownNested"',
        'duplicate field "spec.template.spec.containers[0].imagePullPolicy"']


def test_strict_error_and_warnings_match_the_real_server():
    with pytest.raises(StatusError) as err:
        field_validation("Strict", "ConfigMap", "v1", ['unknown field "bogus"'])
    assert err.value.code == 400 and err.value.reason == "BadRequest"
    assert err.value.message == ('ConfigMap in version "v1" cannot be handled as a ConfigMap: '
                                 'strict decoding error: unknown field "bogus"')
    assert field_validation("Warn", "ConfigMap", "v1", ['unknown field "bogus"']) == ['299 - "unknown field \\"bogus\\""']
    assert field_validation(None, "ConfigMap", "v1", ['unknown field "bogus"']) == ['299 - "unknown field \\"bogus\\""']
    assert field_validation("Ignore", "ConfigMap", "v1", ['unknown field "bogus"']) == []
    assert warning_header('a\\b "c"') == '299 - "a\\\\b \\"c\\""'


def test_yaml_body_problems_like_upstream():
    obj, duplicates = load_yaml(INVALID_YAML)
    assert obj["metadata"]["name"] == "d" and obj["spec"]["paused"] is False
    problems = yaml_problems(duplicates, unknown_fields(DEPLOY, obj), strict=True)
    assert "strict decoding error: " + ", ".join(problems) == (
        'strict decoding error: yaml: unmarshal errors:\n'
        '  line 5: key "name" already set in map\n'
        '  line 12: key "unknownDupe" already set in map\n'
        '  line 14: key "paused" already set in map\n'
        '  line 28: key "imagePullPolicy" already set in map, unknown field "metadata.unknownMeta", '
        'unknown field "spec.template.spec.containers[0].unknownNested", unknown field "spec.unknown1", '
        'unknown field "spec.unknownDupe"')
    assert yaml_problems(duplicates, [], strict=False)[0] == 'line 5: key "name" already set in map'


def test_yaml_keeps_timestamps_as_strings():
    obj, duplicates = load_yaml("metadata:\n  creationTimestamp: 2026-01-02T03:04:05Z\n  labels: {a: 'b'}\n")
    assert obj == {"metadata": {"creationTimestamp": "2026-01-02T03:04:05Z", "labels": {"a": "b"}}}
    assert duplicates == []


def test_duplicate_fields_cheap_check():
    body = {"metadata": {"annotations": {"last": '{"a":1,"a":2,"b\\\\":3}'}}, "data": {"k": "v"}}
    raw = orjson.dumps(body)
    assert not may_have_duplicates(raw, body) or duplicate_fields(raw, body) == []
    plain = b'{"data": {"k": "v", "x": "\\":"}}'
    assert not may_have_duplicates(plain, orjson.loads(plain))
    dup = b'{"data": {"k": "v", "k": "w"}, "items": [{"a": 1, "a": 2}]}'
    assert may_have_duplicates(dup, orjson.loads(dup))
    assert duplicate_fields(dup, orjson.loads(dup)) == ["data.k", "items[0].a"]
    assert duplicate_fields(b'{"a": {"b\\\\": 1, "b\\\\": 2}}') == ["a.b\\"]


def test_custom_resource_schema():
    schema = {"type": "object", "properties": {
        "spec": {"type": "object", "properties": {
            "model": {"type": "string"}, "replicas": {"type": "integer"},
            "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "port": {"x-kubernetes-int-or-string": True},
            "pod": {"type": "object", "x-kubernetes-embedded-resource": True, "properties": {}},
        }},
        "status": {"type": "object", "properties": {"phase": {"type": "string"}}}}}
    shape = custom_shape(schema)
    obj = {"apiVersion": "example.com/v1", "kind": "Agent", "metadata": {"name": "a", "bogusMeta": 1},
           "spec": {"model": "huge", "replicas": 50, "unknownField": 1, "extra": {"free": {"form": 1}},
                    "labels": {"x": "y"}, "port": "http",
                    "pod": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "nope": 1}, "spec": {}}}}
    assert unknown_fields(shape, obj) == ["metadata.bogusMeta", "spec.unknownField", "spec.pod.metadata.nope",
                                          "spec.pod.spec"]
    raw = b'{"spec": {"extra": {"a": 1, "a": 2}, "unknownField": 1, "unknownField": 2}}'
    assert strict_problems(shape, raw, orjson.loads(raw)) == [
        'duplicate field "spec.extra.a"', 'unknown field "spec.unknownField"']


@pytest.mark.parametrize(("obj", "message"), [
    ({"spec": {"replicas": "3"}},
     "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32"),
    ({"spec": {"replicas": 1.5}},
     "json: cannot unmarshal number 1.5 into Go struct field DeploymentSpec.spec.replicas of type int32"),
    ({"spec": {"replicas": 3000000000}},
     "json: cannot unmarshal number 3000000000 into Go struct field DeploymentSpec.spec.replicas of type int32"),
    ({"spec": "fast"},
     "json: cannot unmarshal string into Go struct field Deployment.spec of type v1.DeploymentSpec"),
    ({"spec": {"template": {"spec": {"containers": {"name": "c"}}}}},
     "json: cannot unmarshal object into Go struct field PodSpec.spec.template.spec.containers of type []v1.Container"),
    ({"spec": {"template": {"spec": {"containers": [{"name": "c", "image": 7}]}}}},
     "json: cannot unmarshal number into Go struct field Container.spec.template.spec.containers.image of type string"),
    ({"metadata": {"labels": {"a": True}}},
     "json: cannot unmarshal bool into Go struct field ObjectMeta.metadata.labels of type string"),
    ({"spec": {"paused": "yes"}},
     "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.paused of type bool"),
    ({"spec": {"strategy": {"rollingUpdate": {"maxSurge": [1]}}}},
     "json: cannot unmarshal array into Go struct field RollingUpdateDeployment.spec.strategy.rollingUpdate.maxSurge of type int32"),
    ({"spec": {"template": {"spec": {"containers": [{"resources": {"limits": {"cpu": "lots"}}}]}}}},
     "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
])
def test_type_errors(obj, message):
    assert type_errors(DEPLOY, obj) == message


def test_no_type_error_for_valid_or_null_values():
    obj = {"metadata": {"name": "x", "labels": None}, "spec": {"replicas": None, "paused": False,
           "strategy": {"rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 0}},
           "template": {"spec": {"containers": [{"resources": {"limits": {"cpu": 0.5, "memory": "1Gi"}}}]}}}}
    assert type_errors(DEPLOY, obj) is None
    assert type_errors(CM, {"data": {"a": "b"}, "binaryData": {"b": "AAE="}}) is None
    assert type_errors(CM, {"data": {"a": 1}}) == \
        "json: cannot unmarshal number into Go struct field ConfigMap.data of type string"
