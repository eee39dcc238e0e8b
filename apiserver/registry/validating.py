"""Validation dispatch: object metadata and per-kind rules for built-ins, the schema for custom resources."""

from __future__ import annotations

from typing import Any

from ..errors import FieldError
from ..resources import ResourceType


def validate_object(res: ResourceType, obj: dict[str, Any], old: dict[str, Any] | None) -> list[FieldError]:
    """All field errors of a new (old is None) or updated object."""
    if res.crd is not None:
        validator = res.extra.get("validator")
        errs = validator.validate(obj, old) if validator is not None else []
        return _meta_errors(res, obj, old) + errs
    errs = _meta_errors(res, obj, old)
    try:
        from ..validation import validate
    except ImportError:  # pragma: no cover - until the validation module lands
        return errs
    return errs + validate(res.kind, res.group, obj, old)


def _meta_errors(res: ResourceType, obj: dict[str, Any], old: dict[str, Any] | None) -> list[FieldError]:
    try:
        from ..validation import validate_metadata
    except ImportError:  # pragma: no cover - until the validation module lands
        from .basic_meta import validate_metadata
    return validate_metadata(res, obj, old)
