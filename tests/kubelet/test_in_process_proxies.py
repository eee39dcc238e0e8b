"""The kube-proxies of one process's nodes share their informers (issue #28): adding nodes adds no watch of
EndpointSlices or Services, so a write to one of them (or a Node's status) is sent once to the process, not once
per node; each proxy still programs what it watches."""

from __future__ import annotations

import asyncio

from mini_kube.client import ApiClient, Connection
from mini_kube.machinery.refs import SERVICES

from .conftest import eventually, new_namespace


def watchers(kube, plural: str) -> int:
    cache = kube.server.cache
    return sum(len(found) for collection, found in cache._watchers.items() if collection.endswith(f"/{plural}/"))


def test_in_process_proxies_share_one_watch_per_kind(simulated_cluster):
    from mini_kube.node import start_in_process

    kube = simulated_cluster
    before = {plural: watchers(kube, plural) for plural in ("endpointslices", "services")}
    nodes = kube.run(start_in_process(lambda: ApiClient(Connection(kube.url)), ["shared-1", "shared-2", "shared-3"],
                                      runtime="simulated", first_index=20))
    try:
        assert len(nodes.proxies) == 3
        eventually(lambda: watchers(kube, "endpointslices") > before["endpointslices"])  # the watch follows the list
        kube.run(asyncio.sleep(0.5))  # any other proxy's watch would be open by now
        added = {plural: watchers(kube, plural) - count for plural, count in before.items()}
        assert added["endpointslices"] == 1  # one per node before
        ns = new_namespace(kube)
        kube.client.create(SERVICES, {"metadata": {"name": "web"}, "spec": {
            "selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": 8080}]}}, ns)
        eventually(lambda: all(f"{ns}/web" in proxy._states for proxy in nodes.proxies))
    finally:
        kube.run(nodes.stop())
    eventually(lambda: {plural: watchers(kube, plural) for plural in before} == before)  # stopping ends them
