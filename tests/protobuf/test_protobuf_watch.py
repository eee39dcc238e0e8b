"""Protobuf watch streams: 4-byte big-endian length frames holding WatchEvent{type, object: raw envelope}."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest
from mini_kube.apiserver.codecs.protobuf import (
    WATCH_CONTENT_TYPE,
    ProtobufError,
    WatchStreamDecoder,
    decode,
    decode_watch_event,
    decode_watch_stream,
    encode,
    encode_watch_event,
)


def reference(vectors: Path) -> tuple[bytes, list[dict]]:
    """The captured protobuf stream and the JSON events of the same watch."""
    pb = (vectors / "watch-configmaps.pb").read_bytes()
    lines = (vectors / "watch-configmaps.json").read_text().splitlines()
    return pb, [json.loads(line) for line in lines if line.strip()]


def test_reference_stream_decodes_to_its_json_twin(vectors: Path) -> None:
    pb, events = reference(vectors)
    assert decode_watch_stream(pb) == events


def test_encoding_the_json_events_gives_the_captured_bytes(vectors: Path) -> None:
    pb, events = reference(vectors)
    assert b"".join(encode_watch_event(e["type"], e["object"]) for e in events) == pb


def test_frame_layout(vectors: Path) -> None:
    pb, events = reference(vectors)
    frame = encode_watch_event(events[0]["type"], events[0]["object"])
    (size,) = struct.unpack(">I", frame[:4])
    assert size == len(frame) - 4
    payload = frame[4:]
    assert payload.startswith(b"\x0a\x05ADDED\x12")
    assert encode(events[0]["object"]) in payload          # object.raw is the plain k8s envelope
    assert decode_watch_event(payload) == events[0]


def test_incremental_decoder_handles_any_split(vectors: Path) -> None:
    pb, events = reference(vectors)
    extra = {"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "c2", "resourceVersion": "9"}}
    stream = pb + encode_watch_event("DELETED", extra) + encode_watch_event(
        "BOOKMARK", {"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"resourceVersion": "10"}})
    for cut in range(0, len(stream), 7):
        dec = WatchStreamDecoder()
        got = dec.feed(stream[:cut]) + dec.feed(stream[cut:])
        assert [e["type"] for e in got] == ["ADDED", "DELETED", "BOOKMARK"]
        assert dec.pending == 0
    assert got[0] == events[0]
    assert got[2]["object"]["metadata"]["resourceVersion"] == "10"


def test_error_event_carries_a_status() -> None:
    status = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
              "message": "too old resource version: 1 (200)", "reason": "Expired", "code": 410}
    (event,) = decode_watch_stream(encode_watch_event("ERROR", status))
    assert event == {"type": "ERROR", "object": status}


def test_watch_errors() -> None:
    with pytest.raises(ProtobufError, match="ends inside a frame"):
        decode_watch_stream(b"\x00\x00\x00\x05ab")
    with pytest.raises(ProtobufError, match="no type"):
        decode_watch_stream(b"\x00\x00\x00\x00")
    with pytest.raises(ProtobufError):
        encode_watch_event("ADDED", {"kind": "Gadget", "apiVersion": "example.com/v1"})
    assert WATCH_CONTENT_TYPE == "application/vnd.kubernetes.protobuf;stream=watch"
    assert decode(encode({"kind": "Status", "apiVersion": "v1"}))["kind"] == "Status"
