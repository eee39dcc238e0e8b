"""Malformed input: truncated, garbled, wrong magic, unknown kind, wrong envelope -> ProtobufError only."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mini_kube.apiserver.codecs.protobuf import (
    ProtobufError,
    bad_request_status,
    decode,
    decode_watch_stream,
    encode,
)
from mini_kube.apiserver.codecs.protobuf.envelope import MAGIC, parse_unknown, wrap_unknown
from mini_kube.apiserver.codecs.protobuf.wire import LEN, VARINT, append_len, key, varint

from tests.protobuf.reference_vectors import VECTORS, vector_names


def ld(num: int, payload: bytes) -> bytes:
    """A length-delimited field."""
    out = bytearray()
    append_len(out, key(num, LEN), payload)
    return bytes(out)


def envelope(api_version: bytes, kind: bytes, raw: bytes, tail: bytes = b"\x1a\x00\x22\x00") -> bytes:
    """A hand-built k8s envelope."""
    return MAGIC + ld(1, ld(1, api_version) + ld(2, kind)) + ld(2, raw) + tail


def decode_or_error(data: bytes) -> None:
    """decode() must either return an object or raise ProtobufError; anything else fails the test."""
    try:
        out = decode(data)
    except ProtobufError as e:
        assert str(e)
    else:
        assert isinstance(out, dict) and out["kind"]


def _all_vectors() -> list[tuple[str, bytes]]:
    return [(n, (VECTORS / f"{n}.pb").read_bytes()) for n in vector_names()]


@pytest.mark.parametrize("name", vector_names() or ["<no vectors>"])
def test_every_truncation_raises_protobuf_error(vectors: Path, name: str) -> None:
    data = (vectors / f"{name}.pb").read_bytes()
    _, _, raw_start, raw_end = parse_unknown(data)
    raw_key = raw_start - 1 - len(varint(raw_end - raw_start))
    for n in range(len(data)):
        if n < raw_key or raw_key < n < raw_end:
            with pytest.raises(ProtobufError):
                decode(data[:n])
        else:  # cut between envelope fields: Go also accepts it (no raw = an empty object)
            decode_or_error(data[:n])


@pytest.mark.parametrize("name", ["configmap", "status-404", "namespace", "scale", "lease"])
def test_every_single_bit_flip_is_handled(vectors: Path, name: str) -> None:
    data = bytearray((vectors / f"{name}.pb").read_bytes())
    for i in range(len(data)):
        for bit in range(8):
            data[i] ^= 1 << bit
            decode_or_error(bytes(data))
            data[i] ^= 1 << bit


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_corruption_of_any_vector(data: st.DataObject) -> None:
    vecs = _all_vectors()
    if not vecs:
        return
    _, pb = data.draw(st.sampled_from(vecs))
    buf = bytearray(pb)
    for _ in range(data.draw(st.integers(1, 8))):
        i = data.draw(st.integers(0, len(buf) - 1))
        buf[i] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(buf)))
    decode_or_error(bytes(buf[:cut]))


@given(st.binary(max_size=200))
def test_random_bodies_behind_a_valid_envelope(raw: bytes) -> None:
    for kind in (b"Pod", b"CustomResourceDefinition", b"Status"):
        api = b"apiextensions.k8s.io/v1" if kind == b"CustomResourceDefinition" else b"v1"
        decode_or_error(envelope(api, kind, raw))


@given(st.binary(max_size=64))
def test_random_bytes_are_rejected_or_decoded(junk: bytes) -> None:
    decode_or_error(junk)
    decode_or_error(MAGIC + junk)


def test_truncated_watch_stream_raises(vectors: Path) -> None:
    data = (vectors / "watch-configmaps.pb").read_bytes()
    for n in range(1, len(data)):
        with pytest.raises(ProtobufError):
            decode_watch_stream(data[:n])


@pytest.mark.parametrize(("data", "message"), [
    (b"", "empty data"),
    (MAGIC, "empty body"),
    (b'{"kind":"ConfigMap","apiVersion":"v1"}', "expected prefix"),
    (b"k8s\x01" + b"\x0a\x00", "expected prefix"),
    (MAGIC + b"\x1a\x00", "Kind' is missing"),
    (envelope(b"v1", b"", b""), "Kind' is missing"),
    (envelope(b"", b"ConfigMap", b""), "apiVersion' is missing"),
    (envelope(b"v1", b"Gadget", b""), 'no kind "Gadget" is registered for version "v1"'),
    (envelope(b"apps/v1", b"ConfigMap", b""), 'no kind "ConfigMap" is registered for version "apps/v1"'),
    (envelope(b"v1", b"ConfigMap", b"", b"\x1a\x04gzip\x22\x00"), "unsupported contentEncoding"),
    (envelope(b"v1", b"ConfigMap", b"", b"\x1a\x00\x22\x10application/json"), "unsupported contentType"),
    (MAGIC + b"\x08\x01", "wrong wire type 0 for envelope field 1"),
    (MAGIC + b"\x0a\x05\x0a\x02v1", "unexpected end of data"),
    (envelope(b"v1", b"ConfigMap", b"\x08\x01"), "wrong wire type 0 for field metadata"),
    (envelope(b"v1", b"ConfigMap", ld(1, ld(1, b"\xff\xfe"))), "metadata.name: string is not valid UTF-8"),
    (envelope(b"v1", b"ConfigMap", b"\x00\x00"), "illegal field number 0"),
    (envelope(b"v1", b"ConfigMap", b"\x80\x01"), "unexpected end of data in varint"),
    (envelope(b"v1", b"Pod", ld(2, b"\x20" + b"\xff" * 11)), "overflow"),
    (envelope(b"v1", b"ConfigMap", varint(100 << 3 | 7)), "illegal wire type 7"),
    (envelope(b"v1", b"ConfigMap", varint(100 << 3 | 3) + varint(101 << 3 | 4)), "mismatched end of group"),
    (envelope(b"v1", b"ConfigMap", b"\x0f"), "wrong wire type 7 for field metadata"),
    (envelope(b"v1", b"Service", ld(2, ld(1, ld(4, b"\x08\x02")))), "impossible IntOrString.Type 2"),
    (envelope(b"v1", b"ConfigMap", ld(1, ld(17, ld(7, ld(1, b"{not json"))))), "embedded raw JSON"),
    (envelope(b"v1", b"Pod", ld(2, ld(2, ld(8, ld(1, ld(1, b"cpu") + ld(2, ld(1, b"lots"))))))), "quantities must match"),
])
def test_malformed_input_messages(data: bytes, message: str) -> None:
    with pytest.raises(ProtobufError, match=message.replace("(", r"\(")):
        decode(data)


def test_non_bytes_input_is_rejected() -> None:
    with pytest.raises(ProtobufError, match="expected bytes"):
        decode("k8s\x00")  # type: ignore[arg-type]
    assert decode(bytearray(encode({"apiVersion": "v1", "kind": "Namespace", "metadata": {}})))["kind"]


def test_deep_nesting_is_an_error_not_a_crash() -> None:
    props = b""
    for _ in range(2000):  # JSONSchemaProps.not (field 28) nested far beyond any real schema
        props = ld(28, props)
    crd = ld(2, ld(4, ld(4, ld(1, props))))  # spec.versions[0].schema.openAPIV3Schema... roughly
    with pytest.raises(ProtobufError):
        decode(envelope(b"apiextensions.k8s.io/v1", b"CustomResourceDefinition", crd))
    deep: dict = {}
    node = deep
    for _ in range(2000):
        node["not"] = {}
        node = node["not"]
    obj = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {},
           "spec": {"versions": [{"name": "v1", "schema": {"openAPIV3Schema": deep}}]}}
    with pytest.raises(ProtobufError, match="too deep"):
        encode(obj)


def test_wrong_envelope_wire_types_and_magic_only() -> None:
    with pytest.raises(ProtobufError):
        decode(MAGIC + bytes([key(2, VARINT)[0]]) + varint(5))
    good = wrap_unknown("v1", "Namespace", b"")
    assert decode(good) == decode(encode({"apiVersion": "v1", "kind": "Namespace"}))


def test_bad_request_status_round_trips_as_protobuf() -> None:
    try:
        decode(envelope(b"v1", b"Gadget", b""))
    except ProtobufError as e:
        status = bad_request_status(e)
    assert status["code"] == 400 and status["reason"] == "BadRequest" and "Gadget" in status["message"]
    assert decode(encode(status)) == status
