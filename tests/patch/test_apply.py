"""Server-side apply: merging, ownership, conflicts and pruning, after upstream's behaviour."""

from __future__ import annotations

import json

import pytest
from mini_kube.apiserver.patch import PatchError, SchemaNode, server_side_apply, update_managed_fields

from tests.helpers import reference_file

T1, T2, T3 = "2026-11-22T02:08:47Z", "2026-11-22T02:08:48Z", "2026-11-22T02:12:57Z"


def cm(data=None, **meta):
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ssa1", "namespace": "demo", **meta},
            **({"data": data} if data is not None else {})}


def stored(obj):
    """What the store would hold after a create: a uid makes it an existing object."""
    obj = json.loads(json.dumps(obj))
    obj["metadata"].setdefault("uid", "u-1")
    return obj


def owners(obj):
    return {(e["manager"], e["operation"]): e["fieldsV1"] for e in obj["metadata"].get("managedFields", [])}


def apply(live, applied, manager, schema, force=False, now=T2, **kw):
    return server_side_apply(live, applied, manager, applied.get("apiVersion", "v1"), force, schema, now, **kw)


def test_apply_create_owns_only_the_leaves_it_set(configmap):
    out = apply(None, cm({"k": "v", "owner": "server-side-apply"}), "kubectl", configmap)
    assert out["data"] == {"k": "v", "owner": "server-side-apply"}
    assert out["metadata"]["managedFields"] == [{
        "manager": "kubectl", "operation": "Apply", "apiVersion": "v1", "time": T2, "fieldsType": "FieldsV1",
        "fieldsV1": {"f:data": {"f:k": {}, "f:owner": {}}}}]


def test_conflict_with_an_updater_is_the_real_409(configmap):
    live = stored(update_managed_fields(None, cm({"k": "mine"}), "curl", api_version="v1", now=T3,
                                        schema=configmap))
    with pytest.raises(PatchError) as err:
        apply(live, cm({"k": "theirs"}), "kubectl", configmap)
    expected = json.loads(reference_file("http/cm-ssa-conflict.body").read_text())
    assert err.value.status() == expected


def test_force_takes_ownership_and_same_values_are_shared(configmap):
    live = stored(update_managed_fields(None, cm({"a": "1", "b": "2"}), "curl", api_version="v1", now=T1,
                                        schema=configmap))
    shared = apply(live, cm({"a": "1"}), "kubectl", configmap)
    assert shared["data"] == {"a": "1", "b": "2"}
    assert owners(shared)[("curl", "Update")] == {"f:data": {".": {}, "f:a": {}, "f:b": {}}}
    assert owners(shared)[("kubectl", "Apply")] == {"f:data": {"f:a": {}}}
    forced = apply(stored(shared), cm({"a": "1", "b": "9"}), "kubectl", configmap, force=True)
    assert forced["data"] == {"a": "1", "b": "9"}
    assert owners(forced)[("curl", "Update")] == {"f:data": {".": {}, "f:a": {}}}
    assert owners(forced)[("kubectl", "Apply")] == {"f:data": {"f:a": {}, "f:b": {}}}


def test_several_conflicts_are_grouped_by_manager(configmap):
    live = stored(update_managed_fields(None, cm({"a": "1", "b": "2"}), "alpha", api_version="v1", now=T1,
                                        schema=configmap))
    live = stored(apply(live, cm({"c": "3"}), "beta", configmap))
    with pytest.raises(PatchError) as err:
        apply(live, cm({"a": "x", "b": "y", "c": "z"}), "gamma", configmap)
    assert err.value.message == ('Apply failed with 3 conflicts: conflicts with "alpha" using v1:\n- .data.a\n'
                                 '- .data.b\nconflicts with "beta":\n- .data.c')
    causes = err.value.details["causes"]
    assert [c["field"] for c in causes] == [".data.a", ".data.b", ".data.c"]
    assert causes[2] == {"reason": "FieldManagerConflict", "message": 'conflict with "beta"', "field": ".data.c"}


def test_reapply_prunes_fields_dropped_from_the_configuration(configmap):
    first = stored(apply(None, cm({"a": "1", "b": "2"}), "kubectl", configmap, now=T1))
    second = apply(first, cm({"a": "1"}), "kubectl", configmap)
    assert second["data"] == {"a": "1"}
    assert owners(second)[("kubectl", "Apply")] == {"f:data": {"f:a": {}}}
    # A field another manager also owns stays.
    other = stored(apply(first, cm({"b": "2"}), "other", configmap))
    third = apply(other, cm({"a": "1"}), "kubectl", configmap)
    assert third["data"] == {"a": "1", "b": "2"}


def test_no_op_apply_keeps_times(configmap):
    first = stored(apply(None, cm({"a": "1"}), "kubectl", configmap, now=T1))
    again = apply(first, cm({"a": "1"}), "kubectl", configmap, now=T3)
    assert again["metadata"]["managedFields"][0]["time"] == T1 and again["data"] == {"a": "1"}


def deploy_obj(containers, **spec):
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "demo"},
            "spec": {"selector": {"matchLabels": {"app": "web"}}, **spec,
                     "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": containers}}}}


def test_list_maps_merge_by_key_and_each_manager_owns_its_items(deployment):
    one = stored(apply(None, deploy_obj([{"name": "app", "image": "a:1", "ports": [{"containerPort": 80}]}]),
                       "team-a", deployment))
    two = apply(one, deploy_obj([{"name": "side", "image": "s:1"}]), "team-b", deployment)
    containers = two["spec"]["template"]["spec"]["containers"]
    assert [c["name"] for c in containers] == ["app", "side"]
    a = owners(two)[("team-a", "Apply")]["f:spec"]["f:template"]["f:spec"]["f:containers"]
    assert a == {'k:{"name":"app"}': {".": {}, "f:image": {}, "f:name": {}, "f:ports": {
        'k:{"containerPort":80,"protocol":"TCP"}': {".": {}, "f:containerPort": {}}}}}
    # The selector is atomic: both appliers own it whole, with the same value.
    assert owners(two)[("team-b", "Apply")]["f:spec"]["f:selector"] == {}


def test_changing_an_atomic_field_owned_by_another_applier_conflicts(deployment):
    one = stored(apply(None, deploy_obj([{"name": "app", "image": "a:1"}]), "team-a", deployment))
    other = deploy_obj([{"name": "side", "image": "s"}])
    other["spec"]["selector"]["matchLabels"]["tier"] = "x"
    with pytest.raises(PatchError) as err:
        apply(one, other, "team-b", deployment)
    assert err.value.message == 'Apply failed with 1 conflict: conflict with "team-a": .spec.selector'


def test_object_without_managed_fields_gets_a_before_first_apply_owner(configmap):
    live = stored(cm({"a": "1"}))
    with pytest.raises(PatchError) as err:
        apply(live, cm({"a": "2"}), "kubectl", configmap)
    assert err.value.message == ('Apply failed with 1 conflict: conflict with "before-first-apply" using v1: '
                                 '.data.a')
    out = apply(live, cm({"b": "2"}), "kubectl", configmap)
    assert owners(out)[("before-first-apply", "Update")] == {"f:data": {".": {}, "f:a": {}}}


def test_kubectl_takes_over_fields_it_applied_client_side(configmap):
    last = json.dumps(cm({"a": "1"}))
    created = cm({"a": "1"}, annotations={"kubectl.kubernetes.io/last-applied-configuration": last})
    live = stored(update_managed_fields(None, created, "kubectl-client-side-apply", api_version="v1", now=T1,
                                        schema=configmap))
    out = apply(live, cm({"a": "2"}), "kubectl", configmap)
    assert out["data"] == {"a": "2"}
    assert owners(out)[("kubectl", "Apply")] == {"f:data": {"f:a": {}}}
    annotation = out["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"]
    assert json.loads(annotation) == cm({"a": "2"}) and annotation.endswith("}\n")
    # Another field manager gets no such pass.
    with pytest.raises(PatchError):
        apply(live, cm({"a": "2"}), "someone-else", configmap)


def test_fields_changed_since_the_last_client_side_apply_still_conflict(configmap):
    last = json.dumps(cm({"a": "1"}))
    created = cm({"a": "1"}, annotations={"kubectl.kubernetes.io/last-applied-configuration": last})
    live = stored(update_managed_fields(None, created, "kubectl-client-side-apply", api_version="v1", now=T1,
                                        schema=configmap))
    edited = stored(update_managed_fields(live, {**live, "data": {"a": "edited"}}, "kubectl-edit",
                                          api_version="v1", now=T2, schema=configmap))
    with pytest.raises(PatchError) as err:
        apply(edited, cm({"a": "2"}), "kubectl", configmap)
    assert err.value.message.endswith('conflict with "kubectl-edit" using v1: .data.a')


def test_applied_object_checks(configmap, deployment):
    with pytest.raises(PatchError) as err:
        server_side_apply(None, {**cm({"a": "1"}), "apiVersion": "v2"}, "m", "v1", schema=configmap,
                          kind="ConfigMap")
    assert (err.value.code, err.value.message) == (400, "invalid object type: /v2, Kind=ConfigMap")
    with pytest.raises(PatchError) as err:
        server_side_apply(None, cm({"a": "1"}, managedFields=[]), "m", "v1", schema=configmap)
    assert (err.value.code, err.value.message) == (400, "metadata.managedFields must be nil")
    with pytest.raises(PatchError) as err:
        apply(None, {**cm(), "spec": {"x": 1}}, "m", configmap)
    assert (err.value.code, err.value.message) == (
        500, "failed to create typed patch object (demo/ssa1; /v1, Kind=ConfigMap): .spec: field not declared "
             "in schema")
    dup = deploy_obj([{"name": "a"}, {"name": "a"}])
    with pytest.raises(PatchError) as err:
        apply(None, dup, "m", deployment)
    assert err.value.message.endswith(
        '.spec.template.spec.containers: duplicate entries for key [name="a"]')
    keyless = deploy_obj([{"image": "x"}])
    with pytest.raises(PatchError) as err:
        apply(None, keyless, "m", deployment)
    assert err.value.message.endswith(
        '.spec.template.spec.containers: element 0: associative list with keys has an element that omits all '
        'key fields ["name"] (and doesn\'t have default values for any key fields)')


def test_malformed_live_managed_fields_do_not_break_apply(configmap):
    live = stored(cm({"a": "1"}, managedFields=[{"manager": 5}]))
    out = apply(live, cm({"b": "2"}), "kubectl", configmap)
    assert out["data"] == {"a": "1", "b": "2"}


def test_inputs_are_left_alone(configmap):
    live = stored(apply(None, cm({"a": "1"}), "x", configmap))
    applied = cm({"a": "1", "b": "2"})
    before = json.dumps([live, applied])
    out = apply(live, applied, "y", configmap)
    out["data"]["mutated"] = "yes"
    assert json.dumps([live, applied]) == before


def test_custom_resources_with_and_without_schema():
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "items": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["id"],
                  "items": {"type": "object", "properties": {"id": {"type": "string"},
                                                             "v": {"type": "string"}}}},
        "tags": {"type": "array", "items": {"type": "string"}}}}}}
    node = SchemaNode.for_structural(schema)
    base = {"apiVersion": "x.io/v1", "kind": "Agent", "metadata": {"name": "a", "labels": {"l": "1"}}}
    one = stored(apply(None, {**base, "spec": {"items": [{"id": "1", "v": "a"}], "tags": ["t"]}}, "m1", node))
    two = apply(one, {**base, "spec": {"items": [{"id": "2", "v": "b"}]}}, "m2", node)
    assert two["spec"]["items"] == [{"id": "1", "v": "a"}, {"id": "2", "v": "b"}]
    assert 'k:{"id":"2"}' in owners(two)[("m2", "Apply")]["f:spec"]["f:items"]
    # Without a schema, lists are atomic: a second applier changing them conflicts.
    with pytest.raises(PatchError) as err:
        apply(stored(apply(None, {**base, "spec": {"tags": ["a"]}}, "m1", None)),
              {**base, "spec": {"tags": ["b"]}}, "m2", None)
    assert err.value.message.endswith('conflict with "m1": .spec.tags')
