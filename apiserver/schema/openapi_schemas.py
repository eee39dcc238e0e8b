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

from apiserver.schema.definitions import REF_PREFIX, definitions

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


@functools.cache
def definition_schema(name: str, v3: bool = True) -> dict[str, Any]:
    """One upstream definition as an OpenAPI schema (shared; do not mutate)."""
    special = _special(name, v3)
    if special is not None:
        return special
    return _convert(definitions()[name], V3_PREFIX if v3 else V2_PREFIX, drop_type_enums=True)


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


_API_VERSION_TEXT = ("APIVersion defines the versioned schema of this representation of an object. Servers "
                     "should convert recognized schemas to the latest internal value, and may reject "
                     "unrecognized values.")
_KIND_TEXT = ("Kind is a string value representing the REST resource this object represents. Servers "
              "may infer this from the endpoint the client submits requests to. In CamelCase.")
_V2_UNSUPPORTED = ("nullable", "oneOf", "anyOf", "allOf", "not", "x-kubernetes-validations")


def _type_meta(prefix: str, meta: str, meta_text: str) -> dict[str, Any]:
    return {"apiVersion": {"description": _API_VERSION_TEXT, "type": "string"},
            "kind": {"description": _KIND_TEXT, "type": "string"},
            "metadata": {"$ref": prefix + meta, "description": meta_text}}


def _strip_for_v2(schema: Any) -> Any:
    """Drop what Swagger 2.0 cannot say (the apiserver does the same for its v2 document)."""
    if isinstance(schema, list):
        return [_strip_for_v2(v) for v in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _strip_for_v2(v) for k, v in schema.items() if k not in _V2_UNSUPPORTED}
    if out.get("x-kubernetes-int-or-string"):
        out.pop("type", None)
    return out


def custom_schemas(group: str, version: str, kind: str, list_kind: str, schema: dict[str, Any] | None,
                   v3: bool = True) -> dict[str, dict[str, Any]]:
    """Component schemas for one custom resource version: the kind and its list."""
    prefix = V3_PREFIX if v3 else V2_PREFIX
    name = custom_schema_name(group, version, kind)
    body = copy.deepcopy(schema) if schema else {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    if not v3:
        body = _strip_for_v2(body)
    body.setdefault("type", "object")
    properties = body.setdefault("properties", {})
    for prop, value in _type_meta(prefix, OBJECT_META, "Standard object's metadata.").items():
        if prop == "metadata" or prop not in properties:
            properties[prop] = value
    body["x-kubernetes-group-version-kind"] = [{"group": group, "kind": kind, "version": version}]
    listing = {
        "description": f"{list_kind} is a list of {kind}",
        "properties": {**_type_meta(prefix, LIST_META, "Standard list metadata."),
                       "items": {"description": f"List of {kind.lower()}s.", "type": "array",
                                 "items": {"$ref": prefix + name}}},
        "required": ["items"],
        "type": "object",
        "x-kubernetes-group-version-kind": [{"group": group, "kind": list_kind, "version": version}],
    }
    return {name: body, custom_schema_name(group, version, list_kind): listing}
