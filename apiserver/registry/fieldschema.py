"""A resource's schema as the patch library walks it (strategic merge, managedFields, apply)."""

from __future__ import annotations

from typing import Any

from ..resources import ResourceType
from ..schema.definitions import definition_name


def schema_node(res: ResourceType) -> Any:
    """The patch library's schema accessor for this resource (None for schema-less custom resources)."""
    from ..patch.schema_walk import SchemaNode  # the patch machinery loads on the first write that needs it

    if res.crd is not None:
        return SchemaNode.for_structural(res.schema) if res.schema else None
    name = definition_name(res.group, res.version, res.kind)
    return SchemaNode.for_builtin(name) if name else None
