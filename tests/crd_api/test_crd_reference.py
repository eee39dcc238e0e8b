"""The reference captures 21-27c replayed with real kubectl: a CRD applied, waited for, and Agents served."""

from __future__ import annotations

import json

import yaml

from tests.crd_api.support import AGENT, AGENT_BAD, AGENT_BAD_SCHEMA, AGENT_CRD, Cluster

BAD_SCHEMA_ERRORS = {
    '* spec.model: Unsupported value: "huge": supported values: "small", "medium", "large"',
    '* spec.prompt: Invalid value: "integer": spec.prompt in body must be of type string: "integer"',
    "* spec.replicas: Invalid value: 50: spec.replicas in body should be less than or equal to 10",
}


def test_apply_crd_and_wait_established(cluster: Cluster) -> None:
    assert cluster.apply(AGENT_CRD).strip() == "customresourcedefinition.apiextensions.k8s.io/agents.example.com created"
    out = cluster.kubectl("wait", "--for", "condition=established", "--timeout=30s", "crd/agents.example.com")
    assert out.stdout.strip() == "customresourcedefinition.apiextensions.k8s.io/agents.example.com condition met"
    crd = json.loads(cluster.kubectl("get", "crd", "agents.example.com", "-o", "json").stdout)
    conditions = {c["type"]: (c["status"], c["reason"]) for c in crd["status"]["conditions"]}
    assert conditions == {"NamesAccepted": ("True", "NoConflicts"), "Established": ("True", "InitialNamesAccepted")}
    assert crd["status"]["acceptedNames"] == {"plural": "agents", "singular": "agent", "shortNames": ["ag"],
                                              "kind": "Agent", "listKind": "AgentList"}
    assert crd["status"]["storedVersions"] == ["v1"]
    assert crd["spec"]["conversion"] == {"strategy": "None"}
    assert crd["metadata"]["generation"] == 1


def test_apply_agent_then_get_table_and_yaml(agents: Cluster) -> None:
    assert agents.apply(AGENT).strip() == "agent.example.com/a1 created"
    table = agents.kubectl("get", "agents", "-n", "demo").stdout.splitlines()
    assert table[0].split() == ["NAME", "MODEL", "REPLICAS", "PHASE", "AGE"]
    assert table[1].split()[:3] == ["a1", "small", "1"]  # replicas defaulted; no phase yet
    assert len(table) == 2
    got = yaml.safe_load(agents.kubectl("get", "agent", "a1", "-n", "demo", "-o", "yaml").stdout)
    assert got["apiVersion"] == "example.com/v1" and got["kind"] == "Agent"
    assert got["spec"] == {"model": "small", "prompt": "hello", "replicas": 1}
    assert got["metadata"]["generation"] == 1
    assert set(got["metadata"]) == {"annotations", "creationTimestamp", "generation", "name", "namespace",
                                    "resourceVersion", "uid"}
    assert "status" not in got  # a status subresource: create drops it, nothing set it yet


def test_unknown_field_is_a_strict_decoding_error(agents: Cluster) -> None:
    expected = ('Error from server (BadRequest): error when creating "STDIN": Agent in version "v1" cannot be '
                'handled as a Agent: strict decoding error: unknown field "spec.unknownField"')
    for verb in ("apply", "create"):
        result = agents.kubectl(verb, "-f", "-", input=AGENT_BAD, check=False)
        assert result.returncode == 1
        assert result.stderr.strip() == expected


def test_schema_errors_are_listed_and_nothing_is_stored(agents: Cluster) -> None:
    for extra in ((), ("--validate=false",)):
        result = agents.kubectl("create", *extra, "-f", "-", input=AGENT_BAD_SCHEMA, check=False)
        assert result.returncode == 1
        lines = result.stderr.strip().splitlines()
        assert lines[0] == 'The Agent "bad2" is invalid: '
        assert set(lines[1:]) == BAD_SCHEMA_ERRORS
    # with --validate=false the unknown field is pruned instead of refused; the schema errors remain
    result = agents.kubectl("create", "--validate=false", "-f", "-", input=AGENT_BAD, check=False)
    assert result.returncode == 1 and "unknownField" not in result.stderr
    assert 'spec.model: Unsupported value: "huge"' in result.stderr
    listed = agents.kubectl("get", "agents", "-n", "demo", "-o", "name").stdout
    assert listed == ""


def test_explain_custom_resource(agents: Cluster) -> None:
    out = agents.kubectl("explain", "agents.spec").stdout
    assert "KIND:       Agent" in out and "VERSION:    v1" in out
    assert "model\t<string> -required-" in out
    assert "enum: small, medium, large" in out
    assert "replicas\t<integer>" in out


def test_discovery_and_short_name(agents: Cluster) -> None:
    agents.apply(AGENT)
    out = agents.kubectl("api-resources", "--api-group=example.com").stdout.splitlines()
    assert out[1].split() == ["agents", "ag", "example.com/v1", "true", "Agent"]
    assert agents.kubectl("get", "ag", "-n", "demo", "-o", "name").stdout.strip() == "agent.example.com/a1"
    status, group = agents.get("/apis/example.com")
    assert status == 200 and group["preferredVersion"] == {"groupVersion": "example.com/v1", "version": "v1"}
    status, resources = agents.get("/apis/example.com/v1")
    assert [(r["name"], r["kind"]) for r in resources["resources"]] == [("agents", "Agent"),
                                                                       ("agents/status", "Agent")]
    status, doc = agents.get("/openapi/v3/apis/example.com/v1")
    assert status == 200 and "com.example.v1.Agent" in doc["components"]["schemas"]
