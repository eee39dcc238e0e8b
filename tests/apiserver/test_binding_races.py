"""A Pod deleted while the scheduler binds it (kr8s's suite deletes Pods right after creating them): the
binding answers 404 NotFound (or 409 once the Pod is terminating), never 500."""

from __future__ import annotations

import asyncio

import pytest
from mini_kube.client import ApiError
from mini_kube.machinery.refs import PODS


@pytest.fixture(scope="module")
def kube():
    from mini_kube.testing import MiniKube

    with MiniKube(controllers=False, scheduler=False) as cluster:
        yield cluster


def test_binding_a_pod_being_deleted(kube):
    async def race() -> list[int]:
        client = kube.client.async_client
        codes = []
        for i in range(40):
            name = f"raced-{i}"
            await client.create(PODS, {"metadata": {"name": name}, "spec": {
                "containers": [{"name": "c", "image": "nginx"}]}}, "default")
            binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name},
                       "target": {"apiVersion": "v1", "kind": "Node", "name": "node-1"}}
            bound, _ = await asyncio.gather(
                client.request("POST", PODS.path("default", name, "binding"), body=binding),
                client.delete(PODS, name, "default"), return_exceptions=True)
            codes.append(bound.status if isinstance(bound, ApiError) else 201)
        return codes

    codes = kube.run(race(), timeout=120)
    assert set(codes) <= {201, 404, 409}, codes
