"""The JSON form of an object -> protobuf bytes, field by field as Go's generated marshallers write them.

Go writes non-pointer scalars and structs even when zero, pointers only when set, repeated fields per
element, and maps sorted by key; following that makes our bytes equal the real server's.
"""

from __future__ import annotations

import binascii
import struct
from base64 import b64decode
from typing import Any

from . import special as sp
from .envelope import wrap_unknown
from .errors import ProtobufError
from .messages import (
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
from .wire import append_len, varint

MAX_DEPTH = 150
_ZERO_SCALAR = {STRING: b"\x00", BOOL: b"\x00", INT32: b"\x00", INT64: b"\x00", DOUBLE: bytes(8)}
_pack_double = struct.Struct("<d").pack
_INT_RANGE = {INT32: (-(1 << 31), (1 << 31) - 1), INT64: (-(1 << 63), (1 << 63) - 1)}


def _type_name(v: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
        type(v), "number" if isinstance(v, int | float) else type(v).__name__)


def _int(f: Field, v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        if isinstance(v, float) and v.is_integer():
            v = int(v)
        else:
            raise ProtobufError(f"expected an integer, got {_type_name(v)}")
    lo, hi = _INT_RANGE[f.kind]
    if not lo <= v <= hi:
        raise ProtobufError(f"integer {v} out of range for {'int32' if f.kind == INT32 else 'int64'}")
    return v


def _emit(out: bytearray, f: Field, v: Any, depth: int) -> None:
    """Append one occurrence of field ``f`` with JSON value ``v``."""
    k = f.kind
    if k == STRING:
        if not isinstance(v, str):
            raise ProtobufError(f"expected a string, got {_type_name(v)}")
        append_len(out, f.tag, v.encode("utf-8"))
    elif k == MESSAGE:
        append_len(out, f.tag, encode_struct(f.nested(), {} if v is None else v, depth + 1))
    elif k in (INT32, INT64):
        out += f.tag
        out += varint(_int(f, v))
    elif k == BOOL:
        if not isinstance(v, bool):
            raise ProtobufError(f"expected a boolean, got {_type_name(v)}")
        out += f.tag
        out.append(1 if v else 0)
    elif k == BYTES:
        if not isinstance(v, str):
            raise ProtobufError(f"expected a base64 string, got {_type_name(v)}")
        try:
            append_len(out, f.tag, b64decode(v, validate=True))
        except (binascii.Error, ValueError):
            raise ProtobufError("illegal base64 data") from None
    elif k == SPECIAL_KIND:
        append_len(out, f.tag, encode_special(f.nested(), v, depth + 1))
    elif k == WRAPPER:
        if v is None:
            v = []
        if not isinstance(v, list):
            raise ProtobufError(f"expected an array, got {_type_name(v)}")
        append_len(out, f.tag, encode_struct(f.nested(), {"items": v}, depth + 1))
    else:  # DOUBLE
        if isinstance(v, bool) or not isinstance(v, int | float):
            raise ProtobufError(f"expected a number, got {_type_name(v)}")
        out += f.tag
        out += _pack_double(float(v))


def _map_entry(f: Field, key: str, v: Any, depth: int) -> bytearray:
    if not isinstance(key, str):
        raise ProtobufError(f"map key {key!r} is not a string")
    entry = bytearray()
    append_len(entry, b"\x0a", key.encode("utf-8"))
    if v is None and f.kind in (STRING, BYTES):
        if f.kind == STRING:
            entry += b"\x12\x00"
        return entry
    _emit(entry, f.entry_value(), v, depth)
    return entry


def encode_struct(msg: Message, obj: Any, depth: int) -> bytearray:
    """Encode the JSON object ``obj`` as the body of message ``msg``."""
    if depth > MAX_DEPTH:
        raise ProtobufError("object nesting is too deep")
    if not isinstance(obj, dict):
        raise ProtobufError(f"expected an object, got {_type_name(obj)}")
    out = bytearray()
    f: Field | None = None
    try:
        for f in msg.enc_fields:
            v = obj if f.inline else obj.get(f.name)
            if v is None:
                if f.nilable:
                    continue
                if f.message is None:
                    out += f.tag
                    out += _ZERO_SCALAR[f.kind]
                    continue
            if f.repeated:
                if not isinstance(v, list):
                    raise ProtobufError(f"expected an array, got {_type_name(v)}")
                for item in v:
                    _emit(out, f, item, depth)
            elif f.is_map:
                if not isinstance(v, dict):
                    raise ProtobufError(f"expected an object, got {_type_name(v)}")
                for key in sorted(v):
                    append_len(out, f.tag, _map_entry(f, key, v[key], depth))
            else:
                _emit(out, f, v, depth)
    except ProtobufError as e:
        raise e.within(f.name if f else "") from None
    except UnicodeEncodeError:
        raise ProtobufError("string is not valid Unicode", (f.name,) if f and f.name else ()) from None
    return out


def _time_body(seconds: int, nanos: int) -> bytes:
    return b"\x08" + varint(seconds) + b"\x10" + varint(nanos)


def encode_special(msg: Message, v: Any, depth: int) -> bytes | bytearray:
    """The message body of a special type (see special.py) from its JSON value ``v``."""
    code = msg.special
    if code in (sp.TIME, sp.MICROTIME):
        if v is None:
            return b""
        secs, nanos = sp.parse_time(v)
        if secs == sp.ZERO_TIME_SECONDS and (code == sp.TIME or nanos < 1000):
            return b""
        return _time_body(secs, 0 if code == sp.TIME else nanos // 1000 * 1000)
    if code == sp.QUANTITY:
        text = "0" if v is None else sp.quantity_text(v)
        return b"\x0a" + varint(len(text)) + text.encode("ascii")
    if code == sp.INTORSTRING:
        if v is None:
            v = 0
        if isinstance(v, str):
            data = v.encode("utf-8")
            return b"\x08\x01\x10\x00\x1a" + varint(len(data)) + data
        if isinstance(v, bool) or not isinstance(v, int) or not -(1 << 31) <= v < 1 << 31:
            raise ProtobufError(f"expected an int32 or a string, got {v!r}")
        return b"\x08\x00\x10" + varint(v) + b"\x1a\x00"
    if code == sp.DURATION:
        return b"\x08" + varint(0 if v is None else sp.parse_duration(v))
    if code in (sp.RAWEXT, sp.RAWJSON):
        if v is None:
            return b""
        try:
            raw = sp.dump_json(v)
        except (TypeError, ValueError) as e:
            raise ProtobufError(f"cannot embed value as JSON: {e}") from None
        return b"\x0a" + varint(len(raw)) + raw
    d: dict[str, Any]
    if code == sp.ORARRAY:
        d = {} if v is None else {"JSONSchemas": v} if isinstance(v, list) else {"Schema": v}
    elif code == sp.ORBOOL:
        d = {"Allows": v} if isinstance(v, bool) or v is None else {"Allows": True, "Schema": v}
        d["Allows"] = bool(d["Allows"])
    elif code == sp.ORSTRARRAY:
        d = {} if v is None else {"Property": v} if isinstance(v, list) else {"Schema": v}
    else:  # pragma: no cover
        raise ProtobufError(f"no encoder for special type {code}")
    return encode_struct(msg, d, depth)


def encode_object(obj: Any) -> bytes:
    """Encode an object in its JSON form (with apiVersion and kind) into a ``k8s\\x00`` envelope."""
    if not isinstance(obj, dict):
        raise ProtobufError(f"expected an object, got {_type_name(obj)}")
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if not isinstance(api_version, str) or not api_version or not isinstance(kind, str) or not kind:
        raise ProtobufError("object has no apiVersion or kind")
    msg = table().lookup(api_version, kind)
    if msg is None:
        raise ProtobufError(f'no kind "{kind}" is registered for version "{api_version}" '
                            "in the protobuf codec")
    return wrap_unknown(api_version, kind, encode_struct(msg, obj, 0))
