"""The OpenAPI documents are complete, consistent, cached per registry state, and built lazily."""

from __future__ import annotations

import hashlib
import subprocess
import sys

import orjson
import pytest
from mini_kube.apiserver.registry.kinds import builtin_resources
from mini_kube.apiserver.resources import ResourceRegistry, ResourceType
from mini_kube.apiserver.schema import openapi

AGENT_SCHEMA = {"type": "object", "properties": {
    "spec": {"type": "object", "required": ["model"], "properties": {
        "model": {"type": "string", "enum": ["small", "medium", "large"]},
        "replicas": {"type": "integer", "minimum": 1, "maximum": 10, "default": 1},
        "port": {"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}]}}},
    "status": {"type": "object", "properties": {"phase": {"type": "string"}}}}}


def registry() -> ResourceRegistry:
    return ResourceRegistry(builtin_resources())


def agent_row() -> ResourceType:
    return ResourceType(group="example.com", version="v1", kind="Agent", plural="agents", namespaced=True,
                        short_names=("ag",), schema=AGENT_SCHEMA, crd={"metadata": {"name": "agents.example.com"}})


def refs(node, out):
    if isinstance(node, dict):
        if isinstance(node.get("$ref"), str):
            out.add(node["$ref"])
        for value in node.values():
            refs(value, out)
    elif isinstance(node, list):
        for value in node:
            refs(value, out)
    return out


def types(node, out):
    if isinstance(node, dict):
        if "type" in node and not isinstance(node.get("type"), dict):
            out.add(repr(node["type"]))
        for key, value in node.items():
            if key != "properties" or not isinstance(value, dict):
                types(value, out)
            else:
                for sub in value.values():
                    types(sub, out)
    elif isinstance(node, list):
        for value in node:
            types(value, out)
    return out


def test_root_lists_every_group_version_with_the_hash_of_its_document():
    reg = registry()
    root = openapi.openapi_v3_root(reg)["paths"]
    assert "api/v1" in root and "apis/apps/v1" in root and "apis/autoscaling/v2" in root
    for key, entry in root.items():
        url = entry["serverRelativeURL"]
        group, version = ("", key.split("/")[1]) if key.startswith("api/") else tuple(key.split("/")[1:])
        body = openapi.openapi_v3_document_bytes(reg, group, version)
        assert url == f"/openapi/v3/{key}?hash={hashlib.sha512(body).hexdigest().upper()}"
    assert openapi.openapi_v3_root_bytes(registry()) == openapi.openapi_v3_root_bytes(reg)  # stable


@pytest.mark.parametrize(("group", "version"), [("", "v1"), ("apps", "v1"), ("batch", "v1"),
                                                ("admissionregistration.k8s.io", "v1"),
                                                ("apiextensions.k8s.io", "v1"), ("autoscaling", "v1")])
def test_documents_are_self_contained_openapi(group, version):
    doc = openapi.openapi_v3_document(registry(), group, version)
    assert doc["openapi"].startswith("3.") and doc["info"]["title"] == "Kubernetes"
    schemas = doc["components"]["schemas"]
    missing = {r for r in refs(doc, set()) if r.removeprefix("#/components/schemas/") not in schemas}
    assert missing == set()
    assert all("null" not in t for t in types(schemas, set()))
    for item in doc["paths"].values():
        patch = item.get("patch")
        if patch:
            names = {p["name"] for p in patch["parameters"] if p["in"] == "query"}
            assert "fieldValidation" in names
            assert "application/strategic-merge-patch+json" in patch["requestBody"]["content"]
            assert set(patch["x-kubernetes-group-version-kind"]) == {"group", "version", "kind"}


def test_apps_v1_schemas_keep_upstream_extensions():
    doc = openapi.openapi_v3_document(registry(), "apps", "v1")
    schemas = doc["components"]["schemas"]
    deployment = schemas["io.k8s.api.apps.v1.Deployment"]
    assert deployment["type"] == "object"
    assert deployment["x-kubernetes-group-version-kind"] == [{"group": "apps", "kind": "Deployment", "version": "v1"}]
    assert deployment["properties"]["kind"] == {"description": deployment["properties"]["kind"]["description"],
                                                "type": "string"}
    assert deployment["properties"]["spec"]["allOf"] == [{"$ref": "#/components/schemas/io.k8s.api.apps.v1.DeploymentSpec"}]
    spec = schemas["io.k8s.api.apps.v1.DeploymentSpec"]
    assert spec["properties"]["strategy"]["x-kubernetes-patch-strategy"] == "retainKeys"
    assert spec["properties"]["replicas"] == {**spec["properties"]["replicas"], "type": "integer", "format": "int32"}
    containers = schemas["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"]
    assert containers["x-kubernetes-patch-merge-key"] == "name"
    assert containers["x-kubernetes-list-type"] == "map" and containers["x-kubernetes-list-map-keys"] == ["name"]
    int_or_string = schemas["io.k8s.apimachinery.pkg.util.intstr.IntOrString"]
    assert int_or_string["oneOf"] == [{"type": "integer"}, {"type": "string"}]
    assert int_or_string["x-kubernetes-int-or-string"] is True
    scale = doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale"]["patch"]
    assert scale["x-kubernetes-group-version-kind"] == {"group": "autoscaling", "kind": "Scale", "version": "v1"}
    assert "io.k8s.api.autoscaling.v1.Scale" in schemas
    assert "/apis/apps/v1/deployments" in doc["paths"]
    assert openapi.openapi_v3_document(registry(), "nope", "v1") is None


def test_custom_resources_are_published_and_invalidate_the_cache():
    reg = registry()
    before = openapi.openapi_v3_root_bytes(reg)
    assert openapi.openapi_v3_root_bytes(reg) is before  # memoized bytes
    reg.add([agent_row()])
    root = openapi.openapi_v3_root(reg)["paths"]
    assert "apis/example.com/v1" in root and openapi.openapi_v3_root_bytes(reg) != before
    doc = openapi.openapi_v3_document(reg, "example.com", "v1")
    schemas = doc["components"]["schemas"]
    agent = schemas["com.example.v1.Agent"]
    assert agent["x-kubernetes-group-version-kind"] == [{"group": "example.com", "kind": "Agent", "version": "v1"}]
    assert agent["properties"]["metadata"]["allOf"] == [{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}]
    assert agent["properties"]["spec"]["properties"]["model"]["enum"] == ["small", "medium", "large"]
    assert schemas["com.example.v1.AgentList"]["properties"]["items"]["items"]["$ref"] == \
        "#/components/schemas/com.example.v1.Agent"
    assert {r for r in refs(doc, set()) if r.removeprefix("#/components/schemas/") not in schemas} == set()
    patch = doc["paths"]["/apis/example.com/v1/namespaces/{namespace}/agents/{name}"]["patch"]
    assert "application/strategic-merge-patch+json" not in patch["requestBody"]["content"]
    assert "application/merge-patch+json" in patch["requestBody"]["content"]
    reg.remove("example.com", "agents")
    assert "apis/example.com/v1" not in openapi.openapi_v3_root(reg)["paths"]


def test_documents_of_built_in_resources_are_built_once_per_process():
    """Every server's built-in documents are the same (the suite starts hundreds of servers in a few processes):
    a second registry is served the bytes the first built; a group-version with a custom resource, and the v2
    document of a registry that has one, are the registry's own."""
    first, second = registry(), registry()
    assert openapi.openapi_v3_document_bytes(second, "apps", "v1") is openapi.openapi_v3_document_bytes(first, "apps", "v1")
    assert openapi.openapi_v2_bytes(second) is openapi.openapi_v2_bytes(first)
    second.add([agent_row(), ResourceType(group="apps", version="v1", kind="Agent", plural="agents", namespaced=True,
                                          schema=AGENT_SCHEMA, crd={"metadata": {"name": "agents.apps"}})])
    assert b"com.example.v1.Agent" in openapi.openapi_v2_bytes(second)
    assert b"com.example.v1.Agent" not in openapi.openapi_v2_bytes(first)
    assert b"/apis/apps/v1/namespaces/{namespace}/agents" in openapi.openapi_v3_document_bytes(second, "apps", "v1")
    assert b"/apis/apps/v1/namespaces/{namespace}/agents" not in openapi.openapi_v3_document_bytes(first, "apps", "v1")


def test_v2_document_uses_swagger_forms():
    reg = registry()
    reg.add([agent_row()])
    doc = openapi.openapi_v2(reg)
    assert doc["swagger"] == "2.0"
    definitions = doc["definitions"]
    assert definitions["io.k8s.apimachinery.pkg.util.intstr.IntOrString"]["format"] == "int-or-string"
    assert definitions["io.k8s.api.apps.v1.DeploymentSpec"]["properties"]["template"]["$ref"] == \
        "#/definitions/io.k8s.api.core.v1.PodTemplateSpec"
    port = definitions["com.example.v1.Agent"]["properties"]["spec"]["properties"]["port"]
    assert "anyOf" not in port and "type" not in port
    patch = doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"]
    assert "application/strategic-merge-patch+json" in patch["consumes"]
    assert {"in": "query", "name": "fieldValidation", "type": "string", "uniqueItems": True} in patch["parameters"]


def _fields(data: bytes) -> list[tuple[int, object]]:
    """A minimal protobuf wire reader: (field number, value) pairs of one message."""
    out, i = [], 0
    while i < len(data):
        key, i = _varint(data, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _varint(data, i)
        elif wire == 1:
            value, i = data[i:i + 8], i + 8
        else:
            size, i = _varint(data, i)
            value, i = data[i:i + size], i + size
        out.append((field, value))
    return out


def _varint(data: bytes, i: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[i]
        i += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, i


def test_v2_protobuf_is_gnostic_document():
    body = openapi.openapi_v2_protobuf_bytes(registry())
    top = dict(_fields(body))
    assert top[1] == b"2.0"
    assert dict(_fields(top[2])) == {1: b"Kubernetes", 2: openapi.VERSION.encode()}
    paths = {dict(_fields(named))[1].decode(): dict(_fields(named))[2] for field, named in _fields(top[8])}
    item = dict(_fields(paths["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]))
    patch = _fields(item[8])  # PathItem.patch
    consumes = [value for field, value in patch if field == 7]
    assert b"application/strategic-merge-patch+json" in consumes
    extensions = {dict(_fields(v))[1]: dict(_fields(dict(_fields(v))[2]))[2] for f, v in patch if f == 13}
    assert orjson.loads(extensions[b"x-kubernetes-group-version-kind"]) == \
        {"group": "apps", "kind": "Deployment", "version": "v1"}
    names = {dict(_fields(named))[1] for field, named in _fields(top[9])}
    assert b"io.k8s.api.apps.v1.Deployment" in names
    assert openapi.wants_v2_protobuf("application/com.github.proto-openapi.spec.v2@v1.0+protobuf")
    assert not openapi.wants_v2_protobuf("application/json")


def test_nothing_is_loaded_at_import_time():
    code = ("import apiserver.schema.openapi, apiserver.schema.defaults, apiserver.schema.fields\n"
            "from apiserver.schema.definitions import definitions\n"
            "assert definitions.cache_info().currsize == 0\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
