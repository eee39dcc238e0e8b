"""Validation dispatch: a write is checked by the row's validator, metadata first, then the kind's own rules."""

from __future__ import annotations

from typing import Any

from ..errors import FieldError
from ..resources import ResourceType
from ..validation import validator_of


def validate_object(res: ResourceType, obj: dict[str, Any], old: dict[str, Any] | None) -> list[FieldError]:
    """All field errors of a new (old is None) or updated object."""
    validator = validator_of(res)
    return validator.metadata_errors(obj, old, res.namespaced) + validator.errors(obj, old)
