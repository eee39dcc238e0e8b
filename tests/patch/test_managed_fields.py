"""Managed fields of ordinary writes, checked against what the real apiserver recorded."""

from __future__ import annotations

import copy

import yaml
from mini_kube.apiserver.patch import (
    SchemaNode,
    fieldpath,
    merge_patch,
    strategic_merge_patch,
    update_managed_fields,
)
from mini_kube.apiserver.patch.schema_walk import deduced

from tests.helpers import reference_file

T1, T2 = "2026-11-22T02:08:47Z", "2026-11-22T02:08:48Z"


def configmap_obj(**data):
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "c1", "namespace": "demo", "uid": "u-1", "resourceVersion": "1",
                         "creationTimestamp": T1}, "data": dict(data)}


def update(old, new, manager, now, schema, **kw):
    return update_managed_fields(old, new, manager, api_version="v1", now=now, schema=schema, **kw)


def test_create_patch_label_sequence_matches_the_real_server(configmap):
    created = update(None, configmap_obj(a="b"), "kubectl-create", T1, configmap)
    patched = update(created, strategic_merge_patch(created, {"data": {"x": "y"}}, configmap), "kubectl-patch",
                     T2, configmap)
    labeled = update(patched, merge_patch(patched, {"metadata": {"labels": {"k": "v"}}}), "kubectl-label", T2,
                     configmap)
    real = yaml.safe_load(reference_file("kubectl/v6/14-get-cm-managedfields.out").read_text())
    expected = next(i for i in real["items"] if i["metadata"]["name"] == "c1")["metadata"]["managedFields"]
    assert labeled["metadata"]["managedFields"] == expected
    # Entry keys come in the order the apiserver writes them.
    assert list(labeled["metadata"]["managedFields"][0]) == [
        "manager", "operation", "apiVersion", "time", "fieldsType", "fieldsV1"]


def test_create_of_a_deployment_owns_defaults_and_list_items_by_key(deployment):
    obj = yaml.safe_load(reference_file("kubectl/v6/10-get-deploy-yaml.out").read_text())
    obj.pop("status")
    fields = update_managed_fields(None, obj, "kubectl-client-side-apply", api_version="apps/v1", now=T1,
                                   schema=deployment)["metadata"]["managedFields"][0]["fieldsV1"]
    spec = fields["f:spec"]
    assert "." not in spec and "." not in spec["f:template"] and spec["f:selector"] == {}
    assert spec["f:strategy"]["f:rollingUpdate"] == {".": {}, "f:maxSurge": {}, "f:maxUnavailable": {}}
    containers = spec["f:template"]["f:spec"]["f:containers"]
    assert "." not in containers  # a pod spec always has `containers`, even empty
    nginx = containers['k:{"name":"nginx"}']
    assert nginx["f:ports"] == {".": {}, 'k:{"containerPort":80,"protocol":"TCP"}': {
        ".": {}, "f:containerPort": {}, "f:protocol": {}}}
    assert nginx["f:resources"] == {} and list(nginx)[0] == "."
    assert fields["f:metadata"]["f:annotations"] == {
        ".": {}, "f:kubectl.kubernetes.io/last-applied-configuration": {}}
    assert set(fields["f:metadata"]) == {"f:annotations", "f:labels"}


def test_namespace_label_set_by_defaulting_is_owned_by_the_creator():
    ns = SchemaNode.for_builtin("io.k8s.api.core.v1.Namespace")
    obj = {"apiVersion": "v1", "kind": "Namespace", "metadata": {
        "name": "raw", "labels": {"kubernetes.io/metadata.name": "raw"}}}
    out = update_managed_fields(None, obj, "curl", api_version="v1", now="2026-11-22T02:12:57Z", schema=ns)
    real = yaml.safe_load(reference_file("http/ns-delete.body").read_text())
    assert out["metadata"]["managedFields"] == real["metadata"]["managedFields"]


def test_changed_fields_move_and_removed_fields_leave_every_owner(configmap):
    first = update(None, configmap_obj(a="1", b="2"), "one", T1, configmap)
    second = update(first, {**first, "data": {"a": "changed"}}, "two", T2, configmap)
    entries = {e["manager"]: e for e in second["metadata"]["managedFields"]}
    assert entries["one"]["fieldsV1"] == {"f:data": {}}  # only the map itself, written as a leaf
    assert entries["two"]["fieldsV1"] == {"f:data": {"f:a": {}}}
    third = update(second, {**second, "data": {}}, "three", T2, configmap)
    # Nobody gained anything, emptied data leaves "two", and "one" keeps only the map itself.
    assert [e["manager"] for e in third["metadata"]["managedFields"]] == ["one"]


def test_no_change_keeps_entries_and_times(configmap):
    first = update(None, configmap_obj(a="1"), "one", T1, configmap)
    again = update(first, copy.deepcopy(first), "two", T2, configmap)
    assert again["metadata"]["managedFields"] == first["metadata"]["managedFields"]


def test_same_manager_accumulates_and_refreshes_its_time(configmap):
    first = update(None, configmap_obj(a="1"), "me", T1, configmap)
    second = update(first, {**first, "data": {"a": "1", "b": "2"}}, "me", T2, configmap)
    [entry] = second["metadata"]["managedFields"]
    assert entry["time"] == T2 and entry["fieldsV1"] == {"f:data": {".": {}, "f:a": {}, "f:b": {}}}


def test_reset_and_untracked_objects(configmap):
    first = update(None, configmap_obj(a="1"), "one", T1, configmap)
    for reset in ([], [{}]):
        cleared = dict(first, metadata={**first["metadata"], "managedFields": reset})
        out = update(first, cleared, "two", T2, configmap)
        assert "managedFields" not in out["metadata"]
        # An existing object without managedFields is not tracked by later updates either.
        later = update(out, {**out, "data": {"a": "2"}}, "three", T2, configmap)
        assert "managedFields" not in later["metadata"]


def test_malformed_managed_fields_fall_back_to_the_live_ones(configmap):
    first = update(None, configmap_obj(a="1"), "one", T1, configmap)
    for bad in ([{"manager": "x"}], "nonsense", [{"operation": "Update", "apiVersion": "v1",
                                                 "fieldsType": "FieldsV1", "fieldsV1": {"zz": 1}}]):
        sent = dict(first, metadata={**first["metadata"], "managedFields": bad}, data={"a": "2"})
        out = update(first, sent, "two", T2, configmap)
        assert [e["manager"] for e in out["metadata"]["managedFields"]] == ["one", "two"]
    live_bad = dict(first, metadata={**first["metadata"], "managedFields": [{"bogus": True}]})
    out = update(live_bad, dict(live_bad, data={"a": "3"}), "two", T2, configmap)
    assert "managedFields" not in out["metadata"]


def test_client_supplied_managed_fields_are_taken(configmap):
    first = update(None, configmap_obj(a="1"), "one", T1, configmap)
    mine = [{"manager": "someone", "operation": "Update", "apiVersion": "v1", "time": T1,
             "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {"f:a": {}}}}]
    out = update(first, dict(first, metadata={**first["metadata"], "managedFields": mine}), "two", T2, configmap)
    assert out["metadata"]["managedFields"] == mine


def test_update_managers_are_capped_into_ancient_changes(configmap):
    obj = update(None, configmap_obj(), "creator", "2026-01-01T00:00:00Z", configmap)
    for i in range(12):
        obj = update(obj, {**obj, "data": {**obj["data"], f"k{i}": "v"}}, f"m{i}", f"2026-01-01T00:00:{i + 1:02d}Z",
                     configmap)
    managers = [e["manager"] for e in obj["metadata"]["managedFields"]]
    assert len(managers) == 10 and "ancient-changes" in managers and "creator" not in managers


def test_subresource_and_ignored_paths(deployment):
    live = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "uid": "u"},
            "spec": {"replicas": 1}, "status": {"replicas": 1}}
    base = update_managed_fields(None, live, "creator", api_version="apps/v1", now=T1, schema=deployment)
    scaled = update_managed_fields(base, {**base, "spec": {"replicas": 3}, "status": {"replicas": 2}}, "kubectl",
                                   api_version="apps/v1", now=T2, subresource="scale", schema=deployment,
                                   ignored=[("status",)])
    entry = [e for e in scaled["metadata"]["managedFields"] if e["manager"] == "kubectl"][0]
    assert entry["subresource"] == "scale" and entry["fieldsV1"] == {"f:spec": {"f:replicas": {}}}
    assert list(entry)[-1] == "subresource"


def test_fields_v1_encoding_orders_like_upstream():
    trie = {"k:{\"port\":80}": {}, "f:b": {}, "v:\"x\"": {}, "k:{\"port\":443}": {"f:a": {}, ".": {}}, "f:a": {}}
    assert list(fieldpath.encode(trie)) == ["f:a", "f:b", 'k:{"port":80}', 'k:{"port":443}', 'v:"x"']
    assert list(fieldpath.encode(trie)['k:{"port":443}']) == [".", "f:a"]
    assert fieldpath.key_element({"name": "<a&b>", "id": 1}) == 'k:{"id":1,"name":"\\u003ca\\u0026b\\u003e"}'
    assert fieldpath.path_string(("f:spec", 'k:{"name":"c"}', "v:\"x\"")) == '.spec[name="c"][="x"]'


def test_set_algebra():
    a = {"f:data": {".": {}, "f:a": {}, "f:b": {}}}
    b = {"f:data": {"f:b": {}}, "f:x": {}}
    assert fieldpath.union(a, b) == {"f:data": {"f:a": {}, "f:b": {}, ".": {}}, "f:x": {}}
    assert fieldpath.difference(a, b) == {"f:data": {"f:a": {}, ".": {}}}
    assert fieldpath.difference(a, {"f:data": {}}) == {"f:data": {"f:a": {}, "f:b": {}}}
    assert fieldpath.intersection(a, b) == {"f:data": {"f:b": {}}}
    assert list(fieldpath.paths(fieldpath.union(a, b))) == [
        ("f:data",), ("f:x",), ("f:data", "f:a"), ("f:data", "f:b")]


def test_deduced_schema_is_the_default():
    obj = {"apiVersion": "x/v1", "kind": "K", "metadata": {"name": "n"}, "spec": {"list": [1], "m": {"a": 1}}}
    out = update_managed_fields(None, obj, "m", now=T1)
    assert out["metadata"]["managedFields"][0]["apiVersion"] == "x/v1"
    assert out["metadata"]["managedFields"][0]["fieldsV1"] == {
        "f:spec": {".": {}, "f:list": {}, "f:m": {".": {}, "f:a": {}}}}
    assert deduced().kind == "any"
