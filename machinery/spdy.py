"""SPDY/3.1 framing, enough for exec and port-forwarding as kubectl does them (raw SPDY after an HTTP upgrade,
or SPDY inside a WebSocket whose subprotocol is `SPDY/3.1+portforward.k8s.io`): frames in and out, header blocks compressed with zlib and the
protocol's preset dictionary (the SPDY/3 specification's, needed to interoperate; no maintained Python SPDY
library exists). Flow control is not used, as spdystream (kubectl's side) does not use it."""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

SYN_STREAM, SYN_REPLY, RST_STREAM, SETTINGS, PING, GOAWAY, HEADERS, WINDOW_UPDATE = 1, 2, 3, 4, 6, 7, 8, 9
FLAG_FIN = 0x01
VERSION = 3
_WORDS = ['options', 'head', 'post', 'put', 'delete', 'trace', 'accept', 'accept-charset', 'accept-encoding', 'accept-language', 'accept-ranges', 'age', 'allow', 'authorization', 'cache-control', 'connection', 'content-base', 'content-encoding', 'content-language', 'content-length', 'content-location', 'content-md5', 'content-range', 'content-type', 'date', 'etag', 'expect', 'expires', 'from', 'host', 'if-match', 'if-modified-since', 'if-none-match', 'if-range', 'if-unmodified-since', 'last-modified', 'location', 'max-forwards', 'pragma', 'proxy-authenticate', 'proxy-authorization', 'range', 'referer', 'retry-after', 'server', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'user-agent', 'vary', 'via', 'warning', 'www-authenticate', 'method', 'get', 'status', '200 OK', 'version', 'HTTP/1.1', 'url', 'public', 'set-cookie', 'keep-alive', 'origin']
_TAIL = (
    '100101201202205206300302303304305306307402405406407408409410411412413414415416417502504505203 Non-Au'
    'thoritative Information204 No Content301 Moved Permanently400 Bad Request401 Unauthorized403 Forbidd'
    'en404 Not Found500 Internal Server Error501 Not Implemented503 Service UnavailableJan Feb Mar Apr Ma'
    'y Jun Jul Aug Sept Oct Nov Dec 00:00:00 Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMTchunked,text/html,imag'
    'e/png,image/jpg,image/gif,application/xml,application/xhtml+xml,text/plain,text/javascript,publicpri'
    'vatemax-age=gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0.')
DICTIONARY = b"".join(struct.pack(">I", len(w)) + w.encode() for w in _WORDS) + _TAIL.encode()


@dataclass
class Frame:
    """A control frame (`kind` > 0) or a data frame (`kind` 0) of `stream`."""

    kind: int
    flags: int
    stream: int
    payload: bytes
    headers: dict[str, str] | None = None


class Codec:
    """Both directions of one SPDY session: `feed` bytes in, get frames; `encode_*` frames out."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._inflate = zlib.decompressobj(zdict=DICTIONARY)
        self._deflate = zlib.compressobj(zlib.Z_DEFAULT_COMPRESSION, zlib.DEFLATED, 15, 8,
                                         zlib.Z_DEFAULT_STRATEGY, zdict=DICTIONARY)

    def feed(self, data: bytes) -> list[Frame]:
        self._buffer += data
        frames = []
        while len(self._buffer) >= 8:
            first, second = struct.unpack(">II", self._buffer[:8])
            length = second & 0xFFFFFF
            if len(self._buffer) < 8 + length:
                break
            payload = bytes(self._buffer[8:8 + length])
            del self._buffer[:8 + length]
            flags = second >> 24
            if first & 0x80000000:
                kind = first & 0xFFFF
                frames.append(self._control(kind, flags, payload))
            else:
                frames.append(Frame(0, flags, first & 0x7FFFFFFF, payload))
        return frames

    def _control(self, kind: int, flags: int, payload: bytes) -> Frame:
        stream = struct.unpack(">I", payload[:4])[0] & 0x7FFFFFFF if len(payload) >= 4 else 0
        headers = None
        if kind == SYN_STREAM:
            headers = self._headers(payload[10:])
        elif kind in (SYN_REPLY, HEADERS):
            headers = self._headers(payload[4:])
        return Frame(kind, flags, stream, payload, headers)

    def _headers(self, block: bytes) -> dict[str, str]:
        raw = self._inflate.decompress(block)
        count = struct.unpack(">I", raw[:4])[0]
        at, out = 4, {}
        for _ in range(count):
            size = struct.unpack(">I", raw[at:at + 4])[0]
            name = raw[at + 4:at + 4 + size].decode()
            at += 4 + size
            size = struct.unpack(">I", raw[at:at + 4])[0]
            out[name.lower()] = raw[at + 4:at + 4 + size].decode()
            at += 4 + size
        return out

    def _block(self, headers: dict[str, str]) -> bytes:
        raw = struct.pack(">I", len(headers)) + b"".join(
            struct.pack(">I", len(k)) + k.encode() + struct.pack(">I", len(v)) + v.encode()
            for k, v in headers.items())
        return self._deflate.compress(raw) + self._deflate.flush(zlib.Z_SYNC_FLUSH)

    @staticmethod
    def control(kind: int, flags: int, payload: bytes) -> bytes:
        return struct.pack(">HHI", 0x8000 | VERSION, kind, (flags << 24) | len(payload)) + payload

    def syn_reply(self, stream: int, headers: dict[str, str] | None = None, fin: bool = False) -> bytes:
        return self.control(SYN_REPLY, FLAG_FIN if fin else 0,
                            struct.pack(">I", stream) + self._block(headers or {}))

    @staticmethod
    def data(stream: int, payload: bytes, fin: bool = False) -> bytes:
        return struct.pack(">II", stream & 0x7FFFFFFF, ((FLAG_FIN if fin else 0) << 24) | len(payload)) + payload

    @classmethod
    def rst(cls, stream: int, status: int = 5) -> bytes:
        return cls.control(RST_STREAM, 0, struct.pack(">II", stream, status))

    @classmethod
    def ping(cls, payload: bytes) -> bytes:
        return cls.control(PING, 0, payload)

    @classmethod
    def goaway(cls, last: int) -> bytes:
        return cls.control(GOAWAY, 0, struct.pack(">II", last, 0))
