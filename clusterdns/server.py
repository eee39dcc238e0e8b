"""DNS over UDP and TCP on asyncio, answering from `ClusterRecords` (wire format by dnspython).

UDP answers larger than the client's limit (512 bytes, or its EDNS payload size) are sent truncated (TC), so
the client asks again over TCP; TCP connections may carry several length-prefixed queries.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import struct
from collections import Counter
from collections.abc import Callable
from typing import Any

import dns.exception
import dns.flags
import dns.message
import dns.opcode
import dns.rcode
import dns.rdatatype

from .records import ClusterRecords

log = logging.getLogger("mini-kube.dns")
TCP_IDLE = 10.0
CACHE_LIMIT = 10_000  # answers kept at most
CACHE_BYTES = 4 * 1024 * 1024  # bytes of queries and answers kept at most (the oldest go first)
CACHE_ENTRY_OVERHEAD = 200  # bytes an entry costs beyond its query and answer (the tuples, the dict slot)
SocketMaker = Callable[[int, int], socket.socket]


class DnsHandler:
    """Turns one query's wire bytes into the answer's, counting what it answered."""

    def __init__(self, records: ClusterRecords) -> None:
        self.records = records
        self.counts: Counter[str] = Counter()  # by rcode name, and "requests"
        # answers by the query's bytes after its ID, while nothing changed (records.serial): a repeated
        # question costs a dictionary lookup; bounded in entries and bytes, FORMERR answers never kept
        self._cache: dict[tuple[bool, bytes], tuple[bytes, str, int]] = {}  # (answer, rcode, bytes it costs)
        self._cache_bytes = 0
        self._serial = -1

    @property
    def cached(self) -> tuple[int, int]:
        """(answers, bytes) the cache holds."""
        return len(self._cache), self._cache_bytes

    def answer(self, wire: bytes, max_size: int | None) -> bytes | None:
        self.counts["requests"] += 1
        if self._serial != self.records.serial:
            self._cache.clear()
            self._cache_bytes = 0
            self._serial = self.records.serial
        key = (max_size is None, wire[2:])
        hit = self._cache.get(key)
        if hit is not None:
            self.counts[hit[1]] += 1
            return wire[:2] + hit[0]
        reply = self._answer(wire, max_size)
        if reply is not None and len(wire) >= 12 and reply[3] & 0xF != dns.rcode.FORMERR:  # junk is not kept
            size = len(wire) + len(reply) + CACHE_ENTRY_OVERHEAD
            while self._cache and (len(self._cache) >= CACHE_LIMIT or self._cache_bytes + size > CACHE_BYTES):
                self._cache_bytes -= self._cache.pop(next(iter(self._cache)))[2]  # the oldest goes first
            self._cache[key] = (reply[2:], dns.rcode.Rcode.to_text(reply[3] & 0xF), size)
            self._cache_bytes += size
        return reply

    def _answer(self, wire: bytes, max_size: int | None) -> bytes | None:
        try:
            query = dns.message.from_wire(wire)
        except dns.exception.DNSException:
            return self._formerr(wire)
        response = dns.message.make_response(query)
        response.flags |= dns.flags.AA
        response.flags &= ~dns.flags.RA
        if query.opcode() != dns.opcode.QUERY or len(query.question) != 1:
            response.set_rcode(dns.rcode.NOTIMP if query.opcode() != dns.opcode.QUERY else dns.rcode.FORMERR)
        else:
            question = query.question[0]
            found = self.records.resolve(question.name, question.rdtype)
            response.set_rcode(found.rcode)
            if found.rcode == dns.rcode.REFUSED:
                response.flags &= ~dns.flags.AA
            response.answer = found.answer
            response.authority = found.authority
            response.additional = found.additional
        self.counts[dns.rcode.to_text(response.rcode())] += 1
        limit = max_size
        if limit is not None:
            limit = max(512, query.payload) if query.edns >= 0 else 512
        try:
            return response.to_wire(max_size=limit or 65535)
        except dns.exception.TooBig:
            response.answer, response.authority, response.additional = [], [], []
            response.flags |= dns.flags.TC
            return response.to_wire()

    def _formerr(self, wire: bytes) -> bytes | None:
        if len(wire) < 12:
            return None
        self.counts["FORMERR"] += 1
        (qid,) = struct.unpack("!H", wire[:2])
        return struct.pack("!HHHHHH", qid, 0x8000 | dns.rcode.FORMERR, 0, 0, 0, 0)


class _Udp(asyncio.DatagramProtocol):
    def __init__(self, handler: DnsHandler) -> None:
        self.handler = handler
        self.transport: asyncio.DatagramTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def datagram_received(self, data: bytes, addr: Any) -> None:
        reply = self.handler.answer(data, 512)
        if reply is not None and self.transport is not None:
            self.transport.sendto(reply, addr)


class DnsServer:
    """UDP and TCP listeners on one address and port (or several), all answering from one handler."""

    def __init__(self, records: ClusterRecords) -> None:
        self.handler = DnsHandler(records)
        self._udp: list[asyncio.DatagramTransport] = []
        self._tcp: list[asyncio.Server] = []
        self._conns: set[asyncio.Task[Any]] = set()

    async def listen(self, host: str, port: int, make_socket: SocketMaker | None = None) -> int:
        """Serve on host:port over UDP and TCP (port 0: the same free port for both); returns the port.
        `make_socket(family, type)` makes the sockets (e.g. inside another network namespace)."""
        maker = make_socket or (lambda family, kind: socket.socket(family, kind))
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        for _ in range(20):
            udp = maker(family, socket.SOCK_DGRAM)
            tcp = maker(family, socket.SOCK_STREAM)
            try:
                udp.bind((host, port))
                bound = udp.getsockname()[1]
                tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                tcp.bind((host, bound))
                tcp.listen(256)
            except OSError:
                udp.close()
                tcp.close()
                if port:
                    raise
                continue  # the free UDP port was taken for TCP: another one
            break
        else:
            raise OSError(f"no port free for both UDP and TCP on {host}")
        loop = asyncio.get_running_loop()
        udp.setblocking(False)
        tcp.setblocking(False)
        transport, _ = await loop.create_datagram_endpoint(lambda: _Udp(self.handler), sock=udp)
        self._udp.append(transport)
        self._tcp.append(await asyncio.start_server(self._serve_tcp, sock=tcp))
        return bound

    async def _serve_tcp(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._conns.add(task)
        try:
            while True:
                head = await asyncio.wait_for(reader.readexactly(2), TCP_IDLE)
                (length,) = struct.unpack("!H", head)
                wire = await asyncio.wait_for(reader.readexactly(length), TCP_IDLE)
                reply = self.handler.answer(wire, None)
                if reply is None:
                    break
                writer.write(struct.pack("!H", len(reply)) + reply)
                await writer.drain()
        except (asyncio.IncompleteReadError, TimeoutError, ConnectionError):
            pass
        finally:
            if task is not None:
                self._conns.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def close(self) -> None:
        for transport in self._udp:
            transport.close()
        for server in self._tcp:
            server.close()
        for task in list(self._conns):
            task.cancel()
        await asyncio.gather(*self._conns, return_exceptions=True)
        self._udp, self._tcp = [], []
