"""Protobuf wire primitives: varints, keys, length-delimited fields, skipping unknown fields."""

from __future__ import annotations

from .errors import ProtobufError

VARINT, FIXED64, LEN, START_GROUP, END_GROUP, FIXED32 = 0, 1, 2, 3, 4, 5
_MASK64 = (1 << 64) - 1


def read_varint(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    """Decode an unsigned varint at ``pos``; return (value, next position)."""
    result = 0
    shift = 0
    while True:
        if pos >= end:
            raise ProtobufError("unexpected end of data in varint")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            if shift == 63 and b > 1:
                raise ProtobufError("integer overflow in varint")
            return result, pos
        shift += 7
        if shift > 63:
            raise ProtobufError("integer overflow in varint")


def read_len(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    """Read a length prefix at ``pos``; return (start, stop) of the payload, checked against ``end``."""
    b = buf[pos] if pos < end else 0x80
    if b < 0x80:
        pos += 1
        n = b
    else:
        n, pos = read_varint(buf, pos, end)
    stop = pos + n
    if stop > end:
        raise ProtobufError("unexpected end of data: length-delimited field runs past its message")
    return pos, stop


def skip_field(buf: bytes, pos: int, end: int, wire: int, num: int) -> int:
    """Skip the value of an unknown field; return the next position."""
    if wire == VARINT:
        return read_varint(buf, pos, end)[1]
    if wire == FIXED64:
        pos += 8
    elif wire == FIXED32:
        pos += 4
    elif wire == LEN:
        return read_len(buf, pos, end)[1]
    elif wire == START_GROUP:
        while True:
            if pos >= end:
                raise ProtobufError("unexpected end of data in group")
            key, pos = read_varint(buf, pos, end)
            if key & 7 == END_GROUP:
                if key >> 3 != num:
                    raise ProtobufError("mismatched end of group")
                return pos
            pos = skip_field(buf, pos, end, key & 7, key >> 3)
    else:
        raise ProtobufError(f"illegal wire type {wire} for field {num}")
    if pos > end:
        raise ProtobufError("unexpected end of data in fixed-size field")
    return pos


def to_int64(v: int) -> int:
    """Interpret an unsigned 64-bit varint value as a signed int64."""
    return v - (1 << 64) if v >= 1 << 63 else v


def to_int32(v: int) -> int:
    """Interpret a varint value as Go does for int32 (keep the low 32 bits, signed)."""
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >= 1 << 31 else v


def varint(value: int) -> bytes:
    """Encode ``value`` (negative numbers as 64-bit two's complement) as a varint."""
    if 0 <= value < 0x80:
        return _SMALL[value]
    value &= _MASK64
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


_SMALL = [bytes((i,)) for i in range(0x80)]


def key(num: int, wire: int) -> bytes:
    """The encoded key (tag) of field ``num`` with wire type ``wire``."""
    return varint((num << 3) | wire)


def append_len(out: bytearray, tag: bytes, payload: bytes | bytearray) -> None:
    """Append ``tag``, the varint length of ``payload``, then ``payload``."""
    out += tag
    n = len(payload)
    if n < 0x80:
        out.append(n)
    else:
        out += varint(n)
    out += payload
