"""Hostile input found by a sweep of the API server: each gets a clear 4xx Status and changes nothing."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest


def _send(kube, method: str, path: str, body: bytes | None = None, headers: dict[str, str] | None = None
          ) -> tuple[int, dict]:
    request = urllib.request.Request(kube.url + path, data=body, method=method, headers={
        "Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
def test_a_corrupt_compressed_body_is_a_bad_request(mini_kube_session, kube_namespace, encoding):
    path = f"/api/v1/namespaces/{kube_namespace}/configmaps"
    status, answer = _send(mini_kube_session, "POST", path, b"\x1f\x8b not compressed at all",
                           {"Content-Encoding": encoding})
    assert (status, answer["kind"], answer["reason"]) == (400, "Status", "BadRequest"), answer
    assert f"Can not decode content-encoding: {encoding}" in answer["message"]
    assert _send(mini_kube_session, "GET", path)[1]["items"] == []


def _pod(name: str, cpu: object) -> bytes:
    return json.dumps({"metadata": {"name": name}, "spec": {"containers": [
        {"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu}}}]}}).encode()


@pytest.mark.parametrize(("cpu", "stored"), [
    ("1e99999999", "1e99999999"),  # an exact fraction of this took the server's event loop forever
    ("1" * 5000, "1" * 5000),  # more digits than Python's int() takes: was a 500
    ("1" * 5000 + "Ki", "9223372036854775807"),  # BinarySI is capped at 2^63-1, DecimalSI is not
    ("1e2147483647", "10e2147483646"),
    ("1e-999", "1e-9"),  # rounded up to nano
    ("0.5", "500m"), (1.5, "1500m"), (2, "2"), ("  1 ", "1"), ("+1", "+1"), ("1.5Gi", "1536Mi"),
    ("100", "100"), ("1000", "1k"), ("e3", "0"),
])
def test_quantities_are_stored_as_apimachinery_writes_them(mini_kube_session, kube_namespace, cpu, stored):
    path = f"/api/v1/namespaces/{kube_namespace}/pods"
    status, answer = _send(mini_kube_session, "POST", path, _pod("q", cpu))
    assert status == 201, answer
    assert answer["spec"]["containers"][0]["resources"]["requests"]["cpu"] == stored


@pytest.mark.parametrize(("cpu", "message"), [
    ("1e2147483648", "unable to parse quantity's suffix"),  # the exponent is an int32
    ("1m1", "unable to parse quantity's suffix"),
    ("1.2.3", "quantities must match the regular expression"),
    (True, "quantities must match the regular expression"),
])
def test_malformed_quantities_are_bad_requests(mini_kube_session, kube_namespace, cpu, message):
    path = f"/api/v1/namespaces/{kube_namespace}/pods"
    status, answer = _send(mini_kube_session, "POST", path, _pod("q", cpu))
    assert (status, answer["reason"]) == (400, "BadRequest"), answer
    assert answer["message"].startswith('Pod in version "v1" cannot be handled as a Pod: ' + message)


def test_a_huge_negative_quantity_is_invalid_not_a_500(mini_kube_session, kube_namespace):
    """-1e99999999 parses (negating it overflowed Python's default decimal context: a 500); it is negative."""
    path = f"/api/v1/namespaces/{kube_namespace}/pods"
    status, answer = _send(mini_kube_session, "POST", path, _pod("q", "-1e99999999"))
    assert (status, answer["reason"]) == (422, "Invalid"), answer
    assert 'requests[cpu]: Invalid value: "-1e99999999": must be greater than or equal to 0' in answer["message"]


def _bound_pod(kube, path: str, name: str) -> None:
    body = {"metadata": {"name": name}, "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "i"}]}}
    assert _send(kube, "POST", path, json.dumps(body).encode())[0] == 201


@pytest.mark.parametrize(("query", "body"), [("?gracePeriodSeconds=10000000000000", None),
                                             ("", {"gracePeriodSeconds": 9223372036854775807})])
def test_a_huge_grace_period_is_not_a_500(mini_kube_session, kube_namespace, query, body):
    """A grace period past year 9999 was an OverflowError (500); the deletion time is held at the last second."""
    path = f"/api/v1/namespaces/{kube_namespace}/pods"
    _bound_pod(mini_kube_session, path, "g")
    status, answer = _send(mini_kube_session, "DELETE", f"{path}/g{query}",
                           json.dumps(body).encode() if body else None)
    assert status == 200, answer
    assert answer["metadata"]["deletionTimestamp"] == "9999-12-31T23:59:59Z"


@pytest.mark.parametrize(("query", "body", "message"), [
    ("?gracePeriodSeconds=99999999999999999999", None,
     'strconv.ParseInt: parsing "99999999999999999999": value out of range'),
    ("?gracePeriodSeconds=1_0", None, 'strconv.ParseInt: parsing "1_0": invalid syntax'),
    ("", {"gracePeriodSeconds": 1.5},
     "json: cannot unmarshal number 1.5 into Go struct field DeleteOptions.gracePeriodSeconds of type int64"),
    ("", {"gracePeriodSeconds": True},
     "json: cannot unmarshal bool into Go struct field DeleteOptions.gracePeriodSeconds of type int64"),
    ("", {"preconditions": "x"},  # was a 500 (AttributeError)
     "json: cannot unmarshal string into Go struct field DeleteOptions.preconditions of type v1.Preconditions"),
    ("", {"orphanDependents": "yes"},
     "json: cannot unmarshal string into Go struct field DeleteOptions.orphanDependents of type bool"),
])
def test_bad_delete_options_are_bad_requests(mini_kube_session, kube_namespace, query, body, message):
    path = f"/api/v1/namespaces/{kube_namespace}/pods"
    _bound_pod(mini_kube_session, path, "g")
    status, answer = _send(mini_kube_session, "DELETE", f"{path}/g{query}",
                           json.dumps(body).encode() if body else None)
    assert (status, answer["reason"], answer["message"]) == (400, "BadRequest", message)
    assert "deletionTimestamp" not in _send(mini_kube_session, "GET", f"{path}/g")[1]["metadata"]


@pytest.fixture
def deployment(mini_kube_session, kube_namespace):
    path = f"/apis/apps/v1/namespaces/{kube_namespace}/deployments"
    body = {"metadata": {"name": "d"}, "spec": {"replicas": 1, "selector": {"matchLabels": {"a": "b"}}, "template": {
        "metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}}}
    assert _send(mini_kube_session, "POST", path, json.dumps(body).encode())[0] == 201
    return mini_kube_session, f"{path}/d", kube_namespace


SCALE_DECODE = 'Scale in version "v1" cannot be handled as a Scale: json: cannot unmarshal '


@pytest.mark.parametrize(("method", "content_type", "body", "code", "message"), [
    ("PUT", "application/json", {"metadata": {"name": "d"}, "spec": {"replicas": 2**40}}, 400,  # was stored
     SCALE_DECODE + "number 1099511627776 into Go struct field ScaleSpec.spec.replicas of type int32"),
    ("PUT", "application/json", {"metadata": {"name": "d"}, "spec": {"replicas": "2"}}, 400,  # was a 422
     SCALE_DECODE + "string into Go struct field ScaleSpec.spec.replicas of type int32"),
    ("PUT", "application/json", {"metadata": {"name": "d"}, "spec": "x"}, 400,  # was a 500
     SCALE_DECODE + "string into Go struct field Scale.spec of type v1.ScaleSpec"),
    ("PUT", "application/json", {"metadata": {"name": "other"}, "spec": {"replicas": 2}}, 400,  # was a 200
     "the name of the object (other) does not match the name on the URL (d)"),
    ("PUT", "application/json", {"kind": "Pod", "metadata": {"name": "d"}, "spec": {"replicas": 2}}, 400,
     "the kind in the data (Pod) does not match the expected kind (Scale)"),
    ("PUT", "application/json", {"apiVersion": "apps/v1", "metadata": {"name": "d"}}, 400,
     "the API version in the data (apps/v1) does not match the expected API version (autoscaling/v1)"),
    ("PUT", "application/json", {"metadata": {"name": "d"}, "spec": {"replicas": -1}}, 422,
     'Scale "d" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0'),
    ("PATCH", "application/json-patch+json", [{"op": "replace", "path": "/spec/replicas", "value": 1.5}], 400,
     SCALE_DECODE + "number 1.5 into Go struct field ScaleSpec.spec.replicas of type int32"),
    ("PATCH", "application/merge-patch+json", {"metadata": {"name": "zz"}}, 400,
     "the name of the object (zz) does not match the name on the URL (d)"),
])
def test_bad_scale_bodies_change_nothing(deployment, method, content_type, body, code, message):
    kube, path, _ = deployment
    status, answer = _send(kube, method, f"{path}/scale", json.dumps(body).encode(), {"Content-Type": content_type})
    assert (status, answer["message"]) == (code, message)
    assert _send(kube, "GET", path)[1]["spec"]["replicas"] == 1


def test_scale_without_replicas_is_zero(deployment):
    """Go decodes a Scale without spec.replicas (or with null) as 0, and scales to 0."""
    kube, path, _ = deployment
    status, answer = _send(kube, "PATCH", f"{path}/scale", b'{"spec":{"replicas":null}}',
                           {"Content-Type": "application/merge-patch+json"})
    assert (status, answer["spec"]) == (200, {"replicas": 0}), answer


@pytest.mark.parametrize(("patch", "message"), [
    ({"metadata": {"name": "zz"}}, "the name of the object (zz) does not match the name on the URL (d)"),
    ({"metadata": {"namespace": "zz"}}, "the namespace of the object (zz) does not match the namespace on the URL"),
])
def test_a_patch_cannot_rename(deployment, patch, message):
    """Upstream's patcher runs checkName on the patched object; the rename was silently dropped (200)."""
    kube, path, _ = deployment
    status, answer = _send(kube, "PATCH", path, json.dumps(patch).encode(),
                           {"Content-Type": "application/merge-patch+json"})
    assert (status, answer["reason"]) == (400, "BadRequest") and answer["message"].startswith(message), answer


@pytest.mark.parametrize(("body", "message"), [
    ({"deleteOptions": {"gracePeriodSeconds": 1.5}}, "number 1.5 into Go struct field "
                                                     "DeleteOptions.deleteOptions.gracePeriodSeconds of type int64"),
    ({"deleteOptions": "x"}, "string into Go struct field Eviction.deleteOptions of type v1.DeleteOptions"),
    ({"deleteOptions": {"preconditions": {"uid": 5}}}, "number into Go struct field "
                                                       "Preconditions.deleteOptions.preconditions.uid of type string"),
])
def test_eviction_bodies_decode_as_go_types(mini_kube_session, kube_namespace, body, message):
    path = f"/api/v1/namespaces/{kube_namespace}/pods"
    _bound_pod(mini_kube_session, path, "e")
    eviction = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "e"}, **body}
    status, answer = _send(mini_kube_session, "POST", f"{path}/e/eviction", json.dumps(eviction).encode())
    assert (status, answer["message"]) == (
        400, 'Eviction in version "v1" cannot be handled as a Eviction: json: cannot unmarshal ' + message)
    assert "deletionTimestamp" not in _send(mini_kube_session, "GET", f"{path}/e")[1]["metadata"]


LEASE_DECODE = 'Lease in version "v1" cannot be handled as a Lease: parsing time '


@pytest.mark.parametrize(("spec", "message"), [
    ({"renewTime": "yesterday"}, '"yesterday" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "yesterday" as '
                                 '"2006"'),
    ({"renewTime": "2024-01-01T00:00:00Z"},  # a MicroTime has exactly six fraction digits
     '"2024-01-01T00:00:00Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "Z" as ".000000"'),
    ({"renewTime": "2024-13-01T00:00:00.000000Z"}, '"2024-13-01T00:00:00.000000Z": month out of range'),
    ({"renewTime": "2024-02-30T00:00:00.000000Z"}, '"2024-02-30T00:00:00.000000Z": day out of range'),
    ({"renewTime": "2024-01-01t00:00:00.000000Z"},
     '"2024-01-01t00:00:00.000000Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "t00:00:00.000000Z" as "T"'),
])
def test_times_go_rejects_are_bad_requests(mini_kube_session, kube_namespace, spec, message):
    """Time and MicroTime fields were stored as any string."""
    path = f"/apis/coordination.k8s.io/v1/namespaces/{kube_namespace}/leases"
    status, answer = _send(mini_kube_session, "POST", path, json.dumps({"metadata": {"name": "l"}, "spec": spec}).encode())
    assert (status, answer["message"]) == (400, LEASE_DECODE + message)


def test_pod_status_times_are_rfc3339(mini_kube_session, kube_namespace):
    path = f"/api/v1/namespaces/{kube_namespace}/pods"
    _bound_pod(mini_kube_session, path, "t")
    for start, code in (("2024-01-01 00:00:00Z", 400), ("2024-01-01T24:00:00Z", 400), ("2024-01-01T00:00:00+01:00", 200)):
        status, answer = _send(mini_kube_session, "PATCH", f"{path}/t/status",
                               json.dumps({"status": {"startTime": start}}).encode(),
                               {"Content-Type": "application/merge-patch+json"})
        assert status == code, answer
    assert answer["status"]["startTime"] == "2023-12-31T23:00:00Z"  # stored as Go writes it: UTC, to the second


@pytest.mark.parametrize(("field", "given", "stored"), [
    ("acquireTime", "2024-01-01T00:00:00.123456+02:00", "2023-12-31T22:00:00.123456Z"),  # MicroTime: microseconds
    ("renewTime", "2024-01-01T00:00:00,500000Z", "2024-01-01T00:00:00.500000Z"),
])
def test_times_are_stored_as_go_writes_them(mini_kube_session, kube_namespace, field, given, stored):
    path = f"/apis/coordination.k8s.io/v1/namespaces/{kube_namespace}/leases"
    body = {"metadata": {"name": "l"}, "spec": {field: given}}
    status, answer = _send(mini_kube_session, "POST", path, json.dumps(body).encode())
    assert (status, answer["spec"][field]) == (201, stored)


def test_self_subject_review_without_authentication(mini_kube_session):
    """Without authentication every request acts as the admin, who had no UserInfo: any SelfSubjectReview (kubectl
    auth whoami) was a 500."""
    status, answer = _send(mini_kube_session, "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                           b'{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}')
    assert status == 201, answer
    assert answer["status"]["userInfo"] == {"username": "system:admin",
                                            "groups": ["system:masters", "system:authenticated"]}


@pytest.mark.parametrize(("name", "message"), [
    ("", 'Event "" is invalid: metadata.name: Required value: name or generateName is required'),
    ("a/b", "Event \"a/b\" is invalid: metadata.name: Invalid value: \"a/b\": may not contain '/'"),
    ("..", "Event \"..\" is invalid: metadata.name: Invalid value: \"..\": may not be '..'"),
])
def test_core_events_get_the_generic_name_checks(mini_kube_session, kube_namespace, name, message):
    """Core Events skip core's ObjectMeta rules but not the store's: an Event named "" was stored (and broke a
    later deletecollection), and "a/b" too."""
    path = f"/api/v1/namespaces/{kube_namespace}/events"
    event = {"metadata": {"name": name}, "involvedObject": {"kind": "Pod", "name": "p", "namespace": kube_namespace},
             "reason": "R", "message": "m", "type": "Normal", "source": {"component": "x"}}
    status, answer = _send(mini_kube_session, "POST", path, json.dumps(event).encode())
    assert (status, answer["message"]) == (422, message)
    event["metadata"]["name"] = "Odd_But.Valid"  # a path segment, not a DNS name
    assert _send(mini_kube_session, "POST", path, json.dumps(event).encode())[0] == 201
    assert _send(mini_kube_session, "DELETE", path)[0] == 200


@pytest.mark.parametrize("content_type", ["application/strategic-merge-patch+json", "application/merge-patch+json"])
def test_integers_beyond_64_bits_in_a_patch_are_not_a_500(cms_target, content_type):
    """Kept exact for a while, such an integer reached orjson.dumps (64 bits at most) and made a 500: they are
    read as floats, as before, and a label that is a number is the usual type error."""
    kube, path = cms_target
    status, answer = _send(kube, "PATCH", f"{path}/t", b'{"metadata":{"labels":{"a":18446744073709551616}}}',
                           {"Content-Type": content_type})
    assert (status, answer["reason"]) == (400, "BadRequest"), answer


@pytest.fixture
def cms_target(mini_kube_session, kube_namespace):
    path = f"/api/v1/namespaces/{kube_namespace}/configmaps"
    assert _send(mini_kube_session, "POST", path, b'{"metadata":{"name":"t"}}')[0] == 201
    return mini_kube_session, path
