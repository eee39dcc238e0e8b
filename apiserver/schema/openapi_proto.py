"""Encode a Swagger 2.0 document as the protobuf kubectl asks `/openapi/v2` for.

kubectl up to 1.28 (explain, apply, and the field-validation check) fetches `/openapi/v2` with
`Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf` and only parses that encoding:
a JSON answer fails with "proto: cannot parse invalid wire-format data". The message layout is gnostic's
`openapi.v2.Document` (github.com/google/gnostic, openapiv2/OpenAPIv2.proto); the field numbers below
follow it. Vendor extensions, defaults and enum values are `Any` messages holding YAML text (JSON is
YAML, so their JSON text is used).
"""

from __future__ import annotations

import struct
from typing import Any

import orjson

from ..codecs.protobuf.wire import varint as _varint

# What old kubectl sends in Accept (the `@` form) and what the apiserver answers with: the `@` is not
# valid in a Content-Type, Go's mime parser rejects it, so the answer uses the dotted form.
ACCEPT_TYPES = ("application/com.github.proto-openapi.spec.v2@v1.0+protobuf",
                "application/com.github.proto-openapi.spec.v2.v1.0+protobuf")
MEDIA_TYPE = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"


def _key(field: int, wire: int) -> bytes:
    return _varint(field << 3 | wire)


def _bytes(field: int, data: bytes) -> bytes:
    return _key(field, 2) + _varint(len(data)) + data


def _str(field: int, value: Any) -> bytes:
    return _bytes(field, str(value).encode()) if value not in (None, "") else b""


def _strs(field: int, values: Any) -> bytes:
    return b"".join(_bytes(field, str(v).encode()) for v in values or ())


def _bool(field: int, value: Any) -> bytes:
    return _key(field, 0) + b"\x01" if value else b""


def _int(field: int, value: Any) -> bytes:
    return _key(field, 0) + _varint(int(value)) if value else b""


def _double(field: int, value: Any) -> bytes:
    return _key(field, 1) + struct.pack("<d", float(value)) if value is not None else b""


def _any(value: Any) -> bytes:
    """openapi.v2.Any: field 2 is the YAML text of the value."""
    return _bytes(2, orjson.dumps(value))


def _named(field: int, name: str, value: bytes) -> bytes:
    return _bytes(field, _str(1, name) + _bytes(2, value))


def _extensions(field: int, obj: dict[str, Any]) -> bytes:
    return b"".join(_named(field, k, _any(v)) for k, v in obj.items() if k.startswith("x-"))


# --- schemas ------------------------------------------------------------------------------------

def schema(s: dict[str, Any]) -> bytes:
    """openapi.v2.Schema."""
    out = [_str(1, s.get("$ref")), _str(2, s.get("format")), _str(3, s.get("title")),
           _str(4, s.get("description"))]
    if "default" in s:
        out.append(_bytes(5, _any(s["default"])))
    out += [_double(6, s.get("multipleOf")), _double(7, s.get("maximum")), _bool(8, s.get("exclusiveMaximum")),
            _double(9, s.get("minimum")), _bool(10, s.get("exclusiveMinimum")), _int(11, s.get("maxLength")),
            _int(12, s.get("minLength")), _str(13, s.get("pattern")), _int(14, s.get("maxItems")),
            _int(15, s.get("minItems")), _bool(16, s.get("uniqueItems")), _int(17, s.get("maxProperties")),
            _int(18, s.get("minProperties")), _strs(19, s.get("required"))]
    out += [_bytes(20, _any(v)) for v in s.get("enum") or ()]
    additional = s.get("additionalProperties")
    if isinstance(additional, dict):
        out.append(_bytes(21, _bytes(1, schema(additional))))
    elif isinstance(additional, bool):
        out.append(_bytes(21, _key(2, 0) + _varint(int(additional))))
    if "type" in s:
        types = s["type"] if isinstance(s["type"], list) else [s["type"]]
        out.append(_bytes(22, _strs(1, types)))
    items = s.get("items")
    if isinstance(items, dict):
        out.append(_bytes(23, _bytes(1, schema(items))))
    elif isinstance(items, list):
        out.append(_bytes(23, b"".join(_bytes(1, schema(i)) for i in items)))
    out += [_bytes(24, schema(sub)) for sub in s.get("allOf") or ()]
    if "properties" in s:
        out.append(_bytes(25, b"".join(_named(1, k, schema(v)) for k, v in s["properties"].items())))
    out += [_str(26, s.get("discriminator")), _bool(27, s.get("readOnly"))]
    if "example" in s:
        out.append(_bytes(30, _any(s["example"])))
    out.append(_extensions(31, s))
    return b"".join(out)


# --- operations ---------------------------------------------------------------------------------

def _non_body(p: dict[str, Any]) -> bytes:
    """Query and path parameters share a field layout up to `type`; only those fields are used."""
    if p.get("in") == "path":
        inner = (_bool(1, p.get("required")) + _str(2, "path") + _str(3, p.get("description"))
                 + _str(4, p.get("name")) + _str(5, p.get("type")) + _bool(19, p.get("uniqueItems")))
        return _bytes(4, inner)
    inner = (_bool(1, p.get("required")) + _str(2, p.get("in")) + _str(3, p.get("description"))
             + _str(4, p.get("name")) + _str(6, p.get("type")) + _bool(20, p.get("uniqueItems")))
    return _bytes(3, inner)


def parameter(p: dict[str, Any]) -> bytes:
    """openapi.v2.ParametersItem holding a Parameter (body, or non-body query/path)."""
    if p.get("in") == "body":
        body = (_str(1, p.get("description")) + _str(2, p.get("name")) + _str(3, "body")
                + _bool(4, p.get("required")) + _bytes(5, schema(p.get("schema") or {})))
        param = _bytes(1, body)
    else:
        param = _bytes(2, _non_body(p))
    return _bytes(1, param)


def _response(r: dict[str, Any]) -> bytes:
    out = _str(1, r.get("description"))
    if "schema" in r:
        out += _bytes(2, _bytes(1, schema(r["schema"])))
    return _bytes(1, out + _extensions(5, r))


def operation(op: dict[str, Any]) -> bytes:
    """openapi.v2.Operation."""
    out = [_strs(1, op.get("tags")), _str(2, op.get("summary")), _str(3, op.get("description")),
           _str(5, op.get("operationId")), _strs(6, op.get("produces")), _strs(7, op.get("consumes"))]
    out += [_bytes(8, parameter(p)) for p in op.get("parameters") or ()]
    responses = b"".join(_named(1, code, _response(r)) for code, r in (op.get("responses") or {}).items())
    out += [_bytes(9, responses), _strs(10, op.get("schemes")), _bool(11, op.get("deprecated")),
            _extensions(13, op)]
    return b"".join(out)


_METHODS = {"get": 2, "put": 3, "post": 4, "delete": 5, "options": 6, "head": 7, "patch": 8}


def path_item(item: dict[str, Any]) -> bytes:
    """openapi.v2.PathItem."""
    out = [_bytes(number, operation(item[method])) for method, number in _METHODS.items() if method in item]
    out += [_bytes(9, parameter(p)) for p in item.get("parameters") or ()]
    out.append(_extensions(10, item))
    return b"".join(out)


# --- the document -------------------------------------------------------------------------------

def _security_definitions(defs: dict[str, Any]) -> bytes:
    out = b""
    for name, item in defs.items():
        if item.get("type") == "apiKey":
            key = (_str(1, "apiKey") + _str(2, item.get("name")) + _str(3, item.get("in"))
                   + _str(4, item.get("description")))
            out += _named(1, name, _bytes(2, key))
        elif item.get("type") == "basic":
            out += _named(1, name, _bytes(1, _str(1, "basic") + _str(2, item.get("description"))))
    return out


def _security(requirements: list[dict[str, list[str]]]) -> bytes:
    return b"".join(_bytes(12, b"".join(_named(1, name, _strs(1, scopes)) for name, scopes in req.items()))
                    for req in requirements)


def encode_document(doc: dict[str, Any]) -> bytes:
    """A Swagger 2.0 document (as produced by `openapi.openapi_v2`) as openapi.v2.Document bytes."""
    info = doc.get("info") or {}
    out = [_str(1, doc.get("swagger", "2.0")),
           _bytes(2, _str(1, info.get("title")) + _str(2, info.get("version")) + _str(3, info.get("description"))),
           _str(3, doc.get("host")), _str(4, doc.get("basePath")), _strs(5, doc.get("schemes")),
           _strs(6, doc.get("consumes")), _strs(7, doc.get("produces"))]
    paths = b"".join(_named(2, name, path_item(item)) for name, item in (doc.get("paths") or {}).items())
    out.append(_bytes(8, paths))
    definitions = b"".join(_named(1, name, schema(s)) for name, s in (doc.get("definitions") or {}).items())
    out.append(_bytes(9, definitions))
    out.append(_security(doc.get("security") or []))
    if doc.get("securityDefinitions"):
        out.append(_bytes(13, _security_definitions(doc["securityDefinitions"])))
    out.append(_extensions(16, doc))
    return b"".join(out)
