"""Hostile request bodies are refused fast with a 4xx and change nothing (issue #10 items 10-12): YAML alias
bombs, JSON patch copy bombs, deep nesting in every body format and through patches."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request

import pytest
from mini_kube.apiserver.http.limits import MAX_DEPTH


def _send(kube, method: str, path: str, body: bytes, content_type: str) -> tuple[int, dict, float]:
    request = urllib.request.Request(kube.url + path, data=body, method=method,
                                     headers={"Content-Type": content_type})
    started = time.monotonic()
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read()), time.monotonic() - started
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read()), time.monotonic() - started


def _nested_json(depth: int) -> str:
    return '{"a":' * depth + '"x"' + "}" * depth


@pytest.fixture
def cms(mini_kube_session, kube_namespace):
    path = f"/api/v1/namespaces/{kube_namespace}/configmaps"
    status, _, _ = _send(mini_kube_session, "POST", path, b'{"metadata":{"name":"target"},"data":{"k":"v"}}',
                         "application/json")
    assert status == 201
    return mini_kube_session, path


def test_yaml_alias_bomb_is_refused(cms):
    kube, path = cms
    lol = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i, name in enumerate("bcdefghi"):
        prev = "abcdefghi"[i]
        lol.append(f"{name}: &{name} [*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev}]")
    body = ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bomb}\ndata:\n" +
            "".join(f"  {line}\n" for line in lol)).encode()
    assert len(body) < 1000
    status, answer, _ = _send(kube, "POST", path, body, "application/yaml")
    assert (status, answer["reason"]) == (400, "BadRequest") and "excessive aliasing" in answer["message"]
    status, answer, _ = _send(kube, "PATCH", f"{path}/target?fieldManager=x", body.replace(b"bomb", b"target"),
                              "application/apply-patch+yaml")
    assert status == 400 and "excessive aliasing" in answer["message"]


def test_modest_aliases_still_work(cms):
    kube, path = cms
    body = b"metadata: {name: aliased, labels: &l {a: b}, annotations: *l}\n"
    status, answer, _ = _send(kube, "POST", path, body, "application/yaml")
    assert status == 201 and answer["metadata"]["annotations"] == {"a": "b"}


def test_json_patch_copy_bomb_is_refused(cms):
    kube, path = cms
    ops = [{"op": "add", "path": "/metadata/annotations", "value": {"a": "x" * 1000}}]
    for i in range(22):
        ops.append({"op": "copy", "from": "/metadata/annotations", "path": f"/metadata/annotations/n{i}"})
    status, answer, _ = _send(kube, "PATCH", f"{path}/target", json.dumps(ops).encode(),
                              "application/json-patch+json")
    assert (status, answer["reason"]) == (413, "RequestEntityTooLarge"), answer
    status, answer, _ = _send(kube, "PATCH", f"{path}/target", b"[]", "application/json-patch+json")
    assert status == 200 and "annotations" not in answer["metadata"]


@pytest.mark.parametrize("content_type", ["application/json", "application/yaml"])
def test_deep_bodies_are_refused(cms, content_type):
    kube, path = cms
    for depth in (MAX_DEPTH + 5, 1000, 100_000):
        body = '{"metadata":{"name":"deep"},"data":' + _nested_json(depth) + "}"
        if content_type == "application/yaml" and depth == 100_000:
            body = "metadata: {name: deep}\ndata: " + "[" * depth + "]" * depth
        status, answer, _ = _send(kube, "POST", path, body.encode(), content_type)
        assert status == 400 and "nested more than" in answer["message"], (depth, answer)


@pytest.mark.parametrize(("content_type", "depth"), [("application/merge-patch+json", 1000),
                                                     ("application/strategic-merge-patch+json", 300),
                                                     ("application/merge-patch+json", MAX_DEPTH + 1)])
def test_deep_patches_are_refused(cms, content_type, depth):
    kube, path = cms
    body = '{"metadata":{"annotations":' + _nested_json(depth) + "}}"
    status, answer, _ = _send(kube, "PATCH", f"{path}/target", body.encode(), content_type)
    assert status == 400 and "nested more than" in answer["message"]


def test_json_patch_cannot_nest_an_object_into_itself_too_deep(cms):
    kube, path = cms
    ops = [{"op": "add", "path": "/metadata/annotations", "value": {}}]
    ops += [{"op": "copy", "from": "/metadata", "path": "/metadata/x"} for _ in range(MAX_DEPTH)]
    status, answer, _ = _send(kube, "PATCH", f"{path}/target", json.dumps(ops).encode(),
                              "application/json-patch+json")
    assert status in (400, 413), answer


def test_custom_resources_refuse_deep_bodies(mini_kube_session, kube_namespace):
    from tests.helpers import kubectl

    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "deeps.example.com"},
           "spec": {"group": "example.com", "scope": "Namespaced",
                    "names": {"plural": "deeps", "singular": "deep", "kind": "Deep"},
                    "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                        "type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]}}
    kubectl(mini_kube_session, "apply", "-f", "-", input=json.dumps(crd))
    kubectl(mini_kube_session, "wait", "--for=condition=established", "crd/deeps.example.com")
    path = f"/apis/example.com/v1/namespaces/{kube_namespace}/deeps"
    ok = '{"apiVersion":"example.com/v1","kind":"Deep","metadata":{"name":"ok"},"spec":' + _nested_json(100) + "}"
    assert _send(mini_kube_session, "POST", path, ok.encode(), "application/json")[0] == 201
    deep = ok.replace('"ok"', '"deep"').replace(_nested_json(100), _nested_json(250))
    status, answer, _ = _send(mini_kube_session, "POST", path, deep.encode(), "application/json")
    assert status == 400 and "nested more than" in answer["message"]
