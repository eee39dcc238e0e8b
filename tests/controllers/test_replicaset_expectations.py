"""The ReplicaSet controller's expectations: when they are never met (a creation whose Pod the controller never
sees), they lapse and the ReplicaSet is synced again then without waiting for another event (it stayed short of
its replicas until something touched it)."""

from __future__ import annotations

import asyncio

from mini_kube.client import ApiClient, Connection
from mini_kube.controllers.workloads import common
from mini_kube.controllers.workloads.replicaset import ReplicaSetController
from mini_kube.machinery.refs import PODS, REPLICASETS

from mini_kube.testing import MiniKube

REPLICASET = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "web"}, "spec": {
    "replicas": 1, "selector": {"matchLabels": {"app": "web"}},
    "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}


def test_lapsed_expectations_sync_the_replicaset_again_without_an_event(monkeypatch):
    monkeypatch.setattr(common, "EXPECTATIONS_TIMEOUT", 1.0)

    async def scenario(kube: MiniKube) -> list[dict]:
        client = ApiClient(Connection.from_kubeconfig(kube.kubeconfig))
        controller = ReplicaSetController(client)
        controller.expectations.timeout = 1.0
        controller.expectations.expect("default/web", adds=1)  # a creation whose Pod never shows up
        await controller.start()
        try:
            await client.create(REPLICASETS, REPLICASET, "default")
            for _ in range(100):
                pods = (await client.list(PODS, "default", labelSelector="app=web"))["items"]
                if pods:
                    return pods
                await asyncio.sleep(0.05)
            return []
        finally:
            await controller.stop()
            await client.close()

    with MiniKube(controllers=False, scheduler=False) as kube:
        pods = asyncio.run(scenario(kube))
    assert len(pods) == 1 and pods[0]["metadata"]["ownerReferences"][0]["name"] == "web"
