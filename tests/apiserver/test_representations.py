"""Table and PartialObjectMetadata answers, deletecollection, and method/media errors."""

from __future__ import annotations

import pytest
from mini_kube.client import ApiError, ResourceRef
from mini_kube.machinery.refs import CONFIGMAPS

TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"
PARTIAL_LIST = "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io,application/json"


def test_table_list_and_get(mini_kube_session, kube_namespace):
    client = mini_kube_session.client
    client.create(CONFIGMAPS, {"metadata": {"name": "t1"}, "data": {"a": "1", "b": "2"}}, kube_namespace)
    table = client.request("GET", CONFIGMAPS.path(kube_namespace), accept=TABLE)
    assert table["kind"] == "Table" and table["apiVersion"] == "meta.k8s.io/v1"
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Data", "Age"]
    row = table["rows"][0]
    assert row["cells"][:2] == ["t1", 2]
    assert row["object"]["kind"] == "PartialObjectMetadata" and row["object"]["metadata"]["name"] == "t1"
    one = client.request("GET", CONFIGMAPS.path(kube_namespace, "t1"), accept=TABLE)
    assert one["kind"] == "Table" and len(one["rows"]) == 1


def test_partial_object_metadata_list(mini_kube_session, kube_namespace):
    client = mini_kube_session.client
    client.create(CONFIGMAPS, {"metadata": {"name": "p1", "labels": {"x": "y"}}, "data": {"secret": "s"}}, kube_namespace)
    listed = client.request("GET", CONFIGMAPS.path(kube_namespace), accept=PARTIAL_LIST)
    assert listed["kind"] == "PartialObjectMetadataList" and listed["apiVersion"] == "meta.k8s.io/v1"
    item = listed["items"][0]
    assert item["kind"] == "PartialObjectMetadata" and "data" not in item
    assert item["metadata"]["labels"] == {"x": "y"}


def test_delete_collection_by_label(mini_kube_session, kube_namespace):
    client = mini_kube_session.client
    for name, tier in (("d1", "a"), ("d2", "a"), ("d3", "b")):
        client.create(CONFIGMAPS, {"metadata": {"name": name, "labels": {"tier": tier}}}, kube_namespace)
    client.request("DELETE", CONFIGMAPS.path(kube_namespace), params={"labelSelector": "tier=a"})
    left = [o["metadata"]["name"] for o in client.list(CONFIGMAPS, kube_namespace)["items"]]
    assert left == ["d3"]


def test_method_and_media_errors(mini_kube_session, kube_namespace):
    client = mini_kube_session.client
    with pytest.raises(ApiError) as err:
        client.request("POST", "/api/v1/componentstatuses", body={})
    assert err.value.status == 405 and err.value.body["reason"] == "MethodNotAllowed"
    with pytest.raises(ApiError) as err:
        client.request("GET", CONFIGMAPS.path(kube_namespace), accept="text/html")
    assert err.value.status == 406
    with pytest.raises(ApiError) as err:
        client.request("PATCH", CONFIGMAPS.path(kube_namespace, "x"), body=b"{}", content_type="text/plain")
    assert err.value.status == 415 and err.value.body["reason"] == "UnsupportedMediaType"
    with pytest.raises(ApiError) as err:
        client.request("GET", "/apis/no.such.group/v1/things")
    assert err.value.status == 404


def test_typed_list_items_carry_no_type_meta(mini_kube_session, kube_namespace):
    """As upstream's typed lists of built-in kinds: the list says the kind, its items do not."""
    client = mini_kube_session.client
    client.create(CONFIGMAPS, {"metadata": {"name": "l1"}, "data": {"a": "b"}}, kube_namespace)
    listed = client.list(CONFIGMAPS, kube_namespace)
    assert listed["kind"] == "ConfigMapList"
    item = listed["items"][0]
    assert "kind" not in item and "apiVersion" not in item
    assert item["metadata"]["name"] == "l1" and item["data"] == {"a": "b"}


NOT_ACCEPTABLE = ("only the following media types are accepted: application/json, application/yaml, "
                  "application/vnd.kubernetes.protobuf")
ONLY_TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"
REVIEW = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
          "spec": {"nonResourceAttributes": {"path": "/", "verb": "get"}}}


def test_a_table_of_a_kind_without_table_conversion_is_not_acceptable(mini_kube_session, kube_namespace):
    """Request-only kinds and subresources other than status and scale have no TableConvertor upstream: an
    Accept naming only a Table is 406 (nothing done), one that also names JSON gets JSON."""
    client = mini_kube_session.client
    path = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
    with pytest.raises(ApiError) as err:
        client.request("POST", path, body=REVIEW, accept=ONLY_TABLE)
    assert err.value.status == 406
    assert err.value.body["reason"] == "NotAcceptable" and err.value.body["message"] == NOT_ACCEPTABLE
    answered = client.request("POST", path, body=REVIEW, accept=TABLE)
    assert answered["kind"] == "SelfSubjectAccessReview" and answered["status"]["allowed"] is True
    client.create(ResourceRef("", "v1", "serviceaccounts"), {"metadata": {"name": "tabled"}}, kube_namespace)
    token_path = f"/api/v1/namespaces/{kube_namespace}/serviceaccounts/tabled/token"
    with pytest.raises(ApiError) as err:
        client.request("POST", token_path, body={"spec": {}}, accept=ONLY_TABLE)
    assert err.value.status == 406 and err.value.body["message"] == NOT_ACCEPTABLE
    # a status subresource converts (its kind's Table)
    status = client.request("GET", f"/api/v1/namespaces/{kube_namespace}/status", accept=ONLY_TABLE)
    assert status["kind"] == "Table" and status["rows"][0]["cells"][0] == kube_namespace
