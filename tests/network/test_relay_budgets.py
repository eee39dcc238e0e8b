"""The relay's budgets (#24, finding 6): a flood from one client address is refused past its share (reset at
once) while the connections within it work, and a relayed connection idle for `idle_timeout` is closed (on main
~7,000 idle connections to one load balancer took every descriptor of the process and never timed out)."""

from __future__ import annotations

import asyncio
import contextlib
import socket

from mini_kube.network.relay import RelayLimits

from tests.network.test_relay import Relay, echo, serve


async def _round_trip(sock: socket.socket) -> bytes:
    """An echo through the relay; b"" when the connection was refused (reset)."""
    loop = asyncio.get_running_loop()
    try:
        await loop.sock_sendall(sock, b"ping")
        return await asyncio.wait_for(loop.sock_recv(sock, 16), 5)
    except (ConnectionResetError, BrokenPipeError, OSError):
        return b""


async def _connect(address: tuple[str, int]) -> socket.socket:
    """A socket connected to `address`, or one whose connection was reset at once."""
    sock = socket.socket()
    sock.setblocking(False)
    with contextlib.suppress(ConnectionResetError):
        await asyncio.get_running_loop().sock_connect(sock, address)
    return sock


async def test_a_client_past_its_budget_is_refused_and_the_rest_work() -> None:
    server, address = await serve(echo)
    relay = Relay([address])
    relay.limits = RelayLimits(max_connections=40)  # one listener 20, one client address 10
    await relay.start()
    socks = [await _connect(relay.address) for _ in range(30)]
    try:
        answers = [await _round_trip(sock) for sock in socks]
        assert answers.count(b"ping") == 10 and answers.count(b"") == 20
        assert relay.over_budget == 20 and relay.live == 10
        for sock in socks[:10]:  # the held ones end: room again
            sock.close()
        await asyncio.sleep(0.2)
        assert relay.live == 0 and relay.per_client == {}
        late = await _connect(relay.address)
        assert await _round_trip(late) == b"ping"
        late.close()
    finally:
        for sock in socks:
            sock.close()
        relay.close()
        server.close()


async def test_an_idle_relayed_connection_is_closed() -> None:
    server, address = await serve(echo)
    relay = Relay([address])
    relay.limits = RelayLimits(idle_timeout=0.5)
    await relay.start()
    busy, idle = await _connect(relay.address), await _connect(relay.address)
    try:
        assert await _round_trip(busy) == await _round_trip(idle) == b"ping"
        for _ in range(6):  # one keeps talking, the other says nothing for over 0.5 s
            await asyncio.sleep(0.15)
            assert await _round_trip(busy) == b"ping"
        assert await asyncio.wait_for(asyncio.get_running_loop().sock_recv(idle, 16), 5) == b""
        assert await _round_trip(busy) == b"ping"
        assert relay.live == 1
    finally:
        busy.close()
        idle.close()
        relay.close()
        server.close()
