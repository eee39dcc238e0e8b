"""Compile an `openAPIV3Schema` dict once into a tree of `Node`s that the hot paths walk.

A `Node` holds what validation, defaulting, pruning and CEL need of one schema: its type and value
constraints, its structure (properties, items, additionalProperties), the Kubernetes extensions and
the nested value validations (allOf/anyOf/oneOf/not), themselves compiled as `Node`s.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

MISSING: Any = object()

# Formats kube-openapi checks for strings (names normalised without '-', as go-openapi does).
STRING_FORMATS = frozenset({
    "bsonobjectid", "uri", "email", "hostname", "ipv4", "ipv6", "cidr", "mac", "uuid", "uuid3", "uuid4",
    "uuid5", "isbn", "isbn10", "isbn13", "creditcard", "ssn", "hexcolor", "rgbcolor", "byte", "password",
    "date", "duration", "datetime",
})


def effective_format(schema_type: str, fmt: str) -> str:
    """The format the apiserver keeps for validation; unsupported ones are dropped (StripUnsupportedFormats)."""
    if not fmt:
        return ""
    if schema_type in ("", "string"):
        return fmt if fmt.replace("-", "") in STRING_FORMATS else ""
    if schema_type == "integer":
        return fmt if fmt in ("int32", "int64") else ""
    if schema_type == "number":
        return fmt if fmt in ("float", "double") else ""
    return ""


def go_regexp(pattern: str) -> re.Pattern[str] | None:
    """Compile an RE2 pattern with Python's `re` (None when Python cannot read it)."""
    try:
        return re.compile(pattern.replace(r"\z", r"\Z"))
    except re.error:
        return None


@dataclass(eq=False, slots=True)
class Node:
    """One compiled schema."""

    type: str = ""
    types: tuple[str, ...] = ()  # what the type validator accepts ("integer", "string" for int-or-string)
    format: str = ""
    nullable: bool = False
    default: Any = MISSING
    enum: tuple[Any, ...] | None = None
    maximum: float | None = None
    exclusive_maximum: bool = False
    minimum: float | None = None
    exclusive_minimum: bool = False
    multiple_of: float | None = None
    max_length: int | None = None
    min_length: int | None = None
    pattern: str = ""
    regexp: re.Pattern[str] | None = None
    max_items: int | None = None
    min_items: int | None = None
    unique_items: bool = False
    max_properties: int | None = None
    min_properties: int | None = None
    required: tuple[str, ...] = ()
    properties: dict[str, Node] = field(default_factory=dict)
    additional: Node | None = None  # additionalProperties as a schema
    additional_allowed: bool = True  # False for `additionalProperties: false`
    has_additional: bool = False  # additionalProperties was given (true or a schema)
    items: Node | None = None
    preserve_unknown: bool = False
    embedded: bool = False
    int_or_string: bool = False
    list_type: str = ""
    list_map_keys: tuple[str, ...] = ()
    map_type: str = ""
    rules: tuple[dict[str, Any], ...] = ()
    all_of: tuple[Node, ...] = ()
    any_of: tuple[Node, ...] = ()
    one_of: tuple[Node, ...] = ()
    not_: Node | None = None
    has_defaults: bool = False  # this node or a structural descendant has a default
    has_rules: bool = False  # this node or a structural descendant has x-kubernetes-validations
    has_list_checks: bool = False  # a set/map list lives here or below
    has_embedded: bool = False  # an embedded resource lives here or below


def _num(value: Any) -> float | None:
    return None if value is None else value


def compile_schema(schema: dict[str, Any] | None) -> Node:
    """Compile one openAPIV3Schema (an absent schema compiles to an empty node)."""
    return _compile(schema or {})


def _compile(s: dict[str, Any]) -> Node:
    node = Node()
    node.type = s.get("type") or ""
    node.int_or_string = bool(s.get("x-kubernetes-int-or-string"))
    node.types = ("integer", "string") if node.int_or_string else ((node.type,) if node.type else ())
    node.format = effective_format(node.type, s.get("format") or "")
    node.nullable = bool(s.get("nullable"))
    if "default" in s:
        node.default = s["default"]
    if s.get("enum") is not None:
        node.enum = tuple(s["enum"])
    node.maximum = _num(s.get("maximum"))
    node.exclusive_maximum = bool(s.get("exclusiveMaximum"))
    node.minimum = _num(s.get("minimum"))
    node.exclusive_minimum = bool(s.get("exclusiveMinimum"))
    node.multiple_of = _num(s.get("multipleOf"))
    node.max_length = s.get("maxLength")
    node.min_length = s.get("minLength")
    node.pattern = s.get("pattern") or ""
    node.regexp = go_regexp(node.pattern) if node.pattern else None
    node.max_items = s.get("maxItems")
    node.min_items = s.get("minItems")
    node.unique_items = bool(s.get("uniqueItems"))
    node.max_properties = s.get("maxProperties")
    node.min_properties = s.get("minProperties")
    node.required = tuple(s.get("required") or ())
    node.properties = {k: _compile(v or {}) for k, v in (s.get("properties") or {}).items()}
    additional = s.get("additionalProperties")
    if additional is not None:
        node.has_additional = True
        if isinstance(additional, dict):
            node.additional = _compile(additional)
        else:
            node.additional_allowed = bool(additional)
    items = s.get("items")
    if isinstance(items, dict):
        node.items = _compile(items)
    node.preserve_unknown = bool(s.get("x-kubernetes-preserve-unknown-fields"))
    node.embedded = bool(s.get("x-kubernetes-embedded-resource"))
    node.list_type = s.get("x-kubernetes-list-type") or ""
    node.list_map_keys = tuple(s.get("x-kubernetes-list-map-keys") or ())
    node.map_type = s.get("x-kubernetes-map-type") or ""
    node.rules = tuple(r for r in (s.get("x-kubernetes-validations") or ()) if isinstance(r, dict))
    node.all_of = tuple(_compile(x or {}) for x in s.get("allOf") or ())
    node.any_of = tuple(_compile(x or {}) for x in s.get("anyOf") or ())
    node.one_of = tuple(_compile(x or {}) for x in s.get("oneOf") or ())
    if isinstance(s.get("not"), dict):
        node.not_ = _compile(s["not"])
    children = [*node.properties.values(), *(c for c in (node.items, node.additional) if c is not None)]
    node.has_defaults = node.default is not MISSING or any(c.has_defaults for c in children)
    node.has_rules = bool(node.rules) or any(c.has_rules for c in children)
    node.has_list_checks = node.list_type in ("set", "map") or any(c.has_list_checks for c in children)
    node.has_embedded = node.embedded or any(c.has_embedded for c in children)
    return node
