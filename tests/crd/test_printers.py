"""Table output of custom resources (additionalPrinterColumns) and the JSONPath subset behind it."""

from __future__ import annotations

import datetime
from typing import Any

import pytest
from mini_kube.apiserver.crd.jsonpath import JSONPathError, compile_path
from mini_kube.apiserver.crd.printers import TablePrinter, age, human_duration, scale_columns, table
from mini_kube.apiserver.crd.rows import resource_rows

NOW = datetime.datetime(2026, 11, 22, 2, 9, 5, tzinfo=datetime.UTC)
POD_LIKE = {
    "metadata": {"name": "a1", "creationTimestamp": "2026-11-22T02:09:05Z", "labels": {"app.kubernetes.io/name": "x"}},
    "spec": {"replicas": 3, "ratio": 0.5, "ready": True, "ports": [{"name": "http", "port": 80}, {"name": "tls", "port": 443}]},
    "status": {"conditions": [{"type": "Available", "status": "False"}, {"type": "Ready", "status": "True"}]},
}


@pytest.mark.parametrize(("path", "expected"), [
    (".spec.replicas", [3]),
    ("{.spec.replicas}", [3]),
    (".spec.ports[1].port", [443]),
    (".spec.ports[-1].name", ["tls"]),
    (".spec.ports[*].port", [80, 443]),
    (".spec.ports[0:1].name", ["http"]),
    (".spec.ports[0,1].name", ["http", "tls"]),
    ('.status.conditions[?(@.type=="Ready")].status', ["True"]),
    (".status.conditions[?(@.type!='Ready')].type", ["Available"]),
    (".spec.ports[?(@.port > 100)].name", ["tls"]),
    (".spec.ports[?(@.name)].port", [80, 443]),
    (".metadata.labels['app.kubernetes.io/name']", ["x"]),
    ("..port", [80, 443]),
    (".spec.missing.deeper", []),
    (".spec.replicas.nope", []),
])
def test_jsonpath(path: str, expected: list[Any]) -> None:
    assert compile_path(path).find(POD_LIKE) == expected


def test_jsonpath_rejects_garbage() -> None:
    with pytest.raises(JSONPathError):
        compile_path(".spec.ports[0")


def test_reference_agent_table(agent_crd: dict[str, Any]) -> None:
    printer = TablePrinter(agent_crd["spec"]["versions"][0]["additionalPrinterColumns"])
    assert [(d["name"], d["type"], d["format"], d["priority"]) for d in printer.definitions] == [
        ("Name", "string", "name", 0), ("Model", "string", "", 0), ("Replicas", "integer", "", 0),
        ("Phase", "string", "", 0), ("Age", "date", "", 0)]
    assert printer.definitions[0]["description"].startswith("Name must be unique within a namespace.")
    assert printer.definitions[1]["description"] == \
        "Custom resource definition column (in JSONPath format): .spec.model"
    agent = {"metadata": {"name": "a1", "creationTimestamp": "2026-11-22T02:09:05Z"},
             "spec": {"model": "small", "prompt": "hello", "replicas": 1}}
    # kubectl printed: a1  small  1  <none>  0s
    assert printer.cells(agent, NOW) == ["a1", "small", 1, None, "0s"]


def test_default_columns_are_name_and_age() -> None:
    printer = TablePrinter([])
    assert [d["name"] for d in printer.definitions] == ["Name", "Age"]
    assert printer.definitions[1]["description"].startswith("CreationTimestamp is a timestamp")
    assert printer.row(POD_LIKE, NOW + datetime.timedelta(hours=26)) == {"cells": ["a1", "26h"]}


def test_typed_cells_and_priority() -> None:
    printer = TablePrinter([
        {"name": "R", "type": "number", "jsonPath": ".spec.replicas"},
        {"name": "Ratio", "type": "integer", "jsonPath": ".spec.ratio"},
        {"name": "Ready", "type": "boolean", "jsonPath": ".spec.ready"},
        {"name": "Ports", "type": "string", "jsonPath": ".spec.ports[0]", "priority": 1, "description": "the ports"},
        {"name": "Cond", "type": "string", "jsonPath": '.status.conditions[?(@.type=="Ready")].status'},
        {"name": "Bad", "type": "boolean", "jsonPath": ".spec.replicas"},
        {"name": "When", "type": "date", "jsonPath": ".spec.ready"},
    ])
    assert printer.definitions[4]["priority"] == 1 and printer.definitions[4]["description"] == "the ports"
    assert printer.cells(POD_LIKE, NOW) == ["a1", 3.0, 0, True, '{"name":"http","port":80}', "True", None, None]


@pytest.mark.parametrize(("seconds", "text"), [
    (-5, "<invalid>"), (-1, "0s"), (0, "0s"), (119, "119s"), (120, "2m"), (150, "2m30s"), (600, "10m"),
    (3 * 3600, "3h"), (3 * 3600 + 600, "3h10m"), (30 * 3600, "30h"), (50 * 3600, "2d2h"), (10 * 86400, "10d"),
    (800 * 86400, "2y70d"), (3000 * 86400, "8y"),
])
def test_human_duration(seconds: int, text: str) -> None:
    assert human_duration(seconds) == text


def test_age_of_bad_timestamps() -> None:
    assert age("null", NOW) == "<unknown>"
    assert age("yesterday", NOW) == "<invalid>"


def test_scale_table_columns() -> None:
    cols = scale_columns({"specReplicasPath": ".spec.size", "statusReplicasPath": ".status.size"})
    assert [(c["name"], c["jsonPath"]) for c in cols] == [
        ("Desired", ".spec.replicas"), ("Available", ".status.replicas"), ("Age", ".metadata.creationTimestamp")]


def test_whole_table_like_the_server_sends(agent_crd: dict[str, Any]) -> None:
    row = resource_rows(agent_crd)[0]
    agent = {"metadata": {"name": "a1", "namespace": "demo", "creationTimestamp": "2026-11-22T02:09:05Z"},
             "spec": {"model": "small", "replicas": 1}}
    body = table(row, [agent], NOW, "Metadata", {"resourceVersion": "219", "continue": ""})
    assert body["kind"] == "Table" and body["apiVersion"] == "meta.k8s.io/v1"
    assert body["metadata"] == {"resourceVersion": "219"}
    assert len(body["columnDefinitions"]) == 5
    assert body["rows"] == [{"cells": ["a1", "small", 1, None, "0s"], "object": {
        "kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": agent["metadata"]}}]
    assert table(row, [], NOW, "None", None, headers=False) == {
        "kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": {}, "columnDefinitions": None, "rows": []}
