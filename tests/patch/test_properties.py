"""Property tests: field-set algebra against plain sets of paths, patches against each other."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from mini_kube.apiserver.patch import (
    SchemaNode,
    create_merge_patch,
    fieldpath,
    merge_patch,
    strategic_merge_patch,
)
from mini_kube.apiserver.patch.fieldset import MISSING, compare, to_field_set
from mini_kube.apiserver.patch.schema_walk import deduced

_elements = st.sampled_from(["f:a", "f:b", "f:c", 'k:{"name":"x"}', 'v:"y"'])
_paths = st.lists(st.tuples(*[_elements] * 1) | st.tuples(_elements, _elements)
                  | st.tuples(_elements, _elements, _elements), max_size=8)


def build(paths) -> dict:
    trie: dict = {}
    for p in paths:
        fieldpath.insert(trie, p)
    return trie


def members(trie) -> set:
    return set(fieldpath.paths(trie))


@given(_paths, _paths)
def test_trie_operations_agree_with_set_operations(a, b):
    ta, tb = build(a), build(b)
    assert members(ta) == set(a)
    assert members(fieldpath.union(ta, tb)) == set(a) | set(b)
    assert members(fieldpath.difference(ta, tb)) == set(a) - set(b)
    assert members(fieldpath.intersection(ta, tb)) == set(a) & set(b)
    assert fieldpath.decode(fieldpath.encode(ta)) == fieldpath.encode(ta)
    assert members(fieldpath.encode(ta)) == set(a)
    for p in a:
        assert fieldpath.has(ta, p)


_scalars = st.one_of(st.integers(-3, 3), st.text("ab", max_size=2), st.booleans())
_values = st.recursive(_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text("abc", min_size=1, max_size=2), inner, max_size=3)),
    max_leaves=10)
_docs = st.dictionaries(st.text("xyz", min_size=1, max_size=2), _values, max_size=4)


@given(_docs, _docs)
@pytest.mark.slow
def test_strategic_patch_without_lists_to_merge_is_a_merge_patch(a, b):
    configmap = SchemaNode.for_builtin("io.k8s.api.core.v1.ConfigMap")
    patch = create_merge_patch(a, b)
    assert strategic_merge_patch(a, patch, configmap) == merge_patch(a, patch) == b


@given(_docs, _docs)
@pytest.mark.slow
def test_compare_reports_nothing_for_equal_objects_and_covers_new_fields(a, b):
    node = deduced()
    assert compare(a, a, node) == ({}, {}, {})
    added, modified, removed = compare(MISSING, b, node)
    assert not modified and not removed
    # Everything an applier would own of b is new when b is created from nothing.
    assert fieldpath.difference(to_field_set(b, node), added) == {}


@given(st.lists(st.tuples(st.sampled_from(["m1", "m2", "m3"]), _docs), min_size=1, max_size=5))
@pytest.mark.slow
def test_update_managers_never_share_a_field(writes):
    from mini_kube.apiserver.patch import update_managed_fields

    obj = None
    for i, (manager, doc) in enumerate(writes):
        new = {"apiVersion": "v1", "kind": "Thing", "metadata": {"name": "n", "uid": "u"} if obj else {"name": "n"},
               **{k: v for k, v in doc.items() if k not in ("apiVersion", "kind", "metadata")}}
        obj = update_managed_fields(obj, new, manager, now=f"2026-01-01T00:00:0{i}Z")
    entries = [e["fieldsV1"] for e in obj["metadata"].get("managedFields", [])]
    for i, a in enumerate(entries):
        for b in entries[i + 1:]:
            assert fieldpath.intersection(a, b) == {}


@given(_docs)
def test_reapplying_the_same_configuration_changes_nothing(doc):
    from mini_kube.apiserver.patch import server_side_apply

    config = {"apiVersion": "x/v1", "kind": "K", "metadata": {"name": "n"},
              **{k: v for k, v in doc.items() if k not in ("apiVersion", "kind", "metadata")}}
    first = server_side_apply(None, config, "m", "x/v1", now="2026-01-01T00:00:00Z")
    first["metadata"]["uid"] = "u"
    again = server_side_apply(first, config, "m", "x/v1", now="2026-01-01T00:00:09Z")
    assert again == first
