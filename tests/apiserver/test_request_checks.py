"""Requests upstream refuses or answers specially (issue #10 items 5 and 6): pod streams before a node runs the
pod, ListOptions validation, whole-number timeouts, label selector keys and values."""

from __future__ import annotations

import urllib.error
import urllib.request

import orjson
import pytest
from mini_kube.machinery.refs import CONFIGMAPS, PODS

from tests.helpers import kubectl


def _get(kube, path: str) -> tuple[int, dict]:
    try:
        with urllib.request.urlopen(kube.url + path, timeout=10) as response:
            return response.status, orjson.loads(response.read() or b"{}")
    except urllib.error.HTTPError as exc:
        return exc.code, orjson.loads(exc.read())


def test_pod_streams_before_the_pod_has_a_node(mini_kube_session, kube_namespace):
    mini_kube_session.client.create(PODS, {"metadata": {"name": "p"}, "spec": {"containers": [
        {"name": "a", "image": "i"}, {"name": "b", "image": "i"}]}}, kube_namespace)
    logs = kubectl(mini_kube_session, "-n", kube_namespace, "logs", "p", "-c", "a")
    assert (logs.returncode, logs.stdout) == (0, "")
    status, body = _get(mini_kube_session, f"/api/v1/namespaces/{kube_namespace}/pods/p/log")  # kubectl picks one
    assert (status, body["message"]) == (400, "a container name must be specified for pod p, choose one of: [a b]")
    execed = kubectl(mini_kube_session, "-n", kube_namespace, "exec", "p", "-c", "a", "--", "true", check=False)
    assert execed.returncode == 1
    assert execed.stderr.strip().endswith("Error from server (BadRequest): pod p does not have a host assigned")
    status, body = _get(mini_kube_session, f"/api/v1/namespaces/{kube_namespace}/pods/p/portforward?ports=80")
    assert (status, body["reason"], body["message"]) == (400, "BadRequest", "pod p does not have a host assigned")


def test_discovery_lists_the_pod_stream_subresources(mini_kube_session):
    resources = kubectl(mini_kube_session, "get", "--raw", "/api/v1").stdout
    names = {r["name"] for r in orjson.loads(resources)["resources"]}
    assert {"pods/exec", "pods/attach", "pods/portforward", "pods/proxy", "pods/log", "nodes/proxy",
            "services/proxy"} <= names


@pytest.mark.parametrize(("query", "code", "fragment"), [
    ("resourceVersionMatch=Bogus&resourceVersion=1", 422,
     'resourceVersionMatch: Unsupported value: "Bogus": supported values: "Exact", "NotOlderThan", ""'),
    ("resourceVersionMatch=Exact", 422, "resourceVersionMatch is forbidden unless resourceVersion is provided"),
    ("resourceVersionMatch=Exact&resourceVersion=0", 422, 'resourceVersionMatch "exact" is forbidden'),
    ("watch=1&timeoutSeconds=nan", 400, 'strconv.ParseInt: parsing "nan": invalid syntax'),
    ("watch=1&timeoutSeconds=1e400", 400, 'parsing "1e400"'),
    ("timeoutSeconds=99999999999999999999", 400, "value out of range"),
    ("labelSelector=" + "k" * 64 + "%3Dv", 400, "name part must be no more than 63 characters"),
    ("labelSelector=k%3D" + "v" * 64, 400, "must be no more than 63 characters"),
    ("labelSelector=" + "p" * 254 + "/k%3Dv", 400, "prefix part must be no more than 253 characters"),
    ("limit=abc", 400, 'strconv.ParseInt: parsing "abc": invalid syntax'),
    ("limit=1_0", 400, 'strconv.ParseInt: parsing "1_0": invalid syntax'),  # Python's int() took these three
    ("limit=%D9%A1", 400, 'strconv.ParseInt: parsing "\u0661": invalid syntax'),
    ("timeoutSeconds=%201", 400, 'strconv.ParseInt: parsing " 1": invalid syntax'),
    ("limit=99999999999999999999", 400, 'strconv.ParseInt: parsing "99999999999999999999": value out of range'),
    ("resourceVersion=1_0", 400, 'invalid resource version: strconv.ParseUint: parsing "1_0": invalid syntax'),
    ("resourceVersion=%2B5", 400, 'invalid resource version: strconv.ParseUint: parsing "+5": invalid syntax'),
    ("resourceVersion=99999999999999999999", 400,  # was a 504 after waiting for that revision
     'invalid resource version: strconv.ParseUint: parsing "99999999999999999999": value out of range'),
    ("watch=1&resourceVersion=99999999999999999999", 400, "value out of range"),
])
def test_list_and_watch_options_are_checked(mini_kube_session, kube_namespace, query, code, fragment):
    status, body = _get(mini_kube_session, f"/api/v1/namespaces/{kube_namespace}/configmaps?{query}")
    assert status == code and fragment in body["message"], body


@pytest.mark.parametrize(("query", "watches"), [
    ("watch=yes", True), ("watch", True), ("watch=TRUE", True), ("watch=FALSE", False), ("watch=0", False),
])
def test_watch_parameter_reads_as_go_bool(mini_kube_session, kube_namespace, query, watches):
    """runtime.Convert_Slice_string_To_bool: only `0` and `false` (any case) are false."""
    request = urllib.request.Request(
        mini_kube_session.url + f"/api/v1/namespaces/{kube_namespace}/configmaps?{query}&timeoutSeconds=-1")
    with urllib.request.urlopen(request, timeout=10) as response:  # a negative timeout ends a watch at once
        body = response.read()
    assert (b'"kind":"ConfigMapList"' not in body) == watches, body[:200]



@pytest.mark.parametrize(("query", "answer"), [
    ("fieldSelector=metadata.name%3Da%5C%2Cb", (200, [])),  # an escaped comma is part of the value
    ("fieldSelector=metadata.name%3D%3Da%5C%3Db", (200, [])),
    ("fieldSelector=metadata.name%3D%3Dc%3D", (400, "invalid field selector: unescaped character in value: 61")),
    ("fieldSelector=metadata.name%3Dc%5Cx", (400, "invalid field selector: invalid escape sequence: \\x")),
    ("fieldSelector=metadata.name%3Dc%5C", (400, "invalid field selector: invalid escape sequence: \\")),
    ("fieldSelector=metadata.name+%3D+c", (400, "field label not supported: metadata.name ")),  # nothing trimmed
    ("fieldSelector=metadata.name%3Dc,,", (200, ["c"])),
    ("fieldSelector=metadata.name!%3Dc", (200, ["e", "v"])),
    ("labelSelector=k+notin+()", (200, ["c", "v"])),  # () is the set {""}
    ("labelSelector=k+in+()", (200, ["e"])),
])
def test_selectors_parse_as_upstreams(mini_kube_session, kube_namespace, query, answer):
    for name, labels in (("c", {}), ("e", {"k": ""}), ("v", {"k": "v"})):
        mini_kube_session.client.create(CONFIGMAPS, {"metadata": {"name": name, "labels": labels}}, kube_namespace)
    status, body = _get(mini_kube_session, f"/api/v1/namespaces/{kube_namespace}/configmaps?{query}")
    got = sorted(i["metadata"]["name"] for i in body["items"]) if status == 200 else body["message"]
    assert (status, got) == answer


@pytest.mark.parametrize(("query", "code", "message"), [
    ("tailLines=-1", 422, 'PodLogOptions "p" is invalid: tailLines: Invalid value: -1: must be greater than or '
                          "equal to 0"),
    ("limitBytes=0", 422, 'PodLogOptions "p" is invalid: limitBytes: Invalid value: 0: must be greater than 0'),
    ("sinceSeconds=0", 422, 'PodLogOptions "p" is invalid: sinceSeconds: Invalid value: 0: must be greater than 0'),
    ("sinceSeconds=5&sinceTime=2024-01-01T00:00:00Z", 422,
     'PodLogOptions "p" is invalid: : Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified'),
    ("tailLines=x", 400, 'strconv.ParseInt: parsing "x": invalid syntax'),
    ("sinceSeconds=99999999999999999999", 400, 'strconv.ParseInt: parsing "99999999999999999999": value out of range'),
    ("sinceTime=yesterday", 400, 'parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" '
                                 'as "2006"'),
    ("sinceTime=2024-13-01T00:00:00Z", 400, 'parsing time "2024-13-01T00:00:00Z": month out of range'),
])
def test_log_options_are_checked_before_the_pod(mini_kube_session, kube_namespace, query, code, message):
    """Upstream decodes and validates PodLogOptions first: a pod with no node answered an empty log to these."""
    mini_kube_session.client.create(PODS, {"metadata": {"name": "p"}, "spec": {"containers": [
        {"name": "a", "image": "i"}]}}, kube_namespace)
    status, body = _get(mini_kube_session, f"/api/v1/namespaces/{kube_namespace}/pods/p/log?{query}")
    assert (status, body["message"]) == (code, message)
