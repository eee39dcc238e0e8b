"""The fake cloud's load balancer fails open, as the clouds' network load balancers do: with no backend known
healthy it tries them all. A new LoadBalancer Service gets its address while its node ports may not listen yet
(kube-proxy opens them once the Service's endpoints exist); the README's first session then curls the address
at once, and got a reset until the next health check (issue #25)."""

from __future__ import annotations

import asyncio
import random

import pytest
from mini_kube.ccm.cloud import FakeCloud, LBPort, LBSpec

BLOCK = f"127.{random.randint(100, 250)}.{random.randint(0, 255)}"


async def test_a_backend_listening_after_the_last_health_check_is_tried(unused_tcp_port):
    node, node_port = f"{BLOCK}.10", unused_tcp_port
    cloud = FakeCloud([f"{BLOCK}.100"], health_interval=600)  # no health check runs during the test
    try:
        lb = await cloud.ensure_load_balancer("a", LBSpec((LBPort("TCP", 8080, node_port),), (node,)))
        assert lb.healthy == set()  # checked when made: nothing listened on the node port yet

        async def answer(reader, writer):
            writer.write(b"pod-a\n")
            await writer.drain()
            writer.close()

        server = await asyncio.start_server(answer, node, node_port)
        try:
            reader, writer = await asyncio.open_connection(lb.ip, 8080)
            assert await asyncio.wait_for(reader.read(), 5) == b"pod-a\n"  # was b"": reset, no healthy backend
            writer.close()
        finally:
            server.close()
            await server.wait_closed()
        # and with no backend accepting, the connection is still reset at once
        with pytest.raises(ConnectionResetError):
            reader, writer = await asyncio.wait_for(asyncio.open_connection(lb.ip, 8080), 5)
            if not await asyncio.wait_for(reader.read(), 5):
                raise ConnectionResetError
    finally:
        await cloud.close()
