"""Load the upstream Kubernetes API definitions shipped by the `kubernetes-validate` package.

The package ships the upstream OpenAPI definitions (as JSON Schema, `$defs`) for each Kubernetes minor
version, including the `x-kubernetes-*` extensions (group-version-kind, patch strategy and merge key,
list type and map keys). We read them once, lazily, and index them by definition name and by GVK.
"""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path
from typing import Any

import orjson

KUBERNETES_VERSION = "1.32.0"
REF_PREFIX = "#/$defs/"


@functools.cache
def definitions() -> dict[str, dict[str, Any]]:
    """All upstream definitions by name, e.g. ``io.k8s.api.core.v1.ConfigMap``."""
    # Locate the package without importing it (its __init__ pulls in jsonschema: ~80 ms of start-up).
    spec = importlib.util.find_spec("kubernetes_validate")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the kubernetes-validate package is not installed")
    path = (Path(spec.submodule_search_locations[0]) / "kubernetes-json-schema" / f"v{KUBERNETES_VERSION}-local"
            / "_definitions.json")
    return orjson.loads(path.read_bytes())["$defs"]


@functools.cache
def _by_gvk() -> dict[tuple[str, str, str], str]:
    index: dict[tuple[str, str, str], str] = {}
    for name, schema in definitions().items():
        for gvk in schema.get("x-kubernetes-group-version-kind", ()):
            index.setdefault((gvk["group"], gvk["version"], gvk["kind"]), name)
    return index


def definition_name(group: str, version: str, kind: str) -> str | None:
    """The definition name for a group/version/kind, or None when upstream has none."""
    return _by_gvk().get((group, version, kind))


def definition(name: str) -> dict[str, Any]:
    """One definition by name (KeyError if unknown)."""
    return definitions()[name]


def resolve(schema: dict[str, Any]) -> dict[str, Any]:
    """Follow a `$ref` (one level; upstream refs never chain) and return the referenced schema."""
    ref = schema.get("$ref")
    if ref is None:
        return schema
    return definitions()[ref.removeprefix(REF_PREFIX)]


def references(name: str) -> list[tuple[str, str, str]]:
    """(property, container, target) for each `$ref` of a definition's properties.

    `container` is "" for a direct reference, "[]" for array items, "{}" for map values.
    """
    out = []
    for prop, schema in (definitions()[name].get("properties") or {}).items():
        for container, sub in (("", schema), ("[]", schema.get("items")), ("{}", schema.get("additionalProperties"))):
            if isinstance(sub, dict) and "$ref" in sub:
                out.append((prop, container, sub["$ref"].removeprefix(REF_PREFIX)))
    return out
