"""Object metadata on create and update, and the 422 Status a real server sent for a bad name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mini_kube.apiserver.errors import invalid_object
from mini_kube.apiserver.validation import name_validator, validate_object_meta, validate_object_meta_update
from mini_kube.apiserver.validation import validate_all as validate
from mini_kube.machinery.names import name_is_dns_subdomain

REPO = Path(__file__).resolve().parents[2]
REFERENCE = REPO / "tests" / "fixtures" / "reference"


def strings(errs) -> list[str]:
    return [str(e) for e in errs]


def test_bad_configmap_name_gives_the_real_422_body():
    expected = json.loads((REFERENCE / "http" / "cm-create-422.body").read_text())
    errs = validate("ConfigMap", "", {"metadata": {"name": "Bad_Name", "namespace": "raw"}, "data": {"k": "v"}})
    assert invalid_object("ConfigMap", "", "Bad_Name", errs).status() == expected


def test_list_values_render_like_go_slices():
    expected = json.loads((REFERENCE / "http" / "svc-clusterip-conflict-422.body").read_text())
    from mini_kube.apiserver.validation.errs import invalid

    err = invalid("spec.clusterIPs", ["10.0.0.1"], "failed to allocate IP 10.0.0.1: provided IP is already allocated")
    assert err.body() == expected["details"]["causes"][0]["message"]


@pytest.mark.parametrize(("meta", "namespaced", "expected"), [
    ({"name": "ok", "namespace": "ns"}, True, []),
    ({"namespace": "ns"}, True, ["metadata.name: Required value: name or generateName is required"]),
    ({"generateName": "web-", "name": "web-x1", "namespace": "ns"}, True, []),
    ({"generateName": "Web-", "name": "web-x1", "namespace": "ns"}, True, [
        'metadata.generateName: Invalid value: "Web-": a lowercase RFC 1123 subdomain must consist of lower case '
        "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. "
        "'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"]),
    ({"name": "ok"}, True, ["metadata.namespace: Required value"]),
    ({"name": "ok", "namespace": "ns"}, False, ["metadata.namespace: Forbidden: not allowed on this type"]),
    ({"name": "ok", "namespace": "Bad.NS"}, True, [
        'metadata.namespace: Invalid value: "Bad.NS": a lowercase RFC 1123 label must consist of lower case '
        "alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or "
        "'123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"]),
    ({"name": "ok", "namespace": "ns", "generation": -1}, True, [
        "metadata.generation: Invalid value: -1: must be greater than or equal to 0"]),
    ({"name": "ok", "namespace": "ns", "labels": {"a": "b" * 64}}, True, [
        f'metadata.labels: Invalid value: "{"b" * 64}": must be no more than 63 characters']),
    ({"name": "ok", "namespace": "ns", "annotations": {"A_b/x": "x"}}, True, [
        'metadata.annotations: Invalid value: "A_b/x": prefix part a lowercase RFC 1123 subdomain must consist of lower '
        "case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. "
        "'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"]),
    ({"name": "ok", "namespace": "ns", "annotations": {"big": "x" * (256 * 1024)}}, True, [
        "metadata.annotations: Too long: may not be more than 262144 bytes"]),
    ({"name": "ok", "namespace": "ns", "finalizers": ["custom"]}, True, [
        'metadata.finalizers[0]: Invalid value: "custom": name is neither a standard finalizer name nor is it fully '
        "qualified"]),
    ({"name": "ok", "namespace": "ns", "finalizers": ["example.com/x", "kubernetes"]}, True, []),
    ({"name": "ok", "namespace": "ns", "finalizers": ["orphan", "foregroundDeletion"]}, True, [
        'metadata.finalizers: Invalid value: []string{"orphan", "foregroundDeletion"}: finalizer orphan and '
        "foregroundDeletion cannot be both set"]),
    ({"name": "ok", "namespace": "ns", "ownerReferences": [{"apiVersion": "", "kind": "", "name": "", "uid": ""}]}, True,
     ['metadata.ownerReferences.apiVersion: Invalid value: "": version must not be empty',
      'metadata.ownerReferences.kind: Invalid value: "": kind must not be empty',
      'metadata.ownerReferences.name: Invalid value: "": name must not be empty',
      'metadata.ownerReferences.uid: Invalid value: "": uid must not be empty']),
])
def test_object_meta_on_create(meta, namespaced, expected):
    assert strings(validate_object_meta(meta, namespaced, name_is_dns_subdomain)) == expected


def test_two_controllers_are_rejected():
    refs = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": n, "uid": n, "controller": True} for n in "ab"]
    errs = strings(validate_object_meta({"name": "p", "namespace": "n", "ownerReferences": refs}, True,
                                        name_is_dns_subdomain))
    assert len(errs) == 1 and errs[0].endswith(
        'Only one reference can have Controller set to true. Found "true" in references for ReplicaSet/a and '
        "ReplicaSet/b")


OLD = {"name": "c", "namespace": "ns", "uid": "u1", "resourceVersion": "5", "generation": 2,
       "creationTimestamp": "2026-01-01T00:00:00Z"}


@pytest.mark.parametrize(("change", "expected"), [
    ({}, []),
    ({"name": "d"}, ['metadata.name: Invalid value: "d": field is immutable']),
    ({"namespace": "other"}, ['metadata.namespace: Invalid value: "other": field is immutable']),
    ({"uid": "u2"}, ['metadata.uid: Invalid value: "u2": field is immutable']),
    ({"resourceVersion": ""}, ['metadata.resourceVersion: Invalid value: "": must be specified for an update']),
    ({"generation": 1}, ["metadata.generation: Invalid value: 1: must not be decremented"]),
    ({"creationTimestamp": "2026-01-02T00:00:00Z"},
     ["metadata.creationTimestamp: Invalid value: 2026-01-02 00:00:00 +0000 UTC: field is immutable"]),
    ({"labels": {"bad key": "v"}}, [
        'metadata.labels: Invalid value: "bad key": name part must consist of alphanumeric characters, \'-\', \'_\' '
        "or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', "
        "regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"]),
])
def test_object_meta_on_update(change, expected):
    assert strings(validate_object_meta_update({**OLD, **change}, OLD)) == expected


def test_no_new_finalizers_while_deleting():
    old = {**OLD, "deletionTimestamp": "2026-01-03T00:00:00Z", "finalizers": ["a.io/x"]}
    new = {**old, "finalizers": ["a.io/x", "b.io/y"]}
    assert strings(validate_object_meta_update(new, old)) == [
        'metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new '
        'finalizers []string{"b.io/y"}']


@pytest.mark.parametrize(("kind", "group", "name", "ok"), [
    ("Namespace", "", "a.b", False), ("ConfigMap", "", "a.b", True), ("Service", "", "1svc", False),
    ("Service", "", "svc-1", True), ("StatefulSet", "apps", "web.v1", False), ("Deployment", "apps", "web.v1", True),
    ("ClusterRole", "rbac.authorization.k8s.io", "system:controller:x", True),
    ("Role", "rbac.authorization.k8s.io", "a/b", False), ("CertificateSigningRequest", "certificates.k8s.io",
                                                         "Any_Name", True),
])
def test_name_rules_per_kind(kind, group, name, ok):
    assert (name_validator(kind, group)(name, False) == []) is ok


def test_metadata_and_kind_rules_are_separate_entry_points():
    from mini_kube.apiserver.registry.kinds import builtin_resources
    from mini_kube.apiserver.resources import ResourceType
    from mini_kube.apiserver.validation import validate as kind_rules
    from mini_kube.apiserver.validation import validate_metadata

    cm = next(r for r in builtin_resources() if r.kind == "ConfigMap")
    bad = {"metadata": {"name": "Bad_Name", "namespace": "ns", "finalizers": ["custom"]}, "data": {"k k": "v"}}
    assert [e.field for e in validate_metadata(cm, bad, None)] == ["metadata.name", "metadata.finalizers[0]"]
    assert [e.field for e in kind_rules("ConfigMap", "", bad)] == ["data[k k]"]
    widgets = ResourceType("example.com", "v1", "Widget", "widgets", True, crd={})
    assert [e.field for e in validate_metadata(widgets, bad, None)] == ["metadata.name"]
    event = next(r for r in builtin_resources() if r.kind == "Event" and r.group == "")
    assert validate_metadata(event, {"metadata": {"name": "Any Name!", "namespace": "ns"}}, None) == []
