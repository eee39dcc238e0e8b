"""Cluster IPs from a large Service range (a /16, as real clusters use /12): allocation probes the range instead
of listing it (bench/agent_bench.py creates 1,000 in seconds); all distinct, inside the range, past its first 16."""

from __future__ import annotations

import asyncio
import ipaddress

from mini_kube.client import ApiClient, Connection
from mini_kube.machinery.refs import SERVICES


def test_many_services_in_a_large_range():
    from mini_kube.testing import MiniKube

    with MiniKube(controllers=False, service_cidr="10.96.0.0/16") as kube:
        async def create_all() -> list[str]:
            client = ApiClient(Connection.from_kubeconfig(kube.kubeconfig))
            try:
                made = await asyncio.gather(*(client.create(SERVICES, {"metadata": {"name": f"s{i}"}, "spec": {
                    "ports": [{"port": 80}]}}, "default") for i in range(500)))
            finally:
                await client.close()
            return [s["spec"]["clusterIP"] for s in made]
        ips = kube.run(create_all(), timeout=120)  # listing the range for each Service took minutes
    network = ipaddress.ip_network("10.96.0.0/16")
    assert len(set(ips)) == 500 and all(ipaddress.ip_address(ip) in network for ip in ips)
    assert all(int(ipaddress.ip_address(ip)) >= int(network.network_address) + 16 for ip in ips)
