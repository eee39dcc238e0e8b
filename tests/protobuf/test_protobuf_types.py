"""Special types and field shapes, encoded as upstream's Go marshallers do and decoded to the server's JSON."""

from __future__ import annotations

import pytest
from mini_kube.apiserver.codecs.protobuf import ProtobufError, decode, encode, encode_list, supports
from mini_kube.apiserver.codecs.protobuf import special as sp
from mini_kube.apiserver.codecs.protobuf.decode import decode_special
from mini_kube.apiserver.codecs.protobuf.encode import encode_special
from mini_kube.apiserver.codecs.protobuf.envelope import parse_unknown, wrap_unknown
from mini_kube.apiserver.codecs.protobuf.messages import table
from mini_kube.apiserver.codecs.protobuf.wire import LEN, append_len, key, varint
from mini_kube.machinery.duration import format_go_duration


def rt(obj: dict) -> dict:
    """decode(encode(obj))."""
    return decode(encode(obj))


def ld(num: int, payload: bytes) -> bytes:
    """A length-delimited field."""
    out = bytearray()
    append_len(out, key(num, LEN), payload)
    return bytes(out)


def body(data: bytes) -> bytes:
    """The message body inside a k8s envelope."""
    _, _, s, e = parse_unknown(data)
    return data[s:e]


META = {"name": "x", "namespace": "ns"}


def test_kind_and_api_version_come_first_from_the_envelope() -> None:
    out = rt({"metadata": {"name": "n"}, "apiVersion": "v1", "kind": "Namespace"})
    assert list(out)[:2] == ["kind", "apiVersion"]
    assert out["kind"] == "Namespace" and out["apiVersion"] == "v1"


def test_int_or_string_int_and_string_forms() -> None:
    svc = {"apiVersion": "v1", "kind": "Service", "metadata": META,
           "spec": {"ports": [{"name": "a", "port": 80, "targetPort": "http"},
                              {"name": "b", "port": 81, "targetPort": 8081}]}}
    data = encode(svc)
    assert b"\x08\x01\x10\x00\x1a\x04http" in data            # type=String, intVal=0, strVal
    assert b"\x08\x00\x10" + varint(8081) + b"\x1a\x00" in data           # type=Int, intVal=8081, strVal=""
    ports = decode(data)["spec"]["ports"]
    assert ports[0]["targetPort"] == "http" and ports[1]["targetPort"] == 8081
    dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": META,
           "spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 1}}}}
    assert rt(dep)["spec"]["strategy"]["rollingUpdate"] == {"maxSurge": "25%", "maxUnavailable": 1}


def test_negative_int32_uses_ten_byte_varint() -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": META, "spec": {"containers": [], "priority": -5}}
    data = encode(pod)
    assert b"\xc8\x01\xfb\xff\xff\xff\xff\xff\xff\xff\xff\x01" in data  # field 25, -5 as 64-bit varint
    assert rt(pod)["spec"]["priority"] == -5


def test_bytes_are_base64_in_json() -> None:
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": META, "type": "Opaque",
              "data": {"b": "AAECAwQ=", "empty": ""}}
    data = encode(secret)
    assert b"\x0a\x01b\x12\x05\x00\x01\x02\x03\x04" in data
    assert rt(secret)["data"] == {"b": "AAECAwQ=", "empty": ""}
    with pytest.raises(ProtobufError, match="data: illegal base64"):
        encode({**secret, "data": {"b": "not base64!"}})


def test_time_is_whole_seconds_rfc3339_and_microtime_keeps_six_digits() -> None:
    ns = {"apiVersion": "v1", "kind": "Namespace",
          "metadata": {"name": "n", "creationTimestamp": "2024-01-01T00:00:00.75+02:00"}}
    assert rt(ns)["metadata"]["creationTimestamp"] == "2023-12-31T22:00:00Z"   # UTC, nanos dropped like Go
    ev = {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": META,
          "eventTime": "2026-11-22T01:02:03.123456Z", "reportingController": "c", "reportingInstance": "i",
          "action": "a", "reason": "r", "type": "Normal"}
    assert rt(ev)["eventTime"] == "2026-11-22T01:02:03.123456Z"
    assert rt({**ev, "eventTime": "2026-11-22T01:02:03.1234569Z"})["eventTime"] == "2026-11-22T01:02:03.123456Z"
    assert rt({**ev, "eventTime": None})["eventTime"] is None   # non-pointer zero MicroTime is null
    with pytest.raises(ProtobufError, match="eventTime: invalid RFC 3339"):
        encode({**ev, "eventTime": "yesterday"})


def test_zero_time_in_template_metadata_is_null_and_written_empty() -> None:
    dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": META,
           "spec": {"template": {"metadata": {"creationTimestamp": None}, "spec": {"containers": []}}}}
    out = rt(dep)
    assert out["spec"]["template"]["metadata"]["creationTimestamp"] is None
    assert out["metadata"]["creationTimestamp"] is None
    assert out["status"] == {}


def test_time_map_values() -> None:
    pdb = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": META,
           "status": {"disruptedPods": {"p1": "2024-05-06T07:08:09Z"}, "disruptionsAllowed": 0,
                      "currentHealthy": 0, "desiredHealthy": 0, "expectedPods": 0}}
    assert rt(pdb)["status"]["disruptedPods"] == {"p1": "2024-05-06T07:08:09Z"}


@pytest.mark.parametrize(("ns", "text"), [
    (0, "0s"), (1, "1ns"), (1500, "1.5µs"), (1_000_000, "1ms"), (1_500_000_000, "1.5s"),
    (90 * 60 * 10**9, "1h30m0s"), (-(2 * 10**9), "-2s"), (3_600_000_000_000 + 1, "1h0m0.000000001s")])
def test_duration_format_and_parse_like_go(ns: int, text: str) -> None:
    assert format_go_duration(ns) == text
    assert sp.parse_duration(text) == ns


def test_duration_message_round_trip() -> None:
    msg = table().message("meta.v1.Duration")
    raw = bytes(encode_special(msg, "1m30s", 0))
    assert raw == b"\x08" + varint(90 * 10**9)
    assert decode_special(msg, raw, 0, len(raw), 0) == "1m30s"
    with pytest.raises(ProtobufError):
        encode_special(msg, "soon", 0)


def test_quantities() -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": META, "spec": {"containers": [
        {"name": "c", "resources": {"requests": {"cpu": "250m", "memory": "64Mi"}, "limits": {"cpu": 2}}}]}}
    res = rt(pod)["spec"]["containers"][0]["resources"]
    assert res == {"requests": {"cpu": "250m", "memory": "64Mi"}, "limits": {"cpu": "2"}}
    with pytest.raises(ProtobufError, match="quantities must match"):
        encode({**pod, "spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": "lots"}}}]}})
    # the codec checks quantities with the one parser the JSON path uses: an exponent past int32 is refused
    with pytest.raises(ProtobufError, match="unable to parse quantity's suffix"):
        encode({**pod, "spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": "1e2147483648"}}}]}})


def test_raw_extension_embeds_json_and_writes_compact_go_style_bytes() -> None:
    cr = {"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": META, "revision": 3,
          "data": {"spec": {"template": {"x": "<a&b>", "n": [1, 2.5, None, True]}}}}
    data = encode(cr)
    assert b'{"spec":{"template":{"x":"\\u003ca\\u0026b\\u003e","n":[1,2.5,null,true]}}}' in data
    assert rt(cr)["data"] == cr["data"]


def test_raw_extension_holding_a_protobuf_object_is_decoded() -> None:
    inner = encode({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"k": "v"}})
    out = decode(wrap_unknown("v1", "List", ld(1, b"") + ld(2, ld(1, inner))))
    assert out["items"][0]["kind"] == "ConfigMap" and out["items"][0]["data"] == {"k": "v"}


def test_pointer_scalars_keep_zero_values_and_plain_ones_follow_omitempty() -> None:
    dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": META,
           "spec": {"replicas": 0, "paused": False, "template": {"spec": {
               "containers": [], "automountServiceAccountToken": False, "hostNetwork": False}}}}
    spec = rt(dep)["spec"]
    assert spec["replicas"] == 0                                   # *int32 set to 0 stays
    assert "paused" not in spec                                     # bool,omitempty false is dropped
    assert spec["template"]["spec"]["automountServiceAccountToken"] is False
    assert "hostNetwork" not in spec["template"]["spec"]
    assert "revisionHistoryLimit" not in spec                       # unset pointer stays absent


def test_non_omitempty_nil_slices_and_maps_are_null() -> None:
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": META}
    out = rt(role)
    assert out["rules"] is None                                     # `json:"rules"` without omitempty
    rule = rt({**role, "rules": [{"apiGroups": [""], "resources": ["pods"]}]})["rules"][0]
    assert rule["verbs"] is None


def test_wrapper_types_are_plain_lists() -> None:
    sar = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "metadata": {},
           "spec": {"user": "u", "extra": {"scopes": ["a", "b"], "none": []},
                    "resourceAttributes": {"verb": "get", "resource": "pods"}}, "status": {"allowed": False}}
    assert rt(sar)["spec"]["extra"] == {"none": [], "scopes": ["a", "b"]}
    arl = {"apiVersion": "v1", "kind": "APIResourceList", "groupVersion": "v1",
           "resources": [{"name": "pods", "singularName": "pod", "namespaced": True, "kind": "Pod",
                          "verbs": ["get", "list"]}]}
    assert rt(arl)["resources"][0]["verbs"] == ["get", "list"]


def test_crd_schema_special_types() -> None:
    schema = {"type": "object", "additionalProperties": False,
              "properties": {
                  "a": {"type": "object", "additionalProperties": {"type": "string"}},
                  "b": {"type": "array", "items": {"type": "integer", "maximum": 1.5, "minimum": 0}},
                  "c": {"type": "array", "items": [{"type": "string"}, {"type": "integer"}]},
                  "d": {"type": "object", "x-kubernetes-preserve-unknown-fields": True,
                        "default": {"k": [1, "two"]}, "enum": [{"k": [1, "two"]}, "x", 3]}},
              "dependencies": {"a": ["b", "c"], "b": {"required": ["a"]}}}
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "gs.example.com"},
           "spec": {"group": "example.com", "scope": "Namespaced",
                    "names": {"plural": "gs", "singular": "g", "kind": "G", "listKind": "GList"},
                    "versions": [{"name": "v1", "served": True, "storage": True,
                                  "schema": {"openAPIV3Schema": schema}}]},
           "status": {"acceptedNames": {"plural": "", "kind": ""}, "storedVersions": []}}
    out = rt(crd)
    assert out["spec"]["versions"][0]["schema"]["openAPIV3Schema"] == schema
    assert out["status"]["storedVersions"] is None or out["status"]["storedVersions"] == []


def test_repeated_scalars_are_unpacked_and_packed_input_is_accepted() -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": META,
           "spec": {"containers": [], "securityContext": {"supplementalGroups": [1, 2, 300]}}}
    assert b"\x20\x01\x20\x02\x20\xac\x02" in encode(pod)     # proto2: one key per element
    packed = ld(1, ld(1, b"p")) + ld(2, ld(14, ld(4, b"\x01\x02\xac\x02")))
    out = decode(wrap_unknown("v1", "Pod", packed))
    assert out["spec"]["securityContext"]["supplementalGroups"] == [1, 2, 300]


def test_unknown_fields_are_skipped_and_repeated_singular_messages_merge() -> None:
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"k": "v"}}
    b = body(encode(cm))
    extra = b"\xf8\x3e\x05" + b"\xfa\x3e\x03abc" + b"\xf9\x3e" + bytes(8) + b"\xfd\x3e" + bytes(4)
    assert decode(wrap_unknown("v1", "ConfigMap", b + extra)) == rt(cm)
    more_meta = b"\x0a\x05\x1a\x03ns2"     # a second metadata occurrence: namespace=ns2 merges in
    out = decode(wrap_unknown("v1", "ConfigMap", b + more_meta))
    assert out["metadata"]["name"] == "c" and out["metadata"]["namespace"] == "ns2"


def test_meta_kinds_exist_in_every_group_version() -> None:
    for gv in ("v1", "meta.k8s.io/v1", "apps/v1", "batch/v1"):
        assert supports(gv, "DeleteOptions")
        opts = {"apiVersion": gv, "kind": "DeleteOptions", "propagationPolicy": "Background",
                "gracePeriodSeconds": 0, "dryRun": ["All"]}
        assert rt(opts) == {"kind": "DeleteOptions", "apiVersion": gv, "gracePeriodSeconds": 0,
                            "propagationPolicy": "Background", "dryRun": ["All"]}


@pytest.mark.parametrize(("gv", "kind", "ok"), [
    ("v1", "ConfigMap", True), ("v1", "ConfigMapList", True), ("v1", "Status", True), ("v1", "Nope", False),
    ("apps/v1", "ConfigMap", False), ("autoscaling/v1", "Scale", True), ("apps/v1", "Deployment", True),
    ("authentication.k8s.io/v1", "TokenRequest", True), ("authentication.k8s.io/v1", "SelfSubjectReview", True),
    ("authorization.k8s.io/v1", "SelfSubjectAccessReview", True),
    ("authorization.k8s.io/v1", "SelfSubjectRulesReview", True),
    ("authorization.k8s.io/v1", "SubjectAccessReview", True),
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition", True),
    ("apiregistration.k8s.io/v1", "APIService", True), ("example.com/v1", "Gadget", False),
    ("not a version", "DeleteOptions", False), ("meta.k8s.io/v1", "Table", False)])
def test_supports(gv: str, kind: str, ok: bool) -> None:
    assert supports(gv, kind) is ok


def test_encode_list_matches_encode_of_list_object() -> None:
    items = [{"metadata": {"name": "a", "namespace": "n"}, "data": {"x": "1"}}]
    meta = {"resourceVersion": "7"}
    assert encode_list("v1", "ConfigMapList", items, meta) == encode(
        {"apiVersion": "v1", "kind": "ConfigMapList", "metadata": meta, "items": items})
    out = decode(encode_list("v1", "ConfigMapList", items, meta))
    assert out["items"][0]["data"] == {"x": "1"} and "kind" not in out["items"][0]


def test_status_encodes_for_protobuf_clients() -> None:
    st = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
          "message": 'configmaps "x" already exists', "reason": "AlreadyExists",
          "details": {"name": "x", "kind": "configmaps"}, "code": 409}
    assert rt(st) == st


def test_encode_type_errors_name_the_field() -> None:
    dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": META, "spec": {"replicas": "three"}}
    with pytest.raises(ProtobufError, match=r"^spec\.replicas: expected an integer, got string"):
        encode(dep)
    with pytest.raises(ProtobufError, match="out of range for int32"):
        encode({**dep, "spec": {"replicas": 1 << 40}})
    with pytest.raises(ProtobufError, match=r"metadata\.labels: expected an object"):
        encode({**dep, "metadata": {"labels": ["a"]}})
    with pytest.raises(ProtobufError, match="no apiVersion or kind"):
        encode({"metadata": {}})
    with pytest.raises(ProtobufError, match='no kind "Gadget"'):
        encode({"apiVersion": "example.com/v1", "kind": "Gadget"})
