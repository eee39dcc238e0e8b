"""The TCP relay on its own (real sockets on loopback, no cluster): the byte stream arrives intact both ways at
once, many small round trips never stall on an edge not seen, half-close, resets, refused targets, and nothing
is left open once the connections and the relay have ended."""

from __future__ import annotations

import asyncio
import errno
import hashlib
import os
import socket
from collections.abc import Iterator
from typing import Any

import pytest
from mini_kube.network.poller import Poller
from mini_kube.network.relay import Attempt, TcpRelay, listen_on

IP = "127.0.0.1"


class Relay(TcpRelay):
    """Relays to the addresses in `targets_list`, in order."""

    def __init__(self, targets_list: list[tuple[str, int]], timeout: float = 1.0) -> None:
        super().__init__(listen_on(socket.socket(), IP, 0), "test")
        self.targets_list = targets_list
        self.timeout = timeout
        self.failed: list[int] = []

    def targets(self, peer: Any) -> Iterator[Attempt]:
        return ((address, address, self.timeout) for address in self.targets_list)

    def dial_failed(self, target: Any, code: int) -> None:
        self.failed.append(code)

    @property
    def address(self) -> tuple[str, int]:
        assert self.sock is not None
        return self.sock.getsockname()


async def serve(handler: Any) -> tuple[asyncio.Server, tuple[str, int]]:
    server = await asyncio.start_server(handler, IP, 0)
    return server, server.sockets[0].getsockname()


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    while data := await reader.read(65536):
        writer.write(data)
        await writer.drain()
    writer.close()


async def test_both_directions_at_once_arrive_intact() -> None:
    """8 MiB each way at the same time through an echo: both pipes fill and drain without a stall."""
    server, address = await serve(echo)
    relay = Relay([address])
    await relay.start()
    reader, writer = await asyncio.open_connection(*relay.address)
    payload = os.urandom(8 << 20)

    async def send() -> None:
        for start in range(0, len(payload), 1 << 16):
            writer.write(payload[start:start + (1 << 16)])
            await writer.drain()
        writer.write_eof()

    sender = asyncio.create_task(send())
    received = hashlib.sha256()
    size = 0
    while data := await asyncio.wait_for(reader.read(1 << 20), 10):
        received.update(data)
        size += len(data)
    await sender
    assert size == len(payload) and received.digest() == hashlib.sha256(payload).digest()
    writer.close()
    relay.close()
    server.close()


@pytest.mark.slow
async def test_many_small_round_trips_on_many_connections() -> None:
    server, address = await serve(echo)
    relay = Relay([address])
    await relay.start()

    async def client(n: int) -> None:
        reader, writer = await asyncio.open_connection(*relay.address)
        for i in range(200):
            line = f"{n}:{i}\n".encode()
            writer.write(line)
            assert await asyncio.wait_for(reader.readline(), 5) == line
        writer.close()

    await asyncio.gather(*(client(n) for n in range(50)))
    assert relay.accepted == 50
    relay.close()
    server.close()


async def test_half_close_lets_the_answer_through() -> None:
    async def count(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        data = await reader.read()  # until the client's EOF
        writer.write(b"got %d\n" % len(data) + bytes(1 << 20))
        await writer.drain()
        writer.close()

    server, address = await serve(count)
    relay = Relay([address])
    await relay.start()
    reader, writer = await asyncio.open_connection(*relay.address)
    writer.write(bytes(300_000))
    writer.write_eof()
    assert await asyncio.wait_for(reader.readline(), 5) == b"got 300000\n"
    assert len(await asyncio.wait_for(reader.read(), 5)) == 1 << 20
    writer.close()
    relay.close()
    server.close()


async def test_a_reset_by_the_target_resets_the_client() -> None:
    async def reset(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readline()
        sock = writer.get_extra_info("socket")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        writer.transport.abort()

    server, address = await serve(reset)
    relay = Relay([address])
    await relay.start()
    reader, writer = await asyncio.open_connection(*relay.address)
    writer.write(b"hello\n")
    with pytest.raises(ConnectionResetError):
        await asyncio.wait_for(reader.read(), 5)
    writer.close()
    relay.close()
    server.close()


async def test_refused_targets_are_skipped_and_none_left_resets() -> None:
    closed = socket.socket()
    closed.bind((IP, 0))
    refusing = closed.getsockname()  # bound, never listening: connections to it are refused
    server, address = await serve(echo)
    relay = Relay([refusing, address])
    await relay.start()
    reader, writer = await asyncio.open_connection(*relay.address)
    writer.write(b"ping\n")
    assert await asyncio.wait_for(reader.readline(), 5) == b"ping\n"
    assert relay.failed and relay.accepted == 1
    writer.close()

    relay.targets_list = [refusing]
    with pytest.raises(ConnectionResetError):  # at connect, or at the first read
        reader, writer = await asyncio.open_connection(*relay.address)
        await asyncio.wait_for(reader.read(), 5)
    assert relay.refused == 1
    relay.close()
    server.close()
    closed.close()


async def test_nothing_is_left_open_after_the_last_connection() -> None:
    """Connections outlive their relay's close; once they end, the poller closes, and only pooled pipes stay."""
    server, address = await serve(echo)
    before = open_fds()
    relay = Relay([address])
    await relay.start()
    loop = asyncio.get_running_loop()
    conns = [await asyncio.open_connection(*relay.address) for _ in range(5)]
    for reader, writer in conns:
        writer.write(b"x\n")
        assert await reader.readline() == b"x\n"
    relay.close()
    assert Poller._by_loop.get(loop) is not None  # the connections still use it
    for _reader, writer in conns:
        writer.close()
        await writer.wait_closed()

    async def settled() -> None:
        while Poller._by_loop.get(loop) is not None:
            await asyncio.sleep(0.01)

    await asyncio.wait_for(settled(), 5)
    pooled = 2 * 2 * 5  # two pipes (two fds each) per connection, kept for the next ones
    assert open_fds() <= before + pooled
    server.close()


async def test_a_stalled_reader_then_drains_every_small_write() -> None:
    """Thousands of small writes while the client does not read: the pipe fills with small pieces (its slots
    run out before its bytes), and everything still arrives once the client reads."""
    count = 20_000

    async def chatter(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        await reader.readline()
        for i in range(count):
            writer.write(b"%09d\n" % i)
            if i % 50 == 0:
                await asyncio.sleep(0)  # separate segments, not one coalesced write
        await writer.drain()
        await reader.read()  # until the client is done
        writer.close()

    server, address = await serve(chatter)
    relay = Relay([address])
    await relay.start()
    reader, writer = await asyncio.open_connection(*relay.address, limit=1 << 16)
    writer.transport.pause_reading()
    writer.write(b"go\n")
    await asyncio.sleep(0.5)  # the backend writes everything meanwhile; the relay fills up
    writer.transport.resume_reading()
    got = 0
    while got < count * 10:
        data = await asyncio.wait_for(reader.read(1 << 16), 5)
        assert data
        got += len(data)
    writer.close()
    relay.close()
    server.close()


async def test_a_target_that_does_not_answer_in_time_is_skipped() -> None:
    """A listener whose accept queue is full drops the SYN: the dial times out and the next target is tried."""
    full = socket.socket()
    full.bind((IP, 0))
    full.listen(0)
    fillers = []
    for _ in range(2):  # a backlog of 0 still queues one; after that SYNs are dropped
        filler = socket.socket()
        filler.setblocking(False)
        filler.connect_ex(full.getsockname())
        fillers.append(filler)
    await asyncio.sleep(0.05)
    server, address = await serve(echo)
    relay = Relay([full.getsockname(), address], timeout=0.3)
    await relay.start()
    reader, writer = await asyncio.open_connection(*relay.address)
    writer.write(b"late\n")
    assert await asyncio.wait_for(reader.readline(), 5) == b"late\n"
    assert relay.failed == [errno.ETIMEDOUT]
    writer.close()
    relay.close()
    server.close()
    for sock in (*fillers, full):
        sock.close()


async def test_a_small_request_and_its_eof_at_once_are_both_passed_on() -> None:
    """A few bytes and the client's EOF arrive together, many times over: the EOF must reach the target
    (which answers only after it) however the two fall into the relay's reads."""
    async def count(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        data = await reader.read()
        writer.write(b"%d\n" % len(data))
        await writer.drain()
        writer.close()

    server, address = await serve(count)
    relay = Relay([address])
    await relay.start()

    async def once(n: int) -> None:
        sock = socket.socket()
        sock.setblocking(False)
        await asyncio.get_running_loop().sock_connect(sock, relay.address)
        reader, writer = await asyncio.open_connection(sock=sock)
        writer.write(b"x" * (1 + n % 200))
        writer.write_eof()
        assert await asyncio.wait_for(reader.read(), 5) == b"%d\n" % (1 + n % 200)
        writer.close()

    for batch in range(10):
        await asyncio.gather(*(once(batch * 40 + i) for i in range(40)))
    relay.close()
    server.close()
