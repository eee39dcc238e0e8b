"""CRDs over their life: rejected when invalid, served at once, changed, deleted with their custom resources,
refused names, and kept across a restart."""

from __future__ import annotations

import json

import pytest
import yaml
from mini_kube.client import ApiError, ResourceRef
from mini_kube.machinery.refs import CUSTOMRESOURCEDEFINITIONS

from mini_kube.testing import MiniKube
from tests.crd_api.support import AGENT, AGENT_CRD, WIDGET_CRD, Cluster, eventually

AGENTS = ResourceRef("example.com", "v1", "agents")

BAD_CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gizmos.test.io}
spec:
  group: test.io
  scope: Everywhere
  names: {plural: gizmos, singular: gizmo, kind: Gizmo}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            properties:
              size: {type: integer}
  - name: v2
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object}
"""

HELD = """\
apiVersion: example.com/v1
kind: Agent
metadata: {name: held, namespace: demo, finalizers: [example.com/hold]}
spec: {model: large}
"""


def crd_of(cluster: Cluster, name: str) -> dict:
    return json.loads(cluster.kubectl("get", "crd", name, "-o", "json").stdout)


def conditions(crd: dict) -> dict[str, tuple[str, str]]:
    return {c["type"]: (c["status"], c["reason"]) for c in crd["status"]["conditions"]}


def test_invalid_crd_is_refused_and_nothing_is_served(cluster: Cluster) -> None:
    result = cluster.kubectl("apply", "-f", "-", input=BAD_CRD, check=False)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert lines[0] == 'The CustomResourceDefinition "gizmos.test.io" is invalid: '
    assert '* spec.scope: Unsupported value: "Everywhere": supported values: "Cluster", "Namespaced"' in lines
    assert ("* spec.versions[0].schema.openAPIV3Schema.properties[spec].type: Required value: must not be empty "
            "for specified object fields") in lines
    assert any(line.startswith("* spec.versions: Invalid value: []apiextensions.CustomResourceDefinitionVersion{")
               and line.endswith("must have exactly one version marked as storage version") for line in lines)
    assert cluster.kubectl("get", "crd", "-o", "name").stdout == ""
    assert cluster.get("/apis/test.io")[0] == 404
    result = cluster.kubectl("apply", "-f", "-", check=False, input=AGENT_CRD.replace(
        "name: agents.example.com", "name: agent.example.com"))
    assert 'metadata.name: Invalid value: "agent.example.com": must be spec.names.plural+"."+spec.group' \
        in result.stderr


def test_custom_resources_are_served_as_soon_as_the_crd_is_created(cluster: Cluster) -> None:
    crd = yaml.safe_load(AGENT_CRD)
    created = cluster.client.create(CUSTOMRESOURCEDEFINITIONS, crd)
    listed = cluster.client.list(AGENTS, "default")  # the very next request already reaches the new API
    assert conditions(created)["Established"] == ("True", "InitialNamesAccepted")
    assert listed["kind"] == "AgentList" and listed["items"] == []
    # and kubectl needs no wait between applying a CRD and its first custom resource
    cluster.kubectl("create", "namespace", "demo")
    fresh = cluster.kubectl("apply", "-f", "-", input=WIDGET_CRD + "---\n" + AGENT.replace("a1", "a2"))
    assert "agent.example.com/a2 created" in fresh.stdout


@pytest.mark.slow
def test_changing_a_crd_changes_the_api(agents: Cluster) -> None:
    agents.apply(AGENT)
    crd = crd_of(agents, "agents.example.com")
    version = crd["spec"]["versions"][0]
    version["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["tier"] = {
        "type": "string", "default": "gold"}
    version["additionalPrinterColumns"].insert(0, {"name": "Tier", "type": "string", "jsonPath": ".spec.tier"})
    beta = json.loads(json.dumps(version))
    beta.update(name="v2beta1", storage=False)
    crd["spec"]["versions"].append(beta)
    crd["spec"]["names"]["shortNames"] = ["agt"]
    agents.kubectl("replace", "-f", "-", input=json.dumps(crd))
    crd = crd_of(agents, "agents.example.com")
    assert crd["metadata"]["generation"] == 2
    assert crd["status"]["acceptedNames"]["shortNames"] == ["agt"]
    # a default added to the schema shows on objects stored before (defaulting on read)
    got = json.loads(agents.kubectl("get", "agt", "a1", "-n", "demo", "-o", "json").stdout)
    assert got["spec"]["tier"] == "gold"
    assert agents.kubectl("get", "agents.v2beta1.example.com", "-n", "demo").stdout.split()[:4] == [
        "NAME", "TIER", "MODEL", "REPLICAS"]
    assert agents.get("/apis/example.com")[1]["preferredVersion"]["version"] == "v1"
    assert "tier\t<string>" in agents.kubectl("explain", "agents.spec").stdout  # OpenAPI follows the CRD
    # no longer serving a version removes it
    crd["spec"]["versions"][1]["served"] = False
    agents.kubectl("replace", "-f", "-", input=json.dumps(crd))
    assert agents.get("/apis/example.com/v2beta1")[0] == 404
    assert agents.get("/apis/example.com/v1")[0] == 200
    agents.forget_discovery()
    result = agents.kubectl("get", "ag", check=False)
    assert result.returncode == 1 and 'the server doesn\'t have a resource type "ag"' in result.stderr
    # immutable fields stay as they were
    crd = crd_of(agents, "agents.example.com")
    crd["spec"]["scope"] = "Cluster"
    result = agents.kubectl("replace", "-f", "-", input=json.dumps(crd), check=False)
    assert 'spec.scope: Invalid value: "Cluster": field is immutable' in result.stderr


def test_deleting_a_crd_deletes_its_custom_resources_and_the_api(agents: Cluster) -> None:
    agents.apply(AGENT)
    agents.kubectl("create", "namespace", "other")
    agents.apply(AGENT.replace("demo", "other"))
    out = agents.kubectl("delete", "crd", "agents.example.com").stdout
    assert out.strip() == 'customresourcedefinition.apiextensions.k8s.io "agents.example.com" deleted'
    assert agents.get("/apis/example.com/v1")[0] == 404
    assert agents.get("/apis/example.com")[0] == 404
    assert agents.get("/openapi/v3/apis/example.com/v1")[0] == 404
    groups = [g["name"] for g in agents.get("/apis")[1]["groups"]]
    assert "example.com" not in groups
    agents.forget_discovery()
    result = agents.kubectl("get", "agents", "-A", check=False)
    assert result.returncode == 1 and 'the server doesn\'t have a resource type "agents"' in result.stderr
    stored = agents.kube.run(agents.kube.server.store.range("/registry/example.com/"))
    assert stored.kvs == []
    # the same CRD again starts empty
    agents.apply(AGENT_CRD)
    assert agents.kubectl("get", "agents", "-A", "-o", "name").stdout == ""


def test_a_terminating_crd_waits_for_its_custom_resources(agents: Cluster) -> None:
    agents.apply(HELD)
    agents.kubectl("delete", "crd", "agents.example.com", "--wait=false")
    crd = crd_of(agents, "agents.example.com")
    assert crd["metadata"]["finalizers"] == ["customresourcecleanup.apiextensions.k8s.io"]
    assert "deletionTimestamp" in crd["metadata"]
    eventually(lambda: conditions(crd_of(agents, "agents.example.com")).get("Terminating")
               == ("True", "InstanceDeletionInProgress"))
    result = agents.kubectl("apply", "-f", "-", input=AGENT, check=False)
    assert result.returncode == 1
    assert result.stderr.strip() == ('Error from server (MethodNotAllowed): error when creating "STDIN": create '
                                     'not allowed while custom resource definition is terminating')
    held = json.loads(agents.kubectl("get", "agent", "held", "-n", "demo", "-o", "json").stdout)
    assert "deletionTimestamp" in held["metadata"]  # being deleted, held by its own finalizer
    agents.kubectl("patch", "agent", "held", "-n", "demo", "--type=json",
                   "-p", '[{"op": "remove", "path": "/metadata/finalizers"}]')
    agents.kubectl("wait", "--for=delete", "crd/agents.example.com", "--timeout=10s")
    assert agents.get("/apis/example.com/v1")[0] == 404


def test_refused_names_are_accepted_once_free(widgets: Cluster) -> None:
    widgets.apply("""\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.test.io}
spec:
  group: test.io
  scope: Cluster
  names: {plural: gadgets, singular: gadget, kind: Widget, shortNames: [wd]}
  versions:
  - {name: v1, served: true, storage: true,
     schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}
""")
    gadgets = crd_of(widgets, "gadgets.test.io")
    assert conditions(gadgets) == {"NamesAccepted": ("False", "ListKindConflict"),
                                   "Established": ("False", "NotAccepted")}
    assert widgets.get("/apis/test.io/v1/gadgets")[0] == 404
    widgets.kubectl("delete", "crd", "widgets.test.io")
    eventually(lambda: conditions(crd_of(widgets, "gadgets.test.io"))["Established"][0] == "True")
    out = widgets.kubectl("api-resources", "--api-group=test.io").stdout.splitlines()
    assert out[1].split() == ["gadgets", "wd", "test.io/v1", "false", "Widget"]


@pytest.mark.slow
def test_crd_api_survives_a_restart(data_dir: str, tmp_path) -> None:
    with MiniKube(data_dir=data_dir) as kube:
        cluster = Cluster(kube, tmp_path / "cache1")
        cluster.apply(AGENT_CRD)
        cluster.kubectl("create", "namespace", "demo")
        cluster.apply(AGENT)
        cluster.apply(HELD)
        cluster.apply(WIDGET_CRD)
        cluster.kubectl("delete", "crd", "widgets.test.io")
    with MiniKube(data_dir=data_dir) as kube:
        cluster = Cluster(kube, tmp_path / "cache2")
        table = cluster.kubectl("get", "agents", "-n", "demo").stdout.splitlines()
        assert [line.split()[:3] for line in table[1:]] == [["a1", "small", "1"], ["held", "large", "1"]]
        assert cluster.get("/apis/test.io")[0] == 404
        cluster.kubectl("delete", "crd", "agents.example.com", "--wait=false")
    with MiniKube(data_dir=data_dir) as kube:  # a deletion in progress goes on after a restart
        cluster = Cluster(kube, tmp_path / "cache3")
        with pytest.raises(ApiError) as err:
            cluster.client.create(AGENTS, {"metadata": {"name": "late"}, "spec": {"model": "small"}}, "demo")
        assert err.value.status == 405
        cluster.kubectl("patch", "agent", "held", "-n", "demo", "--type=merge", "-p",
                        '{"metadata": {"finalizers": null}}')
        cluster.kubectl("wait", "--for=delete", "crd/agents.example.com", "--timeout=10s")
        assert cluster.get("/apis/example.com/v1")[0] == 404


def test_reapplying_a_crd_client_side_and_server_side(cluster: Cluster) -> None:
    cluster.apply(AGENT_CRD)
    changed = cluster.apply(AGENT_CRD.replace("shortNames: [ag]", "shortNames: [ag, agt]"))
    assert changed.strip() == "customresourcedefinition.apiextensions.k8s.io/agents.example.com configured"
    out = cluster.kubectl("api-resources", "--api-group=example.com").stdout.splitlines()
    assert out[1].split()[:2] == ["agents", "ag,agt"]
    for categories in ("[shop]", "[shop, all]"):
        out = cluster.kubectl("apply", "--server-side", "-f", "-",
                              input=WIDGET_CRD.replace("categories: [shop]", f"categories: {categories}")).stdout
        assert out.strip() == "customresourcedefinition.apiextensions.k8s.io/widgets.test.io serverside-applied"
    crd = crd_of(cluster, "widgets.test.io")
    assert crd["status"]["acceptedNames"]["categories"] == ["shop", "all"]
    assert crd["metadata"]["generation"] == 2
    assert conditions(crd)["Established"][0] == "True"
