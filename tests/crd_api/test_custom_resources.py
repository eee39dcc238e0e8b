"""Custom resources with real kubectl: status and scale subresources, generation, several versions,
printer columns, selectable fields, CEL rules, defaulting and pruning, watch."""

from __future__ import annotations

import json
from typing import Any

import pytest
from mini_kube.client import ApiError, ResourceRef

from tests.crd_api.support import AGENT, Cluster

W1 = """\
apiVersion: test.io/v1
kind: Widget
metadata: {name: w1, namespace: default}
spec: {color: green, replicas: 2}
"""

W2_BETA = """\
apiVersion: test.io/v1beta1
kind: Widget
metadata: {name: w2, namespace: default}
spec: {color: red, replicas: 9, legacy: x}
"""

V1 = ResourceRef("test.io", "v1", "widgets")
V1BETA1 = ResourceRef("test.io", "v1beta1", "widgets")


def widget(cluster: Cluster, name: str, version: str = "v1") -> dict[str, Any]:
    out = cluster.kubectl("get", f"widgets.{version}.test.io", name, "-o", "json").stdout
    return json.loads(out)


def test_status_subresource_and_generation(widgets: Cluster) -> None:
    widgets.apply(W1)
    widgets.kubectl("patch", "widget", "w1", "--subresource=status", "--type=merge",
                    "-p", '{"status": {"phase": "Ready", "replicas": 2}, "spec": {"color": "pink"}}')
    got = widget(widgets, "w1")
    assert got["status"] == {"phase": "Ready", "replicas": 2}
    assert got["spec"]["color"] == "green"  # the status endpoint ignores the rest
    assert got["metadata"]["generation"] == 1
    widgets.kubectl("patch", "widget", "w1", "--type=merge",
                    "-p", '{"status": {"phase": "Hacked"}, "metadata": {"labels": {"a": "b"}}}')
    got = widget(widgets, "w1")
    assert got["status"]["phase"] == "Ready"  # the main endpoint ignores status
    assert got["metadata"]["labels"] == {"a": "b"}
    assert got["metadata"]["generation"] == 1  # metadata and status changes do not bump it
    widgets.kubectl("patch", "widget", "w1", "--type=merge", "-p", '{"spec": {"size": 1.5}}')
    assert widget(widgets, "w1")["metadata"]["generation"] == 2


def test_status_is_validated_against_its_schema(widgets: Cluster) -> None:
    widgets.apply(W1)
    result = widgets.kubectl("patch", "widget", "w1", "--subresource=status", "--type=merge",
                             "-p", '{"status": {"replicas": "many"}}', check=False)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert lines[:2] == ['The Widget "w1" is invalid: ',  # kube-openapi words the path from the status root
                         '* status.replicas: Invalid value: "string": replicas in body must be of type integer: '
                         '"string"']
    assert widget(widgets, "w1").get("status") is None


def test_generation_without_status_subresource_counts_status(agents: Cluster) -> None:
    crd = json.loads(agents.kubectl("get", "crd", "agents.example.com", "-o", "json").stdout)
    del crd["spec"]["versions"][0]["subresources"]
    agents.kubectl("replace", "-f", "-", input=json.dumps(crd))
    agents.apply("""\
apiVersion: example.com/v1
kind: Agent
metadata: {name: a1, namespace: demo}
spec: {model: small}
status: {phase: Running}
""")
    got = json.loads(agents.kubectl("get", "agent", "a1", "-n", "demo", "-o", "json").stdout)
    assert got["status"] == {"phase": "Running"}  # no status subresource: status is written like the rest
    agents.kubectl("patch", "agent", "a1", "-n", "demo", "--type=merge", "-p", '{"status": {"phase": "Done"}}')
    got = json.loads(agents.kubectl("get", "agent", "a1", "-n", "demo", "-o", "json").stdout)
    assert got["status"] == {"phase": "Done"} and got["metadata"]["generation"] == 2


def test_kubectl_scale(widgets: Cluster) -> None:
    widgets.apply(W1)
    widgets.kubectl("patch", "widget", "w1", "--subresource=status", "--type=merge",
                    "-p", '{"status": {"replicas": 2, "selector": "app=w1"}}')
    assert widgets.kubectl("scale", "widget/w1", "--replicas=4").stdout.strip() == "widget.test.io/w1 scaled"
    got = widget(widgets, "w1")
    assert got["spec"]["replicas"] == 4 and got["metadata"]["generation"] == 2
    scale = json.loads(widgets.kubectl("get", "widget", "w1", "--subresource=scale", "-o", "json").stdout)
    assert (scale["kind"], scale["apiVersion"]) == ("Scale", "autoscaling/v1")
    assert scale["spec"] == {"replicas": 4} and scale["status"] == {"replicas": 2, "selector": "app=w1"}
    # CEL rules still apply to writes through the scale subresource
    result = widgets.kubectl("scale", "widget/w1", "--replicas=7", check=False)
    assert result.returncode == 1 and "too many replicas for green" in result.stderr
    result = widgets.kubectl("scale", "widget/w1", "--replicas=-1", check=False)
    assert result.returncode == 1


def test_two_served_versions_read_back_in_both(widgets: Cluster) -> None:
    widgets.apply(W1)
    widgets.apply(W2_BETA)
    w1_beta = widget(widgets, "w1", "v1beta1")
    assert w1_beta["apiVersion"] == "test.io/v1beta1"
    assert w1_beta["spec"] == {"color": "green", "replicas": 2}
    w2 = widget(widgets, "w2", "v1")
    assert w2["apiVersion"] == "test.io/v1"
    # written as v1beta1, stored as v1: v1's schema pruned `legacy`; v1's defaults do not add `size`
    assert w2["spec"] == {"color": "red", "replicas": 9}
    assert widget(widgets, "w2", "v1beta1")["spec"] == {"color": "red", "replicas": 9}
    listed = json.loads(widgets.kubectl("get", "widgets.v1beta1.test.io", "-o", "json").stdout)
    assert {i["apiVersion"] for i in listed["items"]} == {"test.io/v1beta1"}
    assert widgets.client.get(V1BETA1, "w1", "default")["apiVersion"] == "test.io/v1beta1"
    # an update through the non-storage version keeps its own fields' changes and bumps generation once
    widgets.kubectl("patch", "widgets.v1beta1.test.io", "w1", "--type=merge", "-p", '{"spec": {"replicas": 3}}')
    got = widget(widgets, "w1")
    assert got["spec"] == {"color": "green", "replicas": 3} and got["metadata"]["generation"] == 2
    # a no-op write changes nothing
    before = widget(widgets, "w1")
    widgets.client.replace(V1, before, "default")
    assert widget(widgets, "w1")["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]


def test_printer_columns_priority_and_categories(widgets: Cluster) -> None:
    widgets.apply(W1)
    widgets.kubectl("patch", "widget", "w1", "--type=merge", "-p", '{"spec": {"size": 2.5}}')
    table = widgets.kubectl("get", "wd").stdout.splitlines()
    assert table[0].split() == ["NAME", "COLOR", "REPLICAS"]  # priority 1 is for -o wide
    assert table[1].split() == ["w1", "green", "2"]
    wide = widgets.kubectl("get", "wd", "-o", "wide").stdout.splitlines()
    assert wide[0].split() == ["NAME", "COLOR", "REPLICAS", "SIZE"]
    assert wide[1].split() == ["w1", "green", "2", "2.5"]
    assert widgets.kubectl("get", "shop", "-o", "name").stdout.split() == ["widget.test.io/w1"]
    table = widgets.client.request("GET", "/apis/test.io/v1/namespaces/default/widgets",
                                   accept="application/json;as=Table;v=v1;g=meta.k8s.io")
    assert [(c["name"], c["type"], c["priority"]) for c in table["columnDefinitions"]] == [
        ("Name", "string", 0), ("Color", "string", 0), ("Replicas", "integer", 0), ("Size", "number", 1)]
    assert table["rows"][0]["cells"] == ["w1", "green", 2, 2.5]


def test_selectable_fields(widgets: Cluster) -> None:
    widgets.apply(W1)
    widgets.apply(W2_BETA)
    names = widgets.kubectl("get", "wd", "--field-selector", "spec.color=red", "-o", "name").stdout.split()
    assert names == ["widget.test.io/w2"]
    names = widgets.kubectl("get", "wd", "--field-selector", "spec.color!=red", "-o", "name").stdout.split()
    assert names == ["widget.test.io/w1"]
    result = widgets.kubectl("get", "wd", "--field-selector", "spec.replicas=2", check=False)
    assert result.returncode == 1 and "field label not supported: spec.replicas" in result.stderr


def test_cel_rules_with_message_expression_and_transition(widgets: Cluster) -> None:
    result = widgets.kubectl("apply", "-f", "-", check=False, input="""\
apiVersion: test.io/v1
kind: Widget
metadata: {name: big, namespace: default}
spec: {color: green, replicas: 8}
""")
    assert result.returncode == 1
    assert 'The Widget "big" is invalid: spec: Invalid value: "object": too many replicas for green' \
        in result.stderr
    widgets.apply(W1)
    result = widgets.kubectl("patch", "widget", "w1", "--type=merge", "-p", '{"spec": {"color": "red"}}',
                             check=False)
    assert result.returncode == 1
    assert 'spec: Invalid value: "object": color is immutable' in result.stderr
    assert widget(widgets, "w1")["spec"]["color"] == "green"


def test_defaulting_and_pruning(widgets: Cluster) -> None:
    widgets.kubectl("create", "--validate=false", "-f", "-", input="""\
apiVersion: test.io/v1
kind: Widget
metadata: {name: w3, namespace: default, bogus: 1}
spec: {extra: yes}
status: {phase: Ready}
""")
    got = widget(widgets, "w3")
    assert got["spec"] == {"color": "blue", "replicas": 1}  # defaults filled in, unknown field dropped
    assert "bogus" not in got["metadata"] and "status" not in got
    result = widgets.kubectl("create", "-f", "-", check=False, input="""\
apiVersion: test.io/v1
kind: Widget
metadata: {name: w4, namespace: default}
spec: {extra: yes}
""")
    assert 'strict decoding error: unknown field "spec.extra"' in result.stderr
    warned = widgets.kubectl("create", "--validate=warn", "-f", "-", input="""\
apiVersion: test.io/v1
kind: Widget
metadata: {name: w5, namespace: default}
spec: {extra: yes}
""")
    assert 'unknown field "spec.extra"' in warned.stderr


def test_watch_in_the_requested_version(widgets: Cluster) -> None:
    widgets.apply(W1)
    start = widgets.client.list(V1, "default")["metadata"]["resourceVersion"]
    widgets.kubectl("label", "widget", "w1", "x=y")

    async def first_events() -> list[dict[str, Any]]:
        events = []
        async for event in widgets.client.async_client.watch(V1BETA1, "default", resource_version="0",
                                                               timeout_seconds=1):
            events.append(event)
            if len(events) == 1:
                break
        async for event in widgets.client.async_client.watch(V1BETA1, "default", resource_version=start,
                                                               timeout_seconds=1):
            events.append(event)
            break
        return events

    added, modified = widgets.kube.run(first_events())
    assert added["type"] == "ADDED" and added["object"]["apiVersion"] == "test.io/v1beta1"
    assert modified["type"] == "MODIFIED" and modified["object"]["apiVersion"] == "test.io/v1beta1"
    assert modified["object"]["metadata"]["labels"] == {"x": "y"}


def test_cluster_scoped_custom_resource(cluster: Cluster) -> None:
    cluster.apply("""\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: regions.geo.test.io}
spec:
  group: geo.test.io
  scope: Cluster
  names: {plural: regions, singular: region, kind: Region}
  versions:
  - name: v1alpha1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
""")
    cluster.apply("apiVersion: geo.test.io/v1alpha1\nkind: Region\nmetadata: {name: eu}\nspec: {zones: 3}\n")
    table = cluster.kubectl("get", "regions").stdout.splitlines()
    assert table[0].split() == ["NAME", "AGE"] and table[1].split()[0] == "eu"
    got = json.loads(cluster.kubectl("get", "region", "eu", "-o", "json").stdout)
    assert got["spec"] == {"zones": 3} and "namespace" not in got["metadata"]


@pytest.mark.parametrize("path", ["/apis/test.io/v1/namespaces/default/widgets/nope",
                                  "/apis/test.io/v1/namespaces/default/widgets/nope/status"])
def test_missing_custom_resource_is_404(widgets: Cluster, path: str) -> None:
    with pytest.raises(ApiError) as err:
        widgets.client.request("GET", path)
    assert err.value.status == 404
    assert err.value.body["message"] == 'widgets.test.io "nope" not found'


def test_reapply_server_side_apply_and_delete_all(agents: Cluster) -> None:
    agents.apply(AGENT)
    # client-side apply of a change: custom resources take merge patches (no strategic merge patch)
    assert agents.apply(AGENT.replace("hello", "bye")).strip() == "agent.example.com/a1 configured"
    ssa = AGENT.replace("a1", "a2")
    out = agents.kubectl("apply", "--server-side", "-f", "-", input=ssa).stdout
    assert out.strip() == "agent.example.com/a2 serverside-applied"
    agents.kubectl("apply", "--server-side", "-f", "-", input=ssa.replace("hello", "again"))
    got = {i["metadata"]["name"]: i for i in json.loads(
        agents.kubectl("get", "agents", "-n", "demo", "-o", "json").stdout)["items"]}
    assert got["a1"]["spec"] == {"model": "small", "prompt": "bye", "replicas": 1}
    assert got["a1"]["metadata"]["generation"] == 2
    assert got["a2"]["spec"]["prompt"] == "again"
    managed = agents.client.get(ResourceRef("example.com", "v1", "agents"), "a2", "demo")["metadata"]["managedFields"]
    assert [(m["manager"], m["operation"], m["fieldsV1"]) for m in managed] == [
        ("kubectl", "Apply", {"f:spec": {"f:model": {}, "f:prompt": {}}})]
    out = agents.kubectl("delete", "agents", "--all", "-n", "demo").stdout.splitlines()
    assert out == ['agent.example.com "a1" deleted', 'agent.example.com "a2" deleted']


def test_deleting_a_namespace_deletes_its_custom_resources(agents: Cluster) -> None:
    agents.apply(AGENT)
    agents.kubectl("delete", "namespace", "demo", "--timeout=20s")
    assert agents.kubectl("get", "agents", "-A", "-o", "name").stdout == ""
