"""Schemas shared by the patch tests."""

from __future__ import annotations

from typing import Any

import pytest
from mini_kube.apiserver.patch.schema_walk import SchemaNode

# A test type shaped like upstream's strategicpatch test "MergeItem": lists merged by `name`,
# replaced lists, merged and replaced scalar lists, a plain map and retainKeys fields.
_ITEM_PROPS: dict[str, Any] = {
    "name": {"type": "string"}, "value": {"type": "string"}, "other": {"type": "string"},
    "mergingList": {"type": "array", "items": {"$ref": "#/$defs/Item"},
                    "x-kubernetes-patch-strategy": "merge", "x-kubernetes-patch-merge-key": "name"},
    "nonMergingList": {"type": "array", "items": {"$ref": "#/$defs/Item"}},
    "mergingIntList": {"type": "array", "items": {"type": "integer"}, "x-kubernetes-patch-strategy": "merge"},
    "nonMergingIntList": {"type": "array", "items": {"type": "integer"}},
    "simpleMap": {"type": "object", "additionalProperties": {"type": "string"}},
    "retainKeysMap": {"$ref": "#/$defs/Item", "x-kubernetes-patch-strategy": "retainKeys"},
    "retainKeysMergingList": {"type": "array", "items": {"$ref": "#/$defs/Item"},
                              "x-kubernetes-patch-strategy": "merge,retainKeys",
                              "x-kubernetes-patch-merge-key": "name"},
}
_DEFS = {"Item": {"type": "object", "properties": _ITEM_PROPS}}


@pytest.fixture(scope="session")
def merge_item() -> SchemaNode:
    return SchemaNode({"$ref": "#/$defs/Item"}, "builtin", resolve=_DEFS.__getitem__)


@pytest.fixture(scope="session")
def deployment() -> SchemaNode:
    return SchemaNode.for_builtin("io.k8s.api.apps.v1.Deployment")


@pytest.fixture(scope="session")
def configmap() -> SchemaNode:
    return SchemaNode.for_builtin("io.k8s.api.core.v1.ConfigMap")


@pytest.fixture(scope="session")
def pod() -> SchemaNode:
    return SchemaNode.for_builtin("io.k8s.api.core.v1.Pod")
