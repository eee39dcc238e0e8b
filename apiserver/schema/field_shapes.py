"""Compile schemas into the shape a decoder checks a JSON value against.

A `Shape` says what a value may be (struct with known fields, map, list, scalar, anything) and carries
the Go names the apiserver's JSON decoder prints in errors (`v1.DeploymentSpec`, `int32`,
`map[string]string`). Built-in kinds compile from the upstream definitions (memoized per name);
custom resources from their CRD's structural schema (`custom_shape`).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from mini_kube.apiserver.schema.definitions import REF_PREFIX, definitions

ANY, STRUCT, MAP, LIST, STRING, INTEGER, NUMBER, BOOLEAN, INT_OR_STRING, QUANTITY, TIME, MICROTIME = range(12)

OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
_INT_OR_STRING = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
_QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
_TIMES = {"io.k8s.apimachinery.pkg.apis.meta.v1.Time": TIME, "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime": MICROTIME}
# Types with their own JSON decoding that take any value.
_OPAQUE = {"io.k8s.apimachinery.pkg.runtime.RawExtension", "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1"}


@dataclass(eq=False, slots=True)
class Shape:
    """What one JSON value may be; `go` is its Go type name, `struct` the Go struct name if any."""

    kind: int
    go: str = ""
    struct: str = ""
    props: dict[str, Shape] = field(default_factory=dict)
    item: Shape | None = None
    open: bool = False  # a struct that keeps unknown fields (x-kubernetes-preserve-unknown-fields)


ANY_SHAPE = Shape(ANY, "interface {}")


def go_name(definition: str) -> str:
    """Go's `reflect.Type.String()` for a definition: package name and type, e.g. `v1.Pod`."""
    parts = definition.split(".")
    return f"{parts[-2]}.{parts[-1]}"


def _scalar(types: list[str], fmt: str | None) -> Shape | None:
    if "string" in types:
        return Shape(STRING, "[]uint8" if fmt == "byte" else "string")
    if "integer" in types:
        return Shape(INTEGER, fmt if fmt in ("int32", "int64") else "int64")
    if "number" in types:
        return Shape(NUMBER, "float64")
    if "boolean" in types:
        return Shape(BOOLEAN, "bool")
    return None


def _types(schema: dict[str, Any]) -> list[str]:
    value = schema.get("type")
    if value is None:
        return []
    return [value] if isinstance(value, str) else [t for t in value if t != "null"]


_BUILT: dict[str, Shape] = {}
_LOCK = threading.Lock()


def definition_shape(name: str) -> Shape:
    """The shape of an upstream definition, built on first use (recursive definitions share one)."""
    shape = _BUILT.get(name)
    if shape is None:
        with _LOCK:
            shape = _build_definition(name, _BUILT)
    return shape


def _build_definition(name: str, building: dict[str, Shape]) -> Shape:
    if name in building:
        return building[name]
    schema = definitions()[name]
    if name == _INT_OR_STRING:
        return Shape(INT_OR_STRING, "intstr.IntOrString")
    if name == _QUANTITY:
        return Shape(QUANTITY, "resource.Quantity")
    if name in _TIMES:  # a JSON string Go parses as RFC 3339 (MicroTime: six fraction digits)
        return Shape(_TIMES[name], "string")
    if name in _OPAQUE:
        return Shape(ANY, go_name(name))
    types = _types(schema)
    if "properties" in schema or types == ["object"]:
        shape = building[name] = Shape(STRUCT, go_name(name), name.rsplit(".", 1)[-1])
        for prop, sub in (schema.get("properties") or {}).items():
            shape.props[prop] = _build_property(sub, building)
        return shape
    scalar = _scalar(types, schema.get("format"))
    return scalar if scalar is not None else Shape(ANY, go_name(name))


def _build_property(schema: dict[str, Any], building: dict[str, Shape]) -> Shape:
    ref = schema.get("$ref")
    if ref:
        return _build_definition(ref.removeprefix(REF_PREFIX), building)
    types = _types(schema)
    if "array" in types:
        item = _build_property(schema.get("items") or {}, building)
        return Shape(LIST, "[]" + item.go, item=item)
    if "object" in types and isinstance(schema.get("additionalProperties"), dict):
        item = _build_property(schema["additionalProperties"], building)
        return Shape(MAP, "map[string]" + item.go, item=item)
    scalar = _scalar(types, schema.get("format"))
    return scalar if scalar is not None else ANY_SHAPE


# --- custom resources ---------------------------------------------------------------------------

def custom_shape(schema: dict[str, Any] | None) -> Shape:
    """The shape of a custom resource: its openAPIV3Schema plus the implicit TypeMeta and ObjectMeta."""
    shape = _custom(schema or {"type": "object", "x-kubernetes-preserve-unknown-fields": True})
    return _with_type_meta(shape)


def _with_type_meta(shape: Shape) -> Shape:
    if shape.kind != STRUCT:
        return shape
    shape.props.setdefault("apiVersion", Shape(STRING, "string"))
    shape.props.setdefault("kind", Shape(STRING, "string"))
    shape.props["metadata"] = definition_shape(OBJECT_META)
    return shape


def _custom(schema: dict[str, Any]) -> Shape:
    if schema.get("x-kubernetes-int-or-string"):
        return Shape(INT_OR_STRING, "interface {}")
    types = _types(schema)
    if "array" in types:
        return Shape(LIST, "[]interface {}", item=_custom(schema.get("items") or {}))
    open_fields = bool(schema.get("x-kubernetes-preserve-unknown-fields"))
    additional = schema.get("additionalProperties")
    if isinstance(additional, dict) and "properties" not in schema:
        return Shape(MAP, "map[string]interface {}", item=_custom(additional))
    if "properties" in schema or types == ["object"]:
        if (open_fields or additional is True) and "properties" not in schema:
            return ANY_SHAPE
        shape = Shape(STRUCT, "map[string]interface {}", open=open_fields)
        for prop, sub in (schema.get("properties") or {}).items():
            shape.props[prop] = _custom(sub)
        if schema.get("x-kubernetes-embedded-resource"):
            _with_type_meta(shape)
        return shape
    if open_fields:
        return ANY_SHAPE
    return _scalar(types, schema.get("format")) or ANY_SHAPE
