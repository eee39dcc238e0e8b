"""Patches without a resourceVersion never fail with 409 when other writes land at the same moment: the
server reads again and re-applies them, as upstream's GuaranteedUpdate does; a patch that carries a stale
resourceVersion still gets 409."""

from __future__ import annotations

import asyncio

import pytest
from mini_kube.client import Conflict
from mini_kube.machinery.refs import CONFIGMAPS


def test_concurrent_patches_all_land(mini_kube):
    client = mini_kube.client.async_client
    mini_kube.client.create(CONFIGMAPS, {"metadata": {"name": "busy"}}, "default")

    async def patch_all():
        await asyncio.gather(*(client.patch(CONFIGMAPS, "busy", {"metadata": {"labels": {f"k{i}": "v"}}}, "default")
                               for i in range(40)))
    mini_kube.run(patch_all())
    labels = mini_kube.client.get(CONFIGMAPS, "busy", "default")["metadata"]["labels"]
    assert set(labels) == {f"k{i}" for i in range(40)}


def test_concurrent_applies_of_a_new_object_all_land(mini_kube):
    """Server-side applies racing to create the same object: one creates it, the others apply onto it (as
    upstream, which retries the create as an update), none answers 409 AlreadyExists (two controllers during a
    leader hand-over, say)."""
    client = mini_kube.client.async_client

    async def apply_all():
        return await asyncio.gather(*(client.apply(CONFIGMAPS, {
            "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "raced"}, "data": {f"k{i}": "v"}},
            "default", field_manager=f"manager-{i}") for i in range(20)), return_exceptions=True)
    results = mini_kube.run(apply_all())
    assert [r for r in results if isinstance(r, BaseException)] == []
    assert set(mini_kube.client.get(CONFIGMAPS, "raced", "default")["data"]) == {f"k{i}" for i in range(20)}


def test_patch_with_a_stale_resource_version_conflicts(mini_kube):
    created = mini_kube.client.create(CONFIGMAPS, {"metadata": {"name": "stale"}}, "default")
    mini_kube.client.patch(CONFIGMAPS, "stale", {"data": {"a": "1"}}, "default")
    with pytest.raises(Conflict):
        mini_kube.client.patch(CONFIGMAPS, "stale", {"metadata": {"resourceVersion":
                                                                  created["metadata"]["resourceVersion"]}}, "default")
