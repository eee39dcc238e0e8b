"""Strategic merge patch: cases after upstream's strategicpatch test tables, and real kinds."""

from __future__ import annotations

import pytest
from mini_kube.apiserver.patch import PatchError, SchemaNode, strategic_merge_patch

SMP = strategic_merge_patch


def items(*names, **extra):
    return [{"name": n, **extra.get(str(n), {})} for n in names]


# -- ordering and $setElementOrder (upstream: "... preserve order", "set elements order ...") --------

def test_set_element_order_may_name_items_missing_from_the_list(merge_item):
    doc = {"mergingList": items(1, 3)}
    patch = {"$setElementOrder/mergingList": items(3, 2, 1),
             "mergingList": [{"name": 3, "value": 3}, {"name": 1, "value": 1}]}
    assert SMP(doc, patch, merge_item) == {"mergingList": [{"name": 3, "value": 3}, {"name": 1, "value": 1}]}


def test_set_element_order_on_a_scalar_list_only_reorders(merge_item):
    doc = {"mergingIntList": [1, 3]}
    assert SMP(doc, {"$setElementOrder/mergingIntList": [3, 2, 1]}, merge_item) == {"mergingIntList": [3, 1]}


def test_new_item_goes_where_the_order_puts_it_and_live_fields_stay(merge_item):
    live = {"mergingList": [{"name": 1, "other": "a"}, {"name": 2, "value": 2, "other": "b"}]}
    patch = {"$setElementOrder/mergingList": items(3, 1, 2), "mergingList": [{"name": 3, "value": 3}]}
    assert SMP(live, patch, merge_item)["mergingList"] == [
        {"name": 3, "value": 3}, {"name": 1, "other": "a"}, {"name": 2, "value": 2, "other": "b"}]


def test_server_only_items_keep_their_neighbours(merge_item):
    live = {"mergingList": [{"name": 1, "other": "a"}, {"name": 2, "value": 2}, {"name": 9},
                            {"name": 3, "value": 3}, {"name": 4, "value": 4}]}
    patch = {"$setElementOrder/mergingList": items(2, 1, 4, 3)}
    assert [i["name"] for i in SMP(live, patch, merge_item)["mergingList"]] == [2, 1, 9, 4, 3]


def test_set_element_order_with_duplicate_names_keeps_both(merge_item):
    live = {"mergingList": [{"name": 1}, {"name": 2, "value": "dup1"}, {"name": 3},
                            {"name": 2, "value": "dup2"}, {"name": 4}]}
    out = SMP(live, {"$setElementOrder/mergingList": items(2, 1, 4, 3, 2)}, merge_item)
    assert out["mergingList"] == [{"name": 2, "value": "dup1"}, {"name": 2, "value": "dup2"}, {"name": 1},
                                  {"name": 4}, {"name": 3}]


def test_set_element_order_must_agree_with_the_patch_list(merge_item):
    live = {"mergingList": items(1, 3, 2)}
    patch = {"$setElementOrder/mergingList": items(1, 2, 3),
             "mergingList": [{"name": 3, "value": 3}, {"name": 1, "value": 1}]}
    with pytest.raises(PatchError) as err:
        SMP(live, patch, merge_item)
    assert err.value.code == 500 and "doesn't match $setElementOrder list" in err.value.message


def test_merged_items_without_order_come_first_then_live_only_items(merge_item):
    live = {"mergingList": [{"name": "a", "value": "1"}, {"name": "b", "value": "2"}]}
    out = SMP(live, {"mergingList": [{"name": "c"}, {"name": "a", "value": "9"}]}, merge_item)
    assert out["mergingList"] == [{"name": "c"}, {"name": "a", "value": "9"}, {"name": "b", "value": "2"}]


# -- scalar lists ------------------------------------------------------------------------------------

def test_merging_scalar_list_unions_and_deduplicates(merge_item):
    # Live-only 1 sorts before the patch's 2 because it precedes 2 in the live list.
    assert SMP({"mergingIntList": [1, 2]}, {"mergingIntList": [2, 3]}, merge_item) == {"mergingIntList": [1, 2, 3]}
    assert SMP({"mergingIntList": [5, 1]}, {"mergingIntList": [2, 3]}, merge_item) == {"mergingIntList": [2, 3, 5, 1]}


def test_non_merging_scalar_list_is_replaced(merge_item):
    assert SMP({"nonMergingIntList": [1, 2]}, {"nonMergingIntList": [3]}, merge_item) == {"nonMergingIntList": [3]}


def test_delete_from_primitive_list_removes_every_copy(merge_item):
    live = {"mergingIntList": [1, 2, 3, 3, 4]}
    patch = {"$setElementOrder/mergingIntList": [1, 2], "$deleteFromPrimitiveList/mergingIntList": [3]}
    assert SMP(live, patch, merge_item) == {"mergingIntList": [1, 2, 4]}


def test_delete_from_primitive_list_never_adds(merge_item):
    assert SMP({"mergingIntList": [1]}, {"$deleteFromPrimitiveList/mergingIntList": [5]}, merge_item) \
        == {"mergingIntList": [1]}
    assert SMP({}, {"$deleteFromPrimitiveList/mergingIntList": [5]}, merge_item) == {}
    # It works on lists without the merge strategy too.
    assert SMP({"nonMergingIntList": [1, 2]}, {"$deleteFromPrimitiveList/nonMergingIntList": [2]},
               merge_item) == {"nonMergingIntList": [1]}


def test_bad_delete_from_primitive_list_key_is_400(merge_item):
    with pytest.raises(PatchError) as err:
        SMP({"mergingIntList": [1]}, {"$deleteFromPrimitiveList": [1]}, merge_item)
    assert (err.value.code, err.value.message) == (400, "invalid patch format of primitive list")


# -- maps, nulls, directives --------------------------------------------------------------------------

def test_null_deletes_and_nested_nulls_of_new_values_are_dropped(merge_item):
    live = {"simpleMap": {"a": "1", "b": "2"}}
    out = SMP(live, {"simpleMap": {"a": None, "c": "3"}, "retainKeysMap": {"name": "x", "value": None}},
              merge_item)
    assert out == {"simpleMap": {"b": "2", "c": "3"}, "retainKeysMap": {"name": "x"}}


def test_patch_replace_and_delete_on_maps(merge_item):
    live = {"simpleMap": {"a": "1"}, "retainKeysMap": {"name": "x", "value": "y"}}
    out = SMP(live, {"simpleMap": {"$patch": "replace", "z": "9"}, "retainKeysMap": {"$patch": "delete"}},
              merge_item)
    assert out == {"simpleMap": {"z": "9"}, "retainKeysMap": {}}
    assert SMP(live, {"$patch": "replace", "other": "only"}, merge_item) == {"other": "only"}


def test_patch_merge_on_a_map_is_an_unknown_patch_type(merge_item):
    with pytest.raises(PatchError) as err:
        SMP({"simpleMap": {"a": "1"}}, {"simpleMap": {"$patch": "merge"}}, merge_item)
    assert err.value.code == 500 and err.value.message == "unknown patch type: merge in map: map[$patch:merge]"


def test_list_directives_delete_and_replace(merge_item):
    live = {"mergingList": items("a", "b", "c")}
    assert SMP(live, {"mergingList": [{"name": "b", "$patch": "delete"}]}, merge_item)["mergingList"] \
        == items("a", "c")
    assert SMP(live, {"mergingList": [{"name": "z"}, {"$patch": "replace"}]}, merge_item)["mergingList"] \
        == items("z")
    with pytest.raises(PatchError) as err:
        SMP(live, {"mergingList": [{"name": "z"}, {"$patch": "merge"}]}, merge_item)
    assert err.value.message == "merging lists cannot yet be specified in the patch"


def test_new_value_with_a_directive_is_not_added(merge_item):
    assert SMP({}, {"simpleMap": {"$patch": "delete"}}, merge_item) == {}


def test_missing_merge_key_is_a_plain_500(merge_item):
    with pytest.raises(PatchError) as err:
        SMP({"mergingList": items("a")}, {"mergingList": [{"value": "x"}]}, merge_item)
    status = err.value.status()
    assert status["code"] == 500 and "reason" not in status
    assert status["message"] == "map: map[value:x] does not contain declared merge key: name"


def test_lists_of_lists_are_422(merge_item):
    with pytest.raises(PatchError) as err:
        SMP({"mergingIntList": [[1]]}, {"mergingIntList": [[2]]}, merge_item)
    assert err.value.code == 422 and err.value.reason == "Invalid"
    assert err.value.message == "the server rejected our request due to an error in our request"
    with pytest.raises(PatchError) as err:
        SMP({"mergingIntList": [1]}, {"mergingIntList": [[1]]}, merge_item)
    assert err.value.code == 500 and err.value.message == "list element types are not identical: [[1] [[1]]]"


# -- retainKeys ------------------------------------------------------------------------------------------

def test_retain_keys_clears_fields_not_listed(merge_item):
    live = {"retainKeysMap": {"name": "a", "value": "1", "other": "x"}}
    out = SMP(live, {"retainKeysMap": {"$retainKeys": ["name", "value"], "value": "2"}}, merge_item)
    assert out == {"retainKeysMap": {"name": "a", "value": "2"}}


def test_retain_keys_in_merging_list_items(merge_item):
    live = {"retainKeysMergingList": [{"name": "a", "value": "1", "other": "x"}, {"name": "b"}]}
    patch = {"retainKeysMergingList": [{"name": "a", "$retainKeys": ["name", "other"], "other": "y"}]}
    assert SMP(live, patch, merge_item)["retainKeysMergingList"] == [{"name": "a", "other": "y"}, {"name": "b"}]


def test_retain_keys_must_list_every_patched_field(merge_item):
    with pytest.raises(PatchError) as err:
        SMP({"retainKeysMap": {"name": "a"}}, {"retainKeysMap": {"$retainKeys": ["name"], "value": "v"}},
            merge_item)
    assert (err.value.code, err.value.message) == (400, "invalid patch format of retainKeys")


# -- real kinds --------------------------------------------------------------------------------------

def test_deployment_containers_ports_and_env_merge_by_their_keys(deployment):
    live = {"spec": {"template": {"spec": {"containers": [
        {"name": "app", "image": "v1", "ports": [{"containerPort": 80}], "env": [{"name": "A", "value": "1"}]},
        {"name": "side", "image": "s"}]}}}}
    patch = {"spec": {"template": {"spec": {"containers": [
        {"name": "app", "image": "v2", "ports": [{"containerPort": 443}], "env": [{"name": "A", "value": "2"}]}]}}}}
    out = SMP(live, patch, deployment)["spec"]["template"]["spec"]["containers"]
    assert out[0] == {"name": "app", "image": "v2", "ports": [{"containerPort": 443}, {"containerPort": 80}],
                      "env": [{"name": "A", "value": "2"}]}
    assert out[1] == {"name": "side", "image": "s"}


def test_deployment_atomic_lists_are_replaced(deployment):
    live = {"spec": {"template": {"spec": {"tolerations": [{"key": "a"}], "containers": [
        {"name": "app", "args": ["x", "y"]}]}}}}
    patch = {"spec": {"template": {"spec": {"tolerations": [{"key": "b"}], "containers": [
        {"name": "app", "args": ["z"]}]}}}}
    spec = SMP(live, patch, deployment)["spec"]["template"]["spec"]
    assert spec["tolerations"] == [{"key": "b"}] and spec["containers"] == [{"name": "app", "args": ["z"]}]


def test_volumes_retain_keys_switch_the_volume_source(deployment):
    live = {"spec": {"template": {"spec": {"volumes": [{"name": "v", "emptyDir": {}}]}}}}
    patch = {"spec": {"template": {"spec": {"volumes": [
        {"name": "v", "$retainKeys": ["configMap", "name"], "configMap": {"name": "cm"}}]}}}}
    assert SMP(live, patch, deployment)["spec"]["template"]["spec"]["volumes"] == [
        {"name": "v", "configMap": {"name": "cm"}}]


def test_deployment_strategy_retain_keys(deployment):
    live = {"spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}}
    patch = {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}}
    assert SMP(live, patch, deployment) == {"spec": {"strategy": {"type": "Recreate"}}}


def test_metadata_owner_references_by_uid_and_finalizers_as_a_set(configmap):
    live = {"metadata": {"ownerReferences": [{"uid": "1", "name": "a"}], "finalizers": ["x"]}}
    patch = {"metadata": {"ownerReferences": [{"uid": "2", "name": "b"}], "finalizers": ["y", "x"]}}
    meta = SMP(live, patch, configmap)["metadata"]
    assert meta["ownerReferences"] == [{"uid": "2", "name": "b"}, {"uid": "1", "name": "a"}]
    assert meta["finalizers"] == ["y", "x"]


def test_inputs_are_not_modified(deployment):
    live = {"spec": {"replicas": 1, "template": {"spec": {"containers": [{"name": "a"}]}}}}
    patch = {"spec": {"replicas": None, "template": {"spec": {"containers": [{"name": "b"}]}}}}
    before = (repr(live), repr(patch))
    SMP(live, patch, deployment)
    assert (repr(live), repr(patch)) == before


def test_custom_resources_refuse_strategic_merge_patch():
    crd = SchemaNode.for_structural({"type": "object", "properties": {"spec": {"type": "object"}}})
    for schema in (crd, SchemaNode.for_structural(None), None):
        with pytest.raises(PatchError) as err:
            SMP({"spec": {}}, {"spec": {"a": 1}}, schema)
        assert err.value.code == 415 and err.value.reason == "UnsupportedMediaType"
        assert err.value.message == ("the body of the request was in an unknown format - accepted media types "
                                     "include: application/json-patch+json, application/merge-patch+json, "
                                     "application/apply-patch+yaml")


def test_patch_that_is_not_an_object_is_400(configmap):
    with pytest.raises(PatchError) as err:
        SMP({}, [1], configmap)
    assert err.value.code == 400


def test_large_lists_cost_linear_work(merge_item, monkeypatch):
    """Each patch item was looked up by scanning the whole list (and each $patch: delete rebuilt it): a 3 MiB
    patch of merges, deletes and an order over a long list ran for minutes. Count the merge-key identities taken:
    a handful per item, not one per pair."""
    from mini_kube.apiserver.patch import strategic

    calls = 0
    skey = strategic._skey

    def counted(value):
        nonlocal calls
        calls += 1
        return skey(value)

    monkeypatch.setattr(strategic, "_skey", counted)
    n = 2000
    doc = {"mergingList": items(*range(n))}
    patch = {"$setElementOrder/mergingList": items(*range(2 * n)),
             "mergingList": [*items(*range(n, 2 * n)), *({"$patch": "delete", "name": i} for i in range(0, n, 2))]}
    merged = SMP(doc, patch, merge_item)["mergingList"]
    assert [i["name"] for i in merged] == [*range(1, n, 2), *range(n, 2 * n)]
    assert calls < 30 * n
