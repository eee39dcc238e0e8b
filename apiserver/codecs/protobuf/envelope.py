"""The ``k8s\\x00`` + ``runtime.Unknown`` envelope and watch-stream framing, at the wire level."""

from __future__ import annotations

import struct

from .errors import ProtobufError
from .wire import LEN, append_len, read_len, read_varint, skip_field

MAGIC = b"k8s\x00"
CONTENT_TYPE = "application/vnd.kubernetes.protobuf"
WATCH_CONTENT_TYPE = "application/vnd.kubernetes.protobuf;stream=watch"
_TRAILER = b"\x1a\x00\x22\x00"  # empty contentEncoding and contentType, as the real server writes them


def _fields(buf: bytes, pos: int, end: int) -> dict[int, tuple[int, int]]:
    """Collect the length-delimited fields 1..4 of a small message (last occurrence wins)."""
    out: dict[int, tuple[int, int]] = {}
    while pos < end:
        k, pos = read_varint(buf, pos, end)
        num, wire = k >> 3, k & 7
        if num == 0:
            raise ProtobufError("illegal field number 0 in envelope")
        if 1 <= num <= 4:
            if wire != LEN:
                raise ProtobufError(f"wrong wire type {wire} for envelope field {num}")
            out[num] = s = read_len(buf, pos, end)
            pos = s[1]
        else:
            pos = skip_field(buf, pos, end, wire, num)
    return out


def _text(buf: bytes, span: tuple[int, int] | None, what: str) -> str:
    if span is None:
        return ""
    try:
        return buf[span[0]:span[1]].decode("utf-8")
    except UnicodeDecodeError:
        raise ProtobufError(f"envelope {what} is not valid UTF-8") from None


def parse_unknown(buf: bytes, pos: int = 0, end: int | None = None) -> tuple[str, str, int, int]:
    """Check the magic and parse the Unknown envelope: (apiVersion, kind, raw start, raw stop)."""
    end = len(buf) if end is None else end
    if end <= pos:
        raise ProtobufError("empty data: expected a protobuf message with the k8s\\x00 prefix")
    if buf[pos:pos + 4] != MAGIC:
        raise ProtobufError("provided data does not appear to be a protobuf message, "
                            "expected prefix [107 56 115 0]")
    if end == pos + 4:
        raise ProtobufError("empty body: nothing follows the k8s\\x00 prefix")
    unk = _fields(buf, pos + 4, end)
    tm = unk.get(1)
    meta = _fields(buf, *tm) if tm else {}
    api_version, kind = _text(buf, meta.get(1), "apiVersion"), _text(buf, meta.get(2), "kind")
    encoding, ctype = _text(buf, unk.get(3), "contentEncoding"), _text(buf, unk.get(4), "contentType")
    if not kind:
        raise ProtobufError("Object 'Kind' is missing in the protobuf envelope")
    if not api_version:
        raise ProtobufError("Object 'apiVersion' is missing in the protobuf envelope")
    if encoding:
        raise ProtobufError(f"unsupported contentEncoding {encoding!r} in the protobuf envelope")
    if ctype not in ("", CONTENT_TYPE):
        raise ProtobufError(f"unsupported contentType {ctype!r} in the protobuf envelope")
    raw = unk.get(2, (end, end))
    return api_version, kind, raw[0], raw[1]


def wrap_unknown(api_version: str, kind: str, body: bytes | bytearray) -> bytes:
    """``k8s\\x00`` + Unknown{typeMeta{apiVersion, kind}, raw: body, contentEncoding: "", contentType: ""}."""
    tm = bytearray()
    append_len(tm, b"\x0a", api_version.encode())
    append_len(tm, b"\x12", kind.encode())
    out = bytearray(MAGIC)
    append_len(out, b"\x0a", tm)
    append_len(out, b"\x12", body)
    out += _TRAILER
    return bytes(out)


def frame(payload: bytes | bytearray) -> bytes:
    """One watch-stream frame: a 4-byte big-endian length, then the payload."""
    return struct.pack(">I", len(payload)) + payload


def split_frames(data: bytes) -> tuple[list[tuple[int, int]], int]:
    """The (start, stop) spans of the whole frames in ``data`` and the length consumed."""
    spans = []
    pos, n = 0, len(data)
    while pos + 4 <= n:
        size = int.from_bytes(data[pos:pos + 4], "big")
        if pos + 4 + size > n:
            break
        spans.append((pos + 4, pos + 4 + size))
        pos += 4 + size
    return spans, pos
