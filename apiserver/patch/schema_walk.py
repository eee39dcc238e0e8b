"""One accessor over built-in definitions and CRD structural schemas, for patching and field ownership.

A `SchemaNode` answers what strategic merge patch and structured-merge-diff need at one place in an
object: its shape (`map`, `list`, `scalar` or `any`), the patch strategy and merge key of the field that
holds it, and its list/map semantics (`x-kubernetes-list-type`, `-list-map-keys`, `-map-type`). Nodes are
built lazily and memoized; a `$ref` property without field-level overrides shares its definition's node.

The mapping to ownership semantics follows kube-openapi's schemaconv: lists are atomic unless a list
type (or, failing that, a `merge` patch strategy) says otherwise; maps are granular unless `atomic`; a
schema without a type is "deduced" from the value (maps granular, lists atomic).
"""

from __future__ import annotations

import functools
from typing import Any

from mini_kube.apiserver.schema.definitions import REF_PREFIX, definitions

OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
RAW_EXTENSION = "io.k8s.apimachinery.pkg.runtime.RawExtension"
_SCALAR_TYPES = frozenset(("string", "integer", "number", "boolean"))

# Upstream's OpenAPI declares these defaults for list-map key fields; the shipped definitions drop
# them, but ownership of e.g. a container port without `protocol` is keyed as protocol "TCP".
_KEY_DEFAULTS: dict[str, dict[str, Any]] = {
    "io.k8s.api.core.v1.ContainerPort": {"protocol": "TCP"},
    "io.k8s.api.core.v1.ServicePort": {"protocol": "TCP"},
    "io.k8s.api.core.v1.EndpointPort": {"protocol": "TCP"},
}


def _types(schema: dict[str, Any]) -> set[str]:
    t = schema.get("type")
    if t is None:
        return set()
    if isinstance(t, str):
        return {t}
    return {x for x in t if x != "null"}


class SchemaNode:
    """The schema at one place in an object, with the field-level extensions of the property holding it."""

    __slots__ = ("schema", "origin", "kind", "name", "patch_strategy", "merge_key", "list_type",
                 "list_map_keys", "map_type", "preserve_unknown", "key_defaults", "_fields", "_props",
                 "_values", "_items", "_resolve")

    def __init__(self, prop: dict[str, Any], origin: str, preserve_unknown: bool = False,
                 resolve: Any = None, name: str = "") -> None:
        self._resolve = resolve
        schema = prop
        ref = prop.get("$ref")
        if ref is None and len(prop.get("allOf") or ()) == 1:
            ref = prop["allOf"][0].get("$ref")
        if ref is not None and resolve is not None:
            name = ref.removeprefix(REF_PREFIX)
            schema = resolve(name)
        self.schema = schema
        self.origin = origin
        self.name = name
        self.patch_strategy: str = prop.get("x-kubernetes-patch-strategy", "")
        self.merge_key: str = prop.get("x-kubernetes-patch-merge-key", "")
        self.list_type: str = prop.get("x-kubernetes-list-type") or schema.get("x-kubernetes-list-type", "")
        keys = prop.get("x-kubernetes-list-map-keys") or schema.get("x-kubernetes-list-map-keys") or ()
        self.list_map_keys: tuple[str, ...] = tuple(keys)
        self.map_type: str = prop.get("x-kubernetes-map-type") or schema.get("x-kubernetes-map-type", "")
        self.preserve_unknown = preserve_unknown or schema.get("x-kubernetes-preserve-unknown-fields") is True
        self.key_defaults: dict[str, Any] = _KEY_DEFAULTS.get(name, {})
        self.kind = self._kind(schema, name)
        self._fields: dict[str, SchemaNode | None] = {}
        self._props: dict[str, Any] = schema.get("properties") or {}
        self._values: SchemaNode | None | bool = False  # False: not computed yet
        self._items: SchemaNode | None | bool = False

    @staticmethod
    def _kind(schema: dict[str, Any], name: str) -> str:
        if name == RAW_EXTENSION:
            return "any"
        if schema.get("x-kubernetes-int-or-string"):
            return "scalar"
        types = _types(schema)
        if not types and ("oneOf" in schema or "anyOf" in schema):
            return "scalar"  # IntOrString and Quantity in the built-in definitions
        if "object" in types:
            return "map"
        if "array" in types:
            return "list"
        if types and types <= _SCALAR_TYPES:
            return "scalar"
        if "properties" in schema or "additionalProperties" in schema:
            return "map"
        return "any"

    def __repr__(self) -> str:
        return f"SchemaNode({self.name or self.kind})"

    # -- construction ---------------------------------------------------------------------------------

    @staticmethod
    def for_builtin(definition_name: str) -> SchemaNode:
        """The node for an upstream definition, e.g. ``io.k8s.api.core.v1.ConfigMap`` (memoized)."""
        return _builtin(definition_name)

    @staticmethod
    def for_structural(openapi_v3_schema: dict[str, Any] | None) -> SchemaNode:
        """The node for a CRD's structural schema; `metadata` is ObjectMeta as upstream wires it.

        A missing schema gives the deduced node (maps granular, lists atomic), as for schema-less CRDs.
        """
        if not openapi_v3_schema:
            return deduced()
        key = id(openapi_v3_schema)
        hit = _STRUCTURAL.get(key)
        if hit is not None and hit[0] is openapi_v3_schema:
            return hit[1]
        node = SchemaNode(openapi_v3_schema, "structural")
        node._fields["metadata"] = _builtin_ref(OBJECT_META)
        node._fields.setdefault("apiVersion", _STRING)
        node._fields.setdefault("kind", _STRING)
        if len(_STRUCTURAL) >= 512:
            _STRUCTURAL.clear()
        _STRUCTURAL[key] = (openapi_v3_schema, node)
        return node

    # -- navigation -----------------------------------------------------------------------------------

    def field(self, name: str) -> SchemaNode | None:
        """The node of a declared property, or None when `name` is not a declared property."""
        try:
            return self._fields[name]
        except KeyError:
            pass
        prop = self._props.get(name)
        node = None
        if isinstance(prop, dict):
            node = self._child(prop)
        self._fields[name] = node
        return node

    def map_values(self) -> SchemaNode | None:
        """The node of undeclared keys (additionalProperties, or deduced when unknown fields are kept)."""
        if self._values is False:
            extra = self.schema.get("additionalProperties")
            if isinstance(extra, dict):
                self._values = self._child(extra)
            elif extra is True or self.preserve_unknown or (extra is None and not self._props):
                self._values = deduced()
            else:
                self._values = None
        return self._values  # type: ignore[return-value]

    def items(self) -> SchemaNode | None:
        """The node of list items (None for a non-list; untyped items are deduced)."""
        if self._items is False:
            items = self.schema.get("items")
            if isinstance(items, dict):
                self._items = self._child(items)
            else:
                self._items = deduced() if self.kind in ("list", "any") else None
        return self._items  # type: ignore[return-value]

    def child(self, name: str) -> tuple[SchemaNode | None, bool]:
        """(node, declared) for a key of a map: a declared field, else the map-values node."""
        node = self.field(name)
        if node is not None:
            return node, True
        return self.map_values(), False

    def _child(self, prop: dict[str, Any]) -> SchemaNode:
        ref = prop.get("$ref")
        if ref is not None and self._resolve is _resolve and not _field_overrides(prop):
            return _builtin_ref(ref.removeprefix(REF_PREFIX))
        return SchemaNode(prop, self.origin, self.preserve_unknown, self._resolve)

    # -- semantics ------------------------------------------------------------------------------------

    @property
    def is_atomic(self) -> bool:
        """True when the value is owned and replaced as a whole (scalars, atomic lists and maps)."""
        if self.kind == "scalar":
            return True
        if self.kind == "map":
            return self.map_type == "atomic"
        if self.kind == "list":
            return self.list_relationship()[0] == "atomic"
        return False

    def list_relationship(self) -> tuple[str, tuple[str, ...]]:
        """("atomic" | "set" | "map", keys) as structured-merge-diff reads this list's extensions."""
        lt = self.list_type
        if lt == "map":
            return "map", self.list_map_keys
        if lt == "set":
            return "set", ()
        if lt == "atomic":
            return "atomic", ()
        if self.patch_strategy in ("merge", "merge,retainKeys"):
            return ("map", (self.merge_key,)) if self.merge_key else ("set", ())
        return "atomic", ()


def _field_overrides(prop: dict[str, Any]) -> bool:
    return any(k.startswith("x-kubernetes-") for k in prop)


_STRUCTURAL: dict[int, tuple[dict[str, Any], SchemaNode]] = {}


def _resolve(name: str) -> dict[str, Any]:
    return definitions()[name]


@functools.cache
def _builtin_ref(name: str) -> SchemaNode:
    return SchemaNode({"$ref": REF_PREFIX + name}, "builtin", resolve=_resolve)


def _builtin(name: str) -> SchemaNode:
    if name not in definitions():
        raise KeyError(name)
    return _builtin_ref(name)


@functools.cache
def deduced() -> SchemaNode:
    """The node used where nothing is declared: maps granular with deduced values, lists atomic."""
    return SchemaNode({}, "deduced")


_STRING = SchemaNode({"type": "string"}, "structural")
