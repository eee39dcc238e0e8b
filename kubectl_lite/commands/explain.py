"""`explain TYPE[.field.path]`: field documentation from the server's OpenAPI v3 document for the type's
group/version, laid out as kubectl's plain-text explain template prints it."""

from __future__ import annotations

import argparse
import sys
import textwrap
from typing import Any

from ..session import Session, UsageError

WIDTH = 80


def add_parser(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("explain", parents=[common], help="Get documentation for a resource")
    p.add_argument("path")
    p.add_argument("--recursive", action="store_true")
    p.set_defaults(run=run)


def _wrap(text: str, indent: int) -> list[str]:
    pad = " " * indent
    lines: list[str] = []
    for paragraph in text.split("\n"):
        wrapped = textwrap.wrap(paragraph, width=WIDTH, initial_indent=pad, subsequent_indent=pad,
                                break_long_words=False, break_on_hyphens=False)
        lines.extend(wrapped or [pad.rstrip()])
    return lines


class Schemas:
    """Schema lookup within one OpenAPI v3 document, following `$ref` and single-entry `allOf`."""

    def __init__(self, doc: dict[str, Any]) -> None:
        self.components = (doc.get("components") or {}).get("schemas") or {}

    def resolve(self, schema: dict[str, Any]) -> dict[str, Any]:
        while True:
            if "$ref" in schema:
                schema = self.components.get(schema["$ref"].rsplit("/", 1)[-1], {})
            elif len(schema.get("allOf") or ()) == 1:
                schema = {**schema["allOf"][0], **{k: v for k, v in schema.items() if k != "allOf"}}
            else:
                return schema

    def ref_name(self, schema: dict[str, Any]) -> str | None:
        ref = schema.get("$ref") or ((schema.get("allOf") or [{}])[0].get("$ref") if schema.get("allOf") else None)
        return ref.rsplit("/", 1)[-1].rsplit(".", 1)[-1] if ref else None

    def type_name(self, schema: dict[str, Any]) -> str:
        name = self.ref_name(schema)
        if name:
            return name
        kind = schema.get("type", "")
        if kind == "array":
            return "[]" + self.type_name(schema.get("items") or {})
        if kind == "object" and "additionalProperties" in schema:
            return "map[string]" + self.type_name(schema["additionalProperties"] or {})
        if schema.get("x-kubernetes-int-or-string"):
            return "IntOrString"
        return kind or "Object"


def _find_kind(session: Session, doc: dict[str, Any], kind: str, group: str, version: str) -> dict[str, Any]:
    for schema in ((doc.get("components") or {}).get("schemas") or {}).values():
        for gvk in schema.get("x-kubernetes-group-version-kind") or ():
            if gvk.get("kind") == kind and gvk.get("group", "") == group and gvk.get("version") == version:
                return schema
    raise UsageError(f"couldn't find resource for \"{kind}\"")


def run(session: Session) -> int:
    type_word, *fields = session.args.path.split(".")
    res = session.discovery.find(type_word)
    index = session.request("GET", "/openapi/v3")
    key = f"apis/{res.group}/{res.version}" if res.group else f"api/{res.version}"
    entry = (index.get("paths") or {}).get(key)
    if not entry:
        raise UsageError(f"couldn't find OpenAPI document for {key}")
    url = entry.get("serverRelativeURL") or f"/openapi/v3/{key}"
    path, _, query = url.partition("?")
    doc = session.request("GET", path, params=dict(p.split("=", 1) for p in query.split("&") if "=" in p))
    schemas = Schemas(doc)
    schema = _find_kind(session, doc, res.kind, res.group, res.version)
    field_schema: dict[str, Any] | None = None
    for name in fields:
        current = schemas.resolve(schema)
        if current.get("type") == "array":
            current = schemas.resolve(current.get("items") or {})
        props = current.get("properties") or {}
        if name not in props:
            raise UsageError(f"field \"{name}\" does not exist")
        field_schema = props[name]
        schema = field_schema
    out: list[str] = []
    if res.group:
        out.append(f"GROUP:      {res.group}")
    out += [f"KIND:       {res.kind}", f"VERSION:    {res.version}", ""]
    target = schemas.resolve(schema)
    if field_schema is not None:
        out += [f"FIELD: {fields[-1]} <{schemas.type_name(field_schema)}>", "", ""]
        description = field_schema.get("description", "") if not schemas.ref_name(field_schema) else ""
        if target.get("type") == "array":
            item = schemas.resolve(target.get("items") or {})
            description = "\n".join(d for d in (field_schema.get("description", ""), item.get("description", ""))
                                    if d)
            target = item
        elif schemas.ref_name(field_schema):  # the field's own words (beside its allOf), then its type's
            description = "\n".join(d for d in (field_schema.get("description", ""), target.get("description", ""))
                                    if d)
    else:
        description = target.get("description", "")
    if description:
        out += ["DESCRIPTION:"] + _wrap(description, 4) + ["    "]
    props = target.get("properties") or {}
    if props:
        out.append("FIELDS:")
        required_fields = set(target.get("required") or ())
        for name in sorted(props):
            mark = " -required-" if name in required_fields else ""
            out.append(f"  {name}\t<{schemas.type_name(props[name])}>{mark}")
            text = props[name].get("description") or schemas.resolve(props[name]).get("description", "")
            out += _wrap(text, 4) if text else []
            out.append("")
    sys.stdout.write("\n".join(out) + "\n\n")
    return 0
