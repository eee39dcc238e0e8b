"""RFC 6902 JSON patch and RFC 7386 merge patch, with the apiserver's statuses and quirks."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from mini_kube.apiserver.patch import PatchError, create_merge_patch, json_patch, merge_patch

DOC = {"metadata": {"name": "c", "labels": {"a": "1"}}, "data": {"k": "v"}, "list": [1, 2, 3]}


# -- JSON patch ----------------------------------------------------------------------------------------

def test_json_patch_operations_apply_in_order_to_a_copy():
    ops = [{"op": "add", "path": "/data/x", "value": "y"},
           {"op": "replace", "path": "/data/k", "value": "w"},
           {"op": "remove", "path": "/metadata/labels/a"},
           {"op": "move", "from": "/data/x", "path": "/data/z"},
           {"op": "copy", "from": "/data/z", "path": "/metadata/labels/b"},
           {"op": "test", "path": "/data/k", "value": "w"},
           {"op": "add", "path": "/list/-", "value": 4}]
    out = json_patch(DOC, ops)
    assert out == {"metadata": {"name": "c", "labels": {"b": "y"}}, "data": {"k": "w", "z": "y"},
                   "list": [1, 2, 3, 4]}
    assert DOC["data"] == {"k": "v"}


def test_failed_test_operation_is_the_generic_422():
    with pytest.raises(PatchError) as err:
        json_patch(DOC, [{"op": "test", "path": "/data/k", "value": "other"}])
    assert err.value.status() == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "the server rejected our request due to an error in our request", "reason": "Invalid",
        "details": {}, "code": 422}


@pytest.mark.parametrize("op", [
    {"op": "remove", "path": "/data/missing"},
    {"op": "add", "path": "/nope/deeper/x", "value": 1},
    {"op": "add", "path": "/list/9", "value": 1},
    {"op": "frobnicate", "path": "/data"},
    {"op": "replace", "path": "/list/7", "value": 1},
    {"op": "test", "path": "/data/missing", "value": "x"},
])
def test_operations_that_cannot_apply_are_422(op):
    with pytest.raises(PatchError) as err:
        json_patch(DOC, [op])
    assert err.value.code == 422


def test_upstream_quirks_replace_adds_missing_keys_and_negative_indices_count_from_the_end():
    assert json_patch(DOC, [{"op": "replace", "path": "/data/new", "value": 1}])["data"] == {"k": "v", "new": 1}
    assert json_patch(DOC, [{"op": "remove", "path": "/list/-1"}])["list"] == [1, 2]
    assert json_patch(DOC, [{"op": "add", "path": "/list/-1", "value": 9}])["list"] == [1, 2, 3, 9]
    assert json_patch(DOC, [{"op": "add", "path": "/data/n"}])["data"]["n"] is None
    assert json_patch(DOC, [{"op": "test", "path": "/data/missing", "value": None}]) == DOC


def test_body_that_is_not_a_list_of_operations_is_400():
    with pytest.raises(PatchError) as err:
        json_patch(DOC, {"op": "add"})
    assert (err.value.code, err.value.message) == (
        400, "json: cannot unmarshal object into Go value of type jsonpatch.Patch")
    with pytest.raises(PatchError) as err:
        json_patch(DOC, ["add"])
    assert err.value.message == "json: cannot unmarshal string into Go value of type jsonpatch.Operation"


def test_more_than_ten_thousand_operations_is_413():
    with pytest.raises(PatchError) as err:
        json_patch(DOC, [{"op": "test", "path": "/data/k", "value": "v"}] * 10001)
    assert err.value.code == 413 and err.value.message.endswith("is 10000, got 10001")


# -- merge patch -----------------------------------------------------------------------------------

def test_merge_patch_rfc7386_examples():
    target = {"a": "b", "c": {"d": "e", "f": "g"}}
    assert merge_patch(target, {"a": "z", "c": {"f": None}}) == {"a": "z", "c": {"d": "e"}}
    assert merge_patch({"a": [{"b": "c"}]}, {"a": [1]}) == {"a": [1]}
    assert merge_patch({"e": None}, {"a": 1}) == {"e": None, "a": 1}
    assert merge_patch({}, {"a": {"bb": {"ccc": None}}}) == {"a": {"bb": {}}}
    assert target == {"a": "b", "c": {"d": "e", "f": "g"}}


def test_merge_patch_prunes_nulls_inside_arrays_of_new_values_like_upstream():
    assert merge_patch({}, {"a": [{"x": None, "y": 1}, None]}) == {"a": [{"y": 1}, None]}
    # Replacing an object by an array keeps the array exactly as sent.
    assert merge_patch({"a": {"k": 1}}, {"a": [{"x": None}]}) == {"a": [{"x": None}]}


@pytest.mark.parametrize("patch", [None, "text", 5, True])
def test_merge_patch_that_is_not_an_object_is_400(patch):
    with pytest.raises(PatchError) as err:
        merge_patch(DOC, patch)
    assert (err.value.code, err.value.message) == (400, "Invalid JSON Patch")


_scalars = st.one_of(st.booleans(), st.integers(-5, 5), st.text(max_size=3))
_values = st.recursive(_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=2), inner, max_size=3)), max_leaves=12)
_docs = st.dictionaries(st.text(max_size=2), _values, max_size=4)


@given(_docs, _docs)
@pytest.mark.slow
def test_merge_patch_of_the_difference_turns_a_into_b(a, b):
    assert merge_patch(a, create_merge_patch(a, b)) == b


@given(_docs, _docs)
def test_merge_patch_is_idempotent(a, patch):
    once = merge_patch(a, patch)
    assert merge_patch(once, patch) == once
