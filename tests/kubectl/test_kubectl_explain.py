"""`kubectl explain` from our OpenAPI: built-in kinds (v3, and v2 for old clients) and custom resources."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator

import pytest

from tests.kubectl.cli import Kubectl

CONVENTIONS = "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md"


def crd(group: str) -> str:
    spec = {"type": "object", "required": ["size"], "properties": {
        "size": {"type": "integer", "description": "How many gadgets."},
        "template": {"type": "object", "x-kubernetes-embedded-resource": True,
                     "x-kubernetes-preserve-unknown-fields": True,
                     "description": "An object the gadget creates."},
        "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["port"],
                  "items": {"type": "object", "required": ["port"],
                            "properties": {"port": {"type": "integer"}, "name": {"type": "string"}}}}}}
    return json.dumps({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": f"gadgets.{group}"},
        "spec": {"group": group, "scope": "Namespaced",
                 "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget", "listKind": "GadgetList"},
                 "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                     "type": "object", "description": "A gadget.",
                     "properties": {"spec": spec, "status": {"type": "object"}}}}}]}})


@pytest.fixture
def gadgets(kc: Kubectl) -> Iterator[str]:
    """A CRD with a unique group on the session cluster, removed afterwards."""
    group = f"k{uuid.uuid4().hex[:8]}.example.com"
    kc.run("apply", "-f", "-", input=crd(group), namespaced=False)
    kc.run("wait", "--for=condition=Established", f"crd/gadgets.{group}", "--timeout=20s", namespaced=False)
    yield group
    kc.run("delete", "crd", f"gadgets.{group}", "--wait=false", namespaced=False)


def test_explain_builtin_fields(kc: Kubectl):
    ports = kc.out("explain", "pod.spec.containers.ports").splitlines()
    assert ports[:5] == ["KIND:       Pod", "VERSION:    v1", "", "FIELD: ports <[]ContainerPort>", ""]
    assert "  containerPort\t<integer> -required-" in ports
    recursive = kc.out("explain", "deployment.spec.strategy", "--recursive").splitlines()
    assert recursive[-4:] == ["  rollingUpdate\t<RollingUpdateDeployment>", "    maxSurge\t<IntOrString>",
                              "    maxUnavailable\t<IntOrString>", "  type\t<string>"]
    typo = kc.run("explain", "deployment.spec.replicaz", check=False)
    assert typo.stderr == 'error: field "replicaz" does not exist\n'


def test_explain_custom_resource(kc: Kubectl, gadgets: str):
    out = kc.out("explain", "gadgets").splitlines()
    assert out[:3] == [f"GROUP:      {gadgets}", "KIND:       Gadget", "VERSION:    v1"]
    assert out[4:6] == ["DESCRIPTION:", "    A gadget."]
    assert "  metadata\t<ObjectMeta>" in out and f"    {CONVENTIONS}#metadata" in out
    size = kc.out("explain", "gadget.spec.size").splitlines()
    assert size[4:] == ["FIELD: size <integer>", "", "", "DESCRIPTION:", "    How many gadgets.", "    "]
    embedded = kc.out("explain", "gadget.spec.template").splitlines()
    fields = [line.split("\t")[0].strip() for line in embedded if "\t<" in line]
    assert fields == ["apiVersion", "kind", "metadata"]
    assert "  kind\t<string> -required-" in embedded
    assert kc.out("explain", "gadget.spec.ports.port").splitlines()[4] == "FIELD: port <integer>"


def test_explain_a_field_that_refers_to_a_type_shows_the_fields_own_description(kc: Kubectl, gadgets: str):
    """OpenAPI v3 wraps a `$ref` that has a description in `allOf` (a bare `$ref` ignores its siblings), so
    explain says what the field is, then what its type is: a custom resource's metadata as a built-in's."""
    for resource, api_version in (("gadgets.metadata", f"{gadgets}/v1"), ("configmaps.metadata", "v1")):
        out = kc.out("explain", resource, f"--api-version={api_version}")
        description = out.split("DESCRIPTION:\n", 1)[1].split("FIELDS:", 1)[0].split()
        assert " ".join(description) == (f"Standard object's metadata. More info: {CONVENTIONS}#metadata "
                                         "ObjectMeta is metadata that all persisted resources must have, which "
                                         "includes all objects users must create."), resource
        assert "  creationTimestamp\t<string>" in out.splitlines()


def test_explain_custom_resource_with_openapi_v2(kc: Kubectl, gadgets: str):
    out = kc.with_version("1.27").out("explain", "gadget.spec", "--output=plaintext-openapiv2").splitlines()
    assert out[:4] == ["KIND:     Gadget", f"VERSION:  {gadgets}/v1", "", "RESOURCE: spec <Object>"]
    assert "   size\t<integer> -required-" in out
    # v2 publishes unknown-preserving objects untyped (kubectl's v2 reader cannot cope with them otherwise).
    assert "   template\t<>" in out and "   ports\t<[]Object>" in out
