"""Shared fixtures: the Agent CRD and objects of the reference captures, restated here."""

from __future__ import annotations

import copy
from typing import Any

import pytest

AGENT_CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "agents.example.com"},
    "spec": {
        "group": "example.com",
        "scope": "Namespaced",
        "names": {"plural": "agents", "singular": "agent", "kind": "Agent", "listKind": "AgentList",
                  "shortNames": ["ag"]},
        "versions": [{
            "name": "v1", "served": True, "storage": True,
            "subresources": {"status": {}},
            "additionalPrinterColumns": [
                {"name": "Model", "type": "string", "jsonPath": ".spec.model"},
                {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
                {"name": "Phase", "type": "string", "jsonPath": ".status.phase"},
                {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
            ],
            "schema": {"openAPIV3Schema": {
                "type": "object",
                "properties": {
                    "spec": {"type": "object", "required": ["model"], "properties": {
                        "model": {"type": "string", "enum": ["small", "medium", "large"]},
                        "replicas": {"type": "integer", "minimum": 1, "maximum": 10, "default": 1},
                        "prompt": {"type": "string", "maxLength": 200},
                    }},
                    "status": {"type": "object", "properties": {"phase": {"type": "string"}}},
                },
            }},
        }],
    },
}

AGENT: dict[str, Any] = {
    "apiVersion": "example.com/v1", "kind": "Agent",
    "metadata": {"name": "a1", "namespace": "demo"},
    "spec": {"model": "small", "prompt": "hello"},
}


@pytest.fixture
def agent_crd() -> dict[str, Any]:
    return copy.deepcopy(AGENT_CRD)


@pytest.fixture
def agent() -> dict[str, Any]:
    return copy.deepcopy(AGENT)


def _crd_with_schema(schema: dict[str, Any], **version: Any) -> dict[str, Any]:
    """A minimal valid CRD (widgets.example.com, Widget) with one version using `schema`."""
    entry = {"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": schema}, **version}
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
                 "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
                 "versions": [entry]},
    }


@pytest.fixture
def crd_with_schema() -> Any:
    """A factory of minimal valid CRDs: `crd_with_schema(schema, **version_fields)`."""
    return _crd_with_schema
