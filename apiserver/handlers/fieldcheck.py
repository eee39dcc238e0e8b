"""Field validation of request bodies: `fieldValidation=Strict|Warn|Ignore` (unknown and duplicate fields)."""

from __future__ import annotations

from typing import Any

from .. import errors
from ..http.negotiation import media_type
from ..resources import ResourceType
from ..schema.definitions import definition_name

MODES = ("Ignore", "Warn", "Strict")


def check(res: ResourceType, obj: dict[str, Any], raw: bytes, content_type: str | None, mode: str) -> list[str]:
    """Warnings to send back (Warn), or raise 400 (Strict) for unknown or duplicated fields."""
    mode = mode or "Warn"
    if mode not in MODES:
        raise errors.bad_request(f'fieldValidation: Unsupported value: "{mode}": supported values: '
                                 '"Ignore", "Warn", "Strict"')
    if mode == "Ignore":
        return []
    problems = find_problems(res, obj, raw, content_type)
    if not problems:
        return []
    if mode == "Strict":
        raise errors.bad_request(f'{res.kind} in version "{res.version}" cannot be handled as a {res.kind}: '
                                 "strict decoding error: " + ", ".join(problems))
    return problems


def find_problems(res: ResourceType, obj: dict[str, Any], raw: bytes, content_type: str | None) -> list[str]:
    """`unknown field "x"` / `duplicate field "y"` messages, in upstream wording."""
    try:
        from ..schema import fields
    except ImportError:  # pragma: no cover - until the schema fields module lands
        return []
    problems: list[str] = []
    if media_type(content_type) in ("application/json", ""):
        problems += [f'duplicate field "{p}"' for p in fields.duplicate_fields(raw)]
    if res.crd is not None:
        validator = res.extra.get("validator")
        unknown = validator.unknown_fields(obj) if validator is not None else []
    else:
        name = definition_name(res.group, res.version, res.kind)
        unknown = fields.unknown_fields(name, obj) if name else []
    problems += [f'unknown field "{p}"' for p in unknown]
    return problems
