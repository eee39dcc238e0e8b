"""Tables compared with what a real 1.32 API server answered (skipped when the captures are absent)."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import yaml
from mini_kube.apiserver.printers import cells, columns, table
from mini_kube.apiserver.registry.kinds import builtin_resources
from mini_kube.apiserver.resources import ResourceType

REPO = Path(__file__).resolve().parents[2]
REFERENCE = REPO / "tests" / "fixtures" / "reference"
RESOURCES = {(r.group, r.version, r.kind): r for r in builtin_resources()}


def _load(name: str):
    return json.loads((REFERENCE / "http" / name).read_text())


def _stdout(name: str) -> str:
    return (REFERENCE / "kubectl" / "v6" / name).read_text()


def _items(text: str) -> list[dict]:
    doc = yaml.safe_load(text)
    return doc["items"] if doc.get("kind") == "List" else [doc]


def _rendered(resource: ResourceType, objs: list[dict], now: datetime) -> list[list[str]]:
    """Rows as kubectl prints them: priority-0 columns only, nil cells blank."""
    shown = [i for i, c in enumerate(columns(resource)) if c["priority"] == 0]
    header = [columns(resource)[i]["name"].upper() for i in shown]
    rows = [header]
    for obj in objs:
        row = cells(resource, obj, now)
        rows.append(["" if row[i] is None else str(row[i]).lower() if isinstance(row[i], bool) else str(row[i])
                     for i in shown])
    return rows


def _parsed(out: str) -> list[list[str]]:
    """kubectl's aligned columns back into cells, using the header's column starts."""
    lines = out.rstrip("\n").split("\n")
    starts = [m.start() for m in re.finditer(r"\S+(?: \S+)*", lines[0])]
    bounds = list(zip(starts, starts[1:] + [None], strict=True))
    return [[line[a:b].strip() for a, b in bounds] for line in lines]


def _created(obj: dict) -> datetime:
    return datetime.fromisoformat(obj["metadata"]["creationTimestamp"])


def test_configmap_list_table_matches_the_real_body_exactly():
    ref = _load("cm-list-table.body")
    meta = ref["rows"][0]["object"]["metadata"]
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {"k": "v"}}
    now = _created(obj) + timedelta(milliseconds=400)
    got = table(RESOURCES["", "v1", "ConfigMap"], [obj], now, list_meta={"resourceVersion": "200"})
    assert got == ref


def test_configmap_get_table_has_the_same_shape_as_the_real_one():
    ref = _load("cm-get-table.body")
    meta = ref["rows"][0]["object"]["metadata"]
    obj = {"metadata": meta, "data": {"k": "v"}}
    got = table(RESOURCES["", "v1", "ConfigMap"], [obj], _created(obj),
                list_meta={"resourceVersion": meta["resourceVersion"]})
    assert got == ref
    assert list(got) == ["kind", "apiVersion", "metadata", "columnDefinitions", "rows"]
    assert list(got["columnDefinitions"][0]) == ["name", "type", "format", "description", "priority"]


def test_watch_events_after_the_first_carry_no_column_definitions():
    events = [json.loads(line) for line in (REFERENCE / "http" / "watch-table.body").read_text().splitlines() if line]
    cm = RESOURCES["", "v1", "ConfigMap"]
    for index, event in enumerate(events):
        ref = event["object"]
        meta = ref["rows"][0]["object"]["metadata"]
        obj = {"metadata": meta, "data": {"k": "v"}}
        now = _created(obj) + timedelta(seconds=float(ref["rows"][0]["cells"][2][:-1]) + 0.2)
        got = table(cm, [obj], now, list_meta={"resourceVersion": ref["metadata"]["resourceVersion"]},
                    headers=index == 0)
        assert got == ref


def test_services_print_like_kubectl_get_svc():
    services = _items(_stdout("29-get-svc-yaml.out"))
    expected = _parsed(_stdout("30-get-svc.out"))
    now = _created(services[0]) + timedelta(milliseconds=300)
    got = _rendered(RESOURCES["", "v1", "Service"], services, now)
    assert got[0] == expected[0][1:]
    demo_rows = [row[1:] for row in expected[1:] if row[0] == "demo"]
    assert got[1:] == demo_rows


def test_namespaces_print_like_kubectl_get_ns():
    expected = _parsed(_stdout("03-get-ns.out"))
    names = [row[0] for row in expected[1:]]
    created = datetime(2026, 11, 22, 2, 8, 45, tzinfo=UTC)
    namespaces = [{"metadata": {"name": n, "creationTimestamp": "2026-11-22T02:08:45Z"}, "status": {"phase": "Active"}}
                  for n in names]
    got = _rendered(RESOURCES["", "v1", "Namespace"], namespaces, created + timedelta(seconds=2.5))
    assert got == expected


def test_terminating_namespace_shows_its_phase():
    ns = _items(_stdout("33-get-ns-demo-yaml.out"))[0]
    assert cells(RESOURCES["", "v1", "Namespace"], ns, _created(ns) + timedelta(seconds=21))[:2] == ["demo",
                                                                                                   "Terminating"]


def test_deployment_without_controllers_prints_like_kubectl():
    manifest = yaml.safe_load((REFERENCE / "kubectl" / "manifests" / "deploy.yaml").read_text())
    manifest["metadata"]["creationTimestamp"] = "2026-11-22T02:08:47Z"
    manifest["status"] = {}
    expected = _parsed(_stdout("08-get-deploy.out"))
    got = _rendered(RESOURCES["apps", "v1", "Deployment"], [manifest], _created(manifest) + timedelta(seconds=1.2))
    assert got == expected


def test_custom_resource_uses_the_crd_printer_columns():
    crd = yaml.safe_load((REFERENCE / "kubectl" / "manifests" / "crd-agent.yaml").read_text())
    version = crd["spec"]["versions"][0]
    agents = ResourceType(group="example.com", version="v1", kind="Agent", plural="agents", namespaced=True,
                          crd=crd, printer_columns=tuple(version["additionalPrinterColumns"]))
    agent = _items(_stdout("25-get-agent-yaml.out"))[0]
    expected = _parsed(_stdout("24-get-agents.out"))
    assert _rendered(agents, [agent], _created(agent) + timedelta(milliseconds=100)) == expected
    defs = columns(agents)
    assert defs[1]["description"] == "Custom resource definition column (in JSONPath format): .spec.model"
    assert [d["type"] for d in defs] == ["string", "string", "integer", "string", "date"]
