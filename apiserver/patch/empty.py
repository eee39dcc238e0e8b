"""The object a create is compared against: an empty object of the kind as Go would encode it.

Upstream compares a new object with `New(kind)`, a typed empty object whose struct-valued fields
(`spec`, a pod template's `metadata` and `spec`, ...) and fields without `omitempty` (a pod spec's
`containers: null`) are present. That decides which maps and lists get their own `.` entry in the
creator's managedFields (`f:labels: {.: {}}` but not `f:spec` or `f:containers`). Custom resources are
unstructured: their empty object is `{}`.
"""

from __future__ import annotations

import functools
from typing import Any

from mini_kube.apiserver.patch.schema_walk import SchemaNode
from mini_kube.apiserver.schema.definitions import REF_PREFIX, definitions
from mini_kube.apiserver.schema.go_shapes import always_written


def empty_object(schema: SchemaNode | None) -> dict[str, Any]:
    """The empty object of a kind (never to be modified: it is shared)."""
    if schema is None or schema.origin != "builtin" or not schema.name:
        return {}
    return _empty(schema.name)


@functools.cache
def _empty(name: str) -> dict[str, Any]:
    schema = definitions().get(name) or {}
    props = schema.get("properties") or {}
    out: dict[str, Any] = {}
    for prop in schema.get("required") or ():
        spec = props.get(prop) or {}
        types = spec.get("type")
        if types is not None and ("array" in types or "object" in types):
            out[prop] = None
    for prop, zero in always_written(name):
        ref = (props.get(prop) or {}).get("$ref")
        if zero == {} and ref is not None and ref.removeprefix(REF_PREFIX) != name:
            out[prop] = _empty(ref.removeprefix(REF_PREFIX))
        else:
            out[prop] = zero
    return out
