"""Protobuf bytes -> the JSON form the real API server shows (Go encoding/json rules, omitempty, null)."""

from __future__ import annotations

import math
import struct
from base64 import b64encode
from typing import Any

from mini_kube.machinery.duration import format_go_duration

from . import special as sp
from .envelope import MAGIC, parse_unknown
from .errors import ProtobufError
from .messages import (
    ABSENT_NULL,
    ABSENT_SKIP,
    ABSENT_ZERO_MESSAGE,
    ABSENT_ZERO_SCALAR,
    BOOL,
    BYTES,
    DOUBLE,
    INT32,
    INT64,
    MESSAGE,
    SPECIAL_KIND,
    STRING,
    WRAPPER,
    Field,
    Message,
    table,
)
from .wire import FIXED64, LEN, VARINT, read_len, read_varint, skip_field, to_int32, to_int64

MAX_DEPTH = 150
_ZERO: dict[int, Any] = {STRING: "", BOOL: False, INT32: 0, INT64: 0, DOUBLE: 0}
_unpack_double = struct.Struct("<d").unpack_from


def _collect(msg: Message, buf: bytes, pos: int, end: int) -> dict[int, list]:
    """Read every field occurrence: varints as ints, doubles as floats, LEN values as (start, stop)."""
    vals: dict[int, list] = {}
    by_num = msg.by_num
    while pos < end:
        b = buf[pos]
        if b < 0x80:
            k = b
            pos += 1
        else:
            k, pos = read_varint(buf, pos, end)
        num, wire = k >> 3, k & 7
        f = by_num.get(num)
        if f is None:
            if num == 0:
                raise ProtobufError("illegal field number 0")
            pos = skip_field(buf, pos, end, wire, num)
            continue
        if wire == LEN:
            span = read_len(buf, pos, end)
            pos = span[1]
            if f.wire != LEN:
                if not f.repeated:
                    raise ProtobufError(f"wrong wire type {wire} for field {f.name or num}")
                vals.setdefault(num, []).extend(_unpack_packed(f, buf, *span))
                continue
            v: Any = span
        elif wire == VARINT and f.wire == VARINT:
            b = buf[pos] if pos < end else 0x80
            if b < 0x80:
                v = b
                pos += 1
            else:
                v, pos = read_varint(buf, pos, end)
        elif wire == FIXED64 and f.wire == FIXED64:
            if pos + 8 > end:
                raise ProtobufError("unexpected end of data in double")
            v = _unpack_double(buf, pos)[0]
            pos += 8
        else:
            raise ProtobufError(f"wrong wire type {wire} for field {f.name or num}")
        lst = vals.get(num)
        if lst is None:
            vals[num] = [v]
        else:
            lst.append(v)
    return vals


def _unpack_packed(f: Field, buf: bytes, pos: int, end: int) -> list:
    out: list = []
    if f.wire == VARINT:
        while pos < end:
            v, pos = read_varint(buf, pos, end)
            out.append(v)
    else:
        if (end - pos) % 8:
            raise ProtobufError(f"packed doubles of field {f.name} have a bad length")
        out.extend(_unpack_double(buf, p)[0] for p in range(pos, end, 8))
    return out


def _double(v: float) -> float | int:
    if not math.isfinite(v):
        raise ProtobufError(f"unsupported value: {v} (JSON has no NaN or Infinity)")
    return int(v) if v.is_integer() and abs(v) < 1e21 else v


def _value(f: Field, occ: Any, buf: bytes, depth: int) -> Any:
    """The JSON value of one occurrence of field ``f``."""
    k = f.kind
    if k == STRING:
        return buf[occ[0]:occ[1]].decode("utf-8")
    if k == MESSAGE:
        return decode_struct(f.nested(), buf, occ[0], occ[1], depth + 1)
    if k == INT32:
        return to_int32(occ)
    if k == INT64:
        return to_int64(occ)
    if k == BOOL:
        return occ != 0
    if k == BYTES:
        return b64encode(buf[occ[0]:occ[1]]).decode("ascii")
    if k == SPECIAL_KIND:
        return decode_special(f.nested(), buf, occ[0], occ[1], depth + 1)
    if k == WRAPPER:
        items = decode_struct(f.nested(), buf, occ[0], occ[1], depth + 1).get("items")
        return items if items is not None else []
    return _double(occ)


def _zero_message(f: Field, depth: int) -> Any:
    if f.kind == SPECIAL_KIND:
        return decode_special(f.nested(), b"", 0, 0, depth + 1)
    if f.kind == WRAPPER:
        return []
    return decode_struct(f.nested(), b"", 0, 0, depth + 1)


def _map(f: Field, occs: list, buf: bytes, depth: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    value_wire = f.entry_value().wire
    for s, e in occs:
        k: str = ""
        v: Any = None
        seen = False
        pos = s
        while pos < e:
            key, pos = read_varint(buf, pos, e)
            num, wire = key >> 3, key & 7
            if num == 1 and wire == LEN:
                a, pos = read_len(buf, pos, e)
                k = buf[a:pos].decode("utf-8")
            elif num == 2 and wire == value_wire:
                if wire == LEN:
                    v = read_len(buf, pos, e)
                    pos = v[1]
                else:
                    v, pos = read_varint(buf, pos, e)
                seen = True
            elif num == 0 or num in (1, 2):
                raise ProtobufError(f"bad map entry in field {f.name}")
            else:
                pos = skip_field(buf, pos, e, wire, num)
        if seen:
            out[k] = _value(f, v, buf, depth)
        elif f.kind in (MESSAGE, SPECIAL_KIND, WRAPPER):
            out[k] = _zero_message(f, depth)
        else:
            out[k] = _ZERO.get(f.kind, "")
    return out


def decode_struct(msg: Message, buf: bytes, pos: int, end: int, depth: int,
                  out: dict[str, Any] | None = None) -> dict[str, Any]:
    """Decode the message body ``buf[pos:end]`` into its JSON object."""
    if depth > MAX_DEPTH:
        raise ProtobufError("object nesting is too deep")
    vals = _collect(msg, buf, pos, end) if pos < end else {}
    if out is None:
        out = {}
    f: Field | None = None
    try:
        for f in msg.fields:
            occ = vals.get(f.num)
            if occ is None:
                a = f.absent
                if a == ABSENT_SKIP:
                    continue
                if a == ABSENT_NULL:
                    out[f.name] = None
                elif a == ABSENT_ZERO_MESSAGE:
                    out[f.name] = _zero_message(f, depth)
                elif a == ABSENT_ZERO_SCALAR:
                    out[f.name] = _ZERO[f.kind]
                else:
                    out.update(decode_struct(f.nested(), b"", 0, 0, depth + 1))
                continue
            if f.repeated:
                out[f.name] = [_value(f, o, buf, depth) for o in occ]
            elif f.is_map:
                out[f.name] = _map(f, occ, buf, depth)
            elif f.message is not None:
                if len(occ) > 1:  # a repeated singular message merges, as proto requires
                    joined = b"".join(buf[s:e] for s, e in occ)
                    v = _value(f, (0, len(joined)), joined, depth)
                else:
                    v = _value(f, occ[0], buf, depth)
                if f.inline:
                    out.update(v)
                elif v or not f.omitempty or f.kind != WRAPPER:  # an empty wrapper is an empty slice
                    out[f.name] = v
            else:
                v = _value(f, occ[-1], buf, depth)
                if v or f.pointer or not f.omitempty:
                    out[f.name] = v
    except ProtobufError as e:
        raise e.within(f.name if f else "") from None
    except UnicodeDecodeError:
        raise ProtobufError("string is not valid UTF-8", (f.name,) if f and f.name else ()) from None
    return out


def _fields_of(msg: Message, buf: bytes, pos: int, end: int) -> dict[int, Any]:
    """Last occurrence of each field of a small special message."""
    return {n: v[-1] for n, v in _collect(msg, buf, pos, end).items()} if pos < end else {}


def decode_special(msg: Message, buf: bytes, pos: int, end: int, depth: int) -> Any:
    """The JSON value of a special type (see special.py) whose message body is ``buf[pos:end]``."""
    code = msg.special
    if code in (sp.TIME, sp.MICROTIME):
        if pos == end:
            return None
        fv = _fields_of(msg, buf, pos, end)
        secs, nanos = to_int64(fv.get(1, 0)), to_int32(fv.get(2, 0))
        if secs == sp.ZERO_TIME_SECONDS and (code == sp.TIME or nanos < 1000):
            return None
        if code == sp.TIME:
            return sp.format_time(secs)
        if not 0 <= nanos < 1_000_000_000:
            raise ProtobufError(f"nanos out of range: {nanos}")
        return sp.format_micro_time(secs, nanos)
    if code == sp.QUANTITY:
        span = _fields_of(msg, buf, pos, end).get(1)
        return "0" if span is None else sp.check_quantity(buf[span[0]:span[1]].decode("utf-8"))
    if code == sp.INTORSTRING:
        fv = _fields_of(msg, buf, pos, end)
        typ = to_int64(fv.get(1, 0))
        if typ == 0:
            return to_int32(fv.get(2, 0))
        if typ == 1:
            span = fv.get(3, (0, 0))
            return buf[span[0]:span[1]].decode("utf-8")
        raise ProtobufError(f"impossible IntOrString.Type {typ}")
    if code == sp.DURATION:
        return format_go_duration(to_int64(_fields_of(msg, buf, pos, end).get(1, 0)))
    if code in (sp.RAWEXT, sp.RAWJSON):
        span = _fields_of(msg, buf, pos, end).get(1)
        if span is None or span[0] == span[1]:
            return None
        if code == sp.RAWEXT and buf[span[0]:span[0] + 4] == MAGIC:
            return decode_object(buf, span[0], span[1], depth + 1)
        return sp.load_json(buf[span[0]:span[1]])
    d = decode_struct(msg, buf, pos, end, depth)
    if code == sp.ORARRAY:
        return d.get("JSONSchemas") or d.get("Schema")
    if code == sp.ORBOOL:
        return d["Schema"] if d.get("Schema") is not None else bool(d.get("Allows"))
    if code == sp.ORSTRARRAY:
        return d.get("Property") or d.get("Schema")
    raise ProtobufError(f"no decoder for special type {code}")  # pragma: no cover


def decode_object(buf: bytes, pos: int = 0, end: int | None = None, depth: int = 0) -> dict[str, Any]:
    """Decode a ``k8s\\x00`` envelope into the object's JSON form (kind and apiVersion first)."""
    api_version, kind, s, e = parse_unknown(buf, pos, end)
    msg = table().lookup(api_version, kind)
    if msg is None:
        raise ProtobufError(f'no kind "{kind}" is registered for version "{api_version}" '
                            "in the protobuf codec")
    return decode_struct(msg, buf, s, e, depth, {"kind": kind, "apiVersion": api_version})
