"""Defaulting dispatch: built-in kinds use the upstream definitions, custom resources their own schema."""

from __future__ import annotations

from typing import Any

from ..resources import ResourceType
from ..schema.defaults import apply_defaults
from ..schema.definitions import definition_name


def default_object(res: ResourceType, obj: dict[str, Any]) -> None:
    """Fill in server-side defaults in place."""
    if res.object_schema is not None:
        res.object_schema.apply_defaults(obj)
        return
    name = definition_name(res.group, res.version, res.kind)
    if name is None:
        return
    apply_defaults(name, obj)
