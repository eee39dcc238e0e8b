"""Patching and field management: JSON patch, merge patch, strategic merge patch, managed fields and
server-side apply, as pure functions on decoded JSON objects (the HTTP layer calls them)."""

from mini_kube.apiserver.patch.apply import server_side_apply
from mini_kube.apiserver.patch.errors import BUILTIN_PATCH_TYPES, CUSTOM_PATCH_TYPES, PatchError
from mini_kube.apiserver.patch.json_patch import json_patch
from mini_kube.apiserver.patch.merge_patch import create_merge_patch, merge_patch
from mini_kube.apiserver.patch.schema_walk import SchemaNode
from mini_kube.apiserver.patch.strategic import strategic_merge_patch
from mini_kube.apiserver.patch.update import update_managed_fields

__all__ = [
    "BUILTIN_PATCH_TYPES",
    "CUSTOM_PATCH_TYPES",
    "PatchError",
    "SchemaNode",
    "create_merge_patch",
    "json_patch",
    "merge_patch",
    "server_side_apply",
    "strategic_merge_patch",
    "update_managed_fields",
]
