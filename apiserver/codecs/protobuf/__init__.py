"""Kubernetes protobuf wire format (``application/vnd.kubernetes.protobuf``) for built-in kinds.

Objects are exchanged in their JSON form (the dicts the JSON codec produces); the field table comes from
upstream ``generated.proto`` files via ``generate.py`` (see ``messages.json``).

    decode(data) -> dict                       # k8s\\x00 envelope -> JSON form with kind/apiVersion
    encode(obj) -> bytes                       # JSON form -> k8s\\x00 envelope
    encode_list(api_version, list_kind, items, metadata) -> bytes
    encode_watch_event(event_type, obj) -> bytes          # one length-prefixed watch frame
    decode_watch_stream(data) -> list[dict]               # {"type", "object"} per frame
    supports(api_version, kind) -> bool
    bad_request_status(err) -> dict                       # the 400 Status for a ProtobufError

Every malformed input raises ``ProtobufError`` (a ``ValueError``); answer it with a 400 Status.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from typing import Any

from .decode import decode_object, decode_struct
from .encode import encode_object
from .envelope import CONTENT_TYPE, MAGIC, WATCH_CONTENT_TYPE, frame, split_frames
from .errors import ProtobufError
from .messages import table
from .wire import append_len

__all__ = ["CONTENT_TYPE", "MAGIC", "WATCH_CONTENT_TYPE", "ProtobufError", "WatchStreamDecoder",
           "bad_request_status", "decode",
           "decode_watch_event", "decode_watch_stream", "encode", "encode_list", "encode_watch_event",
           "supports"]

_WATCH_EVENT = "meta.v1.WatchEvent"


def _guard(fn: Any, *args: Any) -> Any:
    """Run a codec step so that nothing but ProtobufError escapes."""
    try:
        return fn(*args)
    except ProtobufError:
        raise
    except RecursionError:
        raise ProtobufError("object nesting is too deep") from None
    except UnicodeError:
        raise ProtobufError("string is not valid UTF-8") from None
    except (ValueError, TypeError, KeyError, IndexError, OverflowError, struct.error) as e:
        raise ProtobufError(f"malformed protobuf data: {e}") from None


def _bytes(data: Any) -> bytes:
    if isinstance(data, bytes):
        return data
    if isinstance(data, bytearray | memoryview):
        return bytes(data)
    raise ProtobufError(f"expected bytes, got {type(data).__name__}")


def decode(data: bytes) -> dict[str, Any]:
    """Decode a protobuf request/response body into the object's JSON form."""
    return _guard(decode_object, _bytes(data))


def encode(obj: dict[str, Any]) -> bytes:
    """Encode an object given in its JSON form (apiVersion and kind set) as a protobuf body."""
    return _guard(encode_object, obj)


def encode_list(api_version: str, list_kind: str, items: Iterable[dict[str, Any]],
                metadata: dict[str, Any] | None = None) -> bytes:
    """Encode a list kind (``ConfigMapList``) from its items' JSON forms and list metadata."""
    return encode({"apiVersion": api_version, "kind": list_kind, "metadata": metadata or {},
                   "items": list(items)})


def _watch_event(event_type: str, obj: dict[str, Any]) -> bytes:
    if not isinstance(event_type, str):
        raise ProtobufError("watch event type must be a string")
    raw = bytearray()
    append_len(raw, b"\x0a", encode_object(obj))
    ev = bytearray()
    append_len(ev, b"\x0a", event_type.encode("utf-8"))
    append_len(ev, b"\x12", raw)
    return frame(ev)


def encode_watch_event(event_type: str, obj: dict[str, Any]) -> bytes:
    """One watch frame: 4-byte big-endian length + WatchEvent{type, object: raw k8s\\x00 envelope}."""
    return _guard(_watch_event, event_type, obj)


def _watch_frame(buf: bytes, start: int, stop: int) -> dict[str, Any]:
    ev = decode_struct(table().message(_WATCH_EVENT), buf, start, stop, 0)
    if not ev.get("type"):
        raise ProtobufError("watch event has no type")
    return ev


def decode_watch_event(payload: bytes) -> dict[str, Any]:
    """Decode one frame's payload (without its length prefix) into ``{"type", "object"}``."""
    buf = _bytes(payload)
    return _guard(_watch_frame, buf, 0, len(buf))


def decode_watch_stream(data: bytes) -> list[dict[str, Any]]:
    """Decode a complete protobuf watch stream (length-prefixed frames) into its events."""
    buf = _bytes(data)
    spans, used = split_frames(buf)
    if used != len(buf):
        raise ProtobufError(f"watch stream ends inside a frame ({len(buf) - used} bytes left over)")
    return [_guard(_watch_frame, buf, s, e) for s, e in spans]


class WatchStreamDecoder:
    """Incremental watch-stream decoder: ``feed`` bytes as they arrive, get the whole events back."""

    def __init__(self) -> None:
        self._buf = bytearray()

    def feed(self, chunk: bytes) -> list[dict[str, Any]]:
        """Add ``chunk``; return the events completed by it."""
        self._buf += _bytes(chunk)
        data = bytes(self._buf)
        spans, used = split_frames(data)
        del self._buf[:used]
        return [_guard(_watch_frame, data, s, e) for s, e in spans]

    @property
    def pending(self) -> int:
        """Bytes received that do not yet form a whole frame."""
        return len(self._buf)


def bad_request_status(error: ProtobufError) -> dict[str, Any]:
    """The 400 ``Status`` (JSON form) to answer a body that failed to decode."""
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": f"the body of the request was in an unknown format or could not be decoded: {error}",
            "reason": "BadRequest", "code": 400}


def supports(api_version: str, kind: str) -> bool:
    """Whether ``kind`` in ``api_version`` can be encoded and decoded as protobuf."""
    try:
        return table().lookup(api_version, kind) is not None
    except (KeyError, TypeError, AttributeError):
        return False
