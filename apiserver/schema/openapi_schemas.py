"""Turn schemas into OpenAPI component schemas: upstream definitions and custom resource schemas.

Upstream definitions come as JSON Schema (`type: [X, "null"]`, `$ref: #/$defs/...`, `oneOf` for
IntOrString and Quantity). OpenAPI wants `type: X`, refs into `#/components/schemas/` (v3) or
`#/definitions/` (v2), and IntOrString/Quantity as upstream publishes them. The `enum` that the JSON
Schema export adds to every `apiVersion`/`kind` is not upstream's and is dropped. Everything else
(descriptions, `required`, `x-kubernetes-group-version-kind`, patch strategy and merge key, list type
and map keys) is kept as is.
"""

from __future__ import annotations

import copy
import functools
from typing import Any

from mini_kube.apiserver.schema.definitions import REF_PREFIX, definitions

V3_PREFIX = "#/components/schemas/"
V2_PREFIX = "#/definitions/"
OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
LIST_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta"
_INT_OR_STRING = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
_QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"

_INT_OR_STRING_TEXT = ("IntOrString is a type that can hold an int32 or a string. When used in JSON or YAML "
                       "marshalling and unmarshalling, it produces or consumes the inner type.")
_QUANTITY_TEXT = ("Quantity is a fixed-point representation of a number, written as a string such as "
                  "'1', '100m', '1Gi' or '1e3'.")


def _special(name: str, v3: bool) -> dict[str, Any] | None:
    """IntOrString and Quantity in the form upstream's OpenAPI uses for each version."""
    if name == _INT_OR_STRING:
        if v3:
            return {"description": _INT_OR_STRING_TEXT, "oneOf": [{"type": "integer"}, {"type": "string"}],
                    "x-kubernetes-int-or-string": True}
        return {"description": _INT_OR_STRING_TEXT, "type": "string", "format": "int-or-string"}
    if name == _QUANTITY:
        if v3:
            return {"description": _QUANTITY_TEXT, "oneOf": [{"type": "string"}, {"type": "number"}]}
        return {"description": _QUANTITY_TEXT, "type": "string"}
    return None


def _convert(schema: Any, prefix: str, drop_type_enums: bool = False) -> Any:
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "type":
            types = [value] if isinstance(value, str) else [t for t in value if t != "null"]
            if types:
                out["type"] = types[0]
        elif key == "$ref":
            out["$ref"] = prefix + value.removeprefix(REF_PREFIX)
        elif key == "properties":
            out["properties"] = {
                name: _convert(sub, prefix) if not (drop_type_enums and name in ("apiVersion", "kind"))
                else {k: v for k, v in _convert(sub, prefix).items() if k != "enum"}
                for name, sub in value.items()}
        elif key in ("items", "additionalProperties"):
            out[key] = _convert(value, prefix)
        else:
            out[key] = value
    return out


_SCHEMA_MAPS = ("properties", "patternProperties")
_SCHEMA_VALUED = ("items", "additionalProperties", "allOf", "anyOf", "oneOf", "not")


def wrap_refs(schema: Any) -> Any:
    """A v3 schema with every `$ref` that has siblings (a description, a default) wrapped in `allOf`, as
    kube-openapi's builder3 publishes definitions (a `$ref` ignores its siblings in OpenAPI 3.0, so clients
    such as `kubectl explain` would show the referenced type's description instead of the field's)."""
    if isinstance(schema, list):
        return [wrap_refs(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _SCHEMA_MAPS and isinstance(value, dict):  # names to schemas (a name may be "$ref")
            out[key] = {name: wrap_refs(sub) for name, sub in value.items()}
        elif key in _SCHEMA_VALUED:
            out[key] = wrap_refs(value)
        else:
            out[key] = value
    if "$ref" in out and len(out) > 1:
        out = {("allOf" if key == "$ref" else key): ([{"$ref": value}] if key == "$ref" else value)
               for key, value in out.items()}
    return out


@functools.cache
def definition_schema(name: str, v3: bool = True) -> dict[str, Any]:
    """One upstream definition as an OpenAPI schema (shared; do not mutate)."""
    special = _special(name, v3)
    if special is not None:
        return special
    converted = _convert(definitions()[name], V3_PREFIX if v3 else V2_PREFIX, drop_type_enums=True)
    return wrap_refs(converted) if v3 else converted


def reachable(roots: list[str]) -> list[str]:
    """The definitions `roots` refer to, directly or not, sorted (roots included)."""
    seen: set[str] = set()
    todo = [r for r in roots if r in definitions()]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        _refs(definitions()[name], todo)
    return sorted(seen)


def _refs(schema: Any, out: list[str]) -> None:
    if isinstance(schema, dict):
        ref = schema.get("$ref")
        if isinstance(ref, str):
            out.append(ref.removeprefix(REF_PREFIX))
        for value in schema.values():
            if isinstance(value, dict | list):
                _refs(value, out)
    elif isinstance(schema, list):
        for value in schema:
            _refs(value, out)


# --- custom resources ---------------------------------------------------------------------------

def custom_schema_name(group: str, version: str, kind: str) -> str:
    """`com.example.v1.Agent` for example.com/v1 Agent: the reversed group, the version, the kind."""
    return ".".join([*reversed(group.split(".")), version, kind])


_CONVENTIONS = "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md"
# TypeMeta's and PartialObjectMetadata(List)'s documentation, which the CRD OpenAPI builder reuses.
_API_VERSION_TEXT = ("APIVersion defines the versioned schema of this representation of an object. Servers "
                     "should convert recognized schemas to the latest internal value, and may reject "
                     f"unrecognized values. More info: {_CONVENTIONS}#resources")
_KIND_TEXT = ("Kind is a string value representing the REST resource this object represents. Servers "
              "may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. "
              f"More info: {_CONVENTIONS}#types-kinds")
_METADATA_TEXT = f"Standard object's metadata. More info: {_CONVENTIONS}#metadata"
_LIST_METADATA_TEXT = f"Standard list metadata. More info: {_CONVENTIONS}#types-kinds"
_EMBEDDED_API_VERSION_TEXT = ("apiVersion defines the versioned schema of this representation of an object. "
                              f"More info: {_CONVENTIONS}#resources")
_EMBEDDED_KIND_TEXT = ("kind is a string value representing the type of this object. In CamelCase. "
                       f"More info: {_CONVENTIONS}#types-kinds")
_V2_UNSUPPORTED = ("nullable", "oneOf", "anyOf", "allOf", "not", "x-kubernetes-validations")


def _type_meta(prefix: str, meta: str, meta_text: str) -> dict[str, Any]:
    return {"apiVersion": {"description": _API_VERSION_TEXT, "type": "string"},
            "kind": {"description": _KIND_TEXT, "type": "string"},
            "metadata": {"$ref": prefix + meta, "description": meta_text}}


def _strip_for_v2(schema: Any) -> Any:
    """A structural schema as the apiserver publishes it in Swagger 2.0 (its ToStructuralOpenAPIV2).

    Junctors and `nullable` go; nullable and unknown-preserving nodes lose their type, items and properties
    (kubectl's v2 reader breaks on them otherwise); arrays left without items lose their type.
    """
    if not isinstance(schema, dict):
        return schema
    out = {k: v for k, v in schema.items() if k not in _V2_UNSUPPORTED}
    if isinstance(out.get("properties"), dict):
        out["properties"] = {name: _strip_for_v2(sub) for name, sub in out["properties"].items()}
    for key in ("items", "additionalProperties"):
        if isinstance(out.get(key), dict):
            out[key] = _strip_for_v2(out[key])
    preserve = schema.get("x-kubernetes-preserve-unknown-fields") is True
    if schema.get("nullable") is True:
        for key in ("type", "items", "properties"):
            out.pop(key, None)
    if preserve:
        out.pop("items", None)
        out.pop("properties", None)
    if "items" not in out and out.get("type") == "array":
        out.pop("type")
    if preserve and out.get("type") == "object":
        out.pop("type")
    if out.get("x-kubernetes-int-or-string"):
        out.pop("type", None)
    required = out.get("required")
    if required:
        nullable = {name for name, sub in (schema.get("properties") or {}).items()
                    if isinstance(sub, dict) and sub.get("nullable") is True}
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict) and extra.get("nullable") is True:
            out.pop("required")
        elif nullable:
            kept = [name for name in required if name not in nullable]
            if kept:
                out["required"] = kept
            else:
                out.pop("required")
    return out


def _add_embedded(schema: dict[str, Any], prefix: str, v3: bool) -> None:
    """Give `x-kubernetes-embedded-resource` nodes apiVersion, kind and metadata, as the CRD builder does."""
    for child in (schema.get("properties") or {}).values():
        if isinstance(child, dict):
            _add_embedded(child, prefix, v3)
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            _add_embedded(schema[key], prefix, v3)
    if not v3 and schema.get("x-kubernetes-preserve-unknown-fields") is True:
        return  # kubectl would refuse unknown fields next to these in v2
    if schema.get("x-kubernetes-embedded-resource") is True:
        properties = schema.setdefault("properties", {})
        properties["apiVersion"] = {"description": _EMBEDDED_API_VERSION_TEXT, "type": "string"}
        properties["kind"] = {"description": _EMBEDDED_KIND_TEXT, "type": "string"}
        properties["metadata"] = {"$ref": prefix + OBJECT_META, "description": _METADATA_TEXT}
        required = schema.setdefault("required", [])
        required.extend(name for name in ("kind", "apiVersion") if name not in required)


def custom_schemas(group: str, version: str, kind: str, list_kind: str, schema: dict[str, Any] | None,
                   v3: bool = True, plural: str = "") -> dict[str, dict[str, Any]]:
    """Component schemas for one custom resource version, as the CRD OpenAPI builder makes them.

    With a schema: the schema plus apiVersion, kind (TypeMeta's) and metadata; without one, or in v2 when
    the root keeps unknown fields, a bare object (properties would make kubectl reject other fields).
    """
    prefix = V3_PREFIX if v3 else V2_PREFIX
    name = custom_schema_name(group, version, kind)
    if schema is None or (not v3 and schema.get("x-kubernetes-preserve-unknown-fields") is True):
        body: dict[str, Any] = {"type": "object"}
    else:
        body = copy.deepcopy(schema)
        if not v3:
            body = _strip_for_v2(body)
        body.setdefault("type", "object")
        body.setdefault("properties", {}).update(_type_meta(prefix, OBJECT_META, _METADATA_TEXT))
        _add_embedded(body, prefix, v3)
    body["x-kubernetes-group-version-kind"] = [{"group": group, "kind": kind, "version": version}]
    plural = plural or kind.lower() + "s"
    listing = {
        "description": f"{list_kind} is a list of {kind}",
        "properties": {**_type_meta(prefix, LIST_META, _LIST_METADATA_TEXT),
                       "items": {"description": f"List of {plural}. More info: {_CONVENTIONS}", "type": "array",
                                 "items": {"$ref": prefix + name}}},
        "required": ["items"],
        "type": "object",
        "x-kubernetes-group-version-kind": [{"group": group, "kind": list_kind, "version": version}],
    }
    if v3:
        body, listing = wrap_refs(body), wrap_refs(listing)
    return {name: body, custom_schema_name(group, version, list_kind): listing}
