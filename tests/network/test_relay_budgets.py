"""The relay's budgets (#24, finding 6): a flood from one client address is refused past its share (reset at
once) while the connections within it work, and a relayed connection idle for `idle_timeout` is closed (on main
~7,000 idle connections to one load balancer took every descriptor of the process and never timed out); UDP
sessions are bounded per client address and per listener (on main each new source port held a socket for 30 s)."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from typing import Any

from mini_kube.network.relay import RelayLimits, listen_on
from mini_kube.network.udp_relay import UdpRelay

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


class UdpEcho(asyncio.DatagramProtocol):
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport

    def datagram_received(self, data: bytes, addr: tuple[str, int]) -> None:
        self.transport.sendto(data, addr)  # type: ignore[attr-defined]


class UdpToOne(UdpRelay):
    def __init__(self, target: tuple[str, int]) -> None:
        super().__init__(listen_on(socket.socket(socket.AF_INET, socket.SOCK_DGRAM), "127.0.0.1", 0), "udp-test")
        self.target = target

    def choose(self, client: Any) -> tuple[Any, tuple[str, int]] | None:
        return self.target, self.target


async def _udp_answered(source: str, relay_address: tuple[str, int]) -> bool:
    """Whether a datagram from a new port of `source` comes back through the relay."""
    loop = asyncio.get_running_loop()
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setblocking(False)
    sock.bind((source, 0))
    try:
        sock.sendto(b"ping", relay_address)
        try:
            return await asyncio.wait_for(loop.sock_recv(sock, 16), 0.5) == b"ping"
        except TimeoutError:
            return False
    finally:
        sock.close()


async def test_udp_sessions_are_bounded_per_client_and_per_listener() -> None:
    loop = asyncio.get_running_loop()
    transport, _ = await loop.create_datagram_endpoint(UdpEcho, local_addr=("127.0.0.1", 0))
    relay = UdpToOne(transport.get_extra_info("sockname"))
    relay.max_sessions, relay.max_sessions_per_client = 6, 4
    await relay.start()
    address = relay.sock.getsockname()
    try:
        first = [await _udp_answered("127.0.0.1", address) for _ in range(6)]
        assert first == [True] * 4 + [False] * 2  # each new source port is a session: 4 for one address
        assert [await _udp_answered("127.0.0.2", address) for _ in range(3)] == [True, True, False]  # 6 in all
        assert relay.over_budget == 3 and len(relay.sessions) == 6
        for session in list(relay.sessions.values()):
            relay.end(session)
        assert relay.per_client == {} and await _udp_answered("127.0.0.1", address)
    finally:
        relay.close()
        transport.close()
