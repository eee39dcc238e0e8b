"""Validation dispatch: object metadata and per-kind rules for built-ins, the schema for custom resources."""

from __future__ import annotations

from typing import Any

from ..errors import FieldError
from ..resources import ResourceType
from ..validation import validate, validate_metadata


def validate_object(res: ResourceType, obj: dict[str, Any], old: dict[str, Any] | None) -> list[FieldError]:
    """All field errors of a new (old is None) or updated object."""
    errs = validate_metadata(res, obj, old)
    if res.crd is not None:
        validator = res.extra.get("validator")
        return errs + (validator.validate(obj, old) if validator is not None else [])
    return errs + validate(res.kind, res.group, obj, old)
