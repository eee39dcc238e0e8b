"""Field validation of request bodies: type errors always, and unknown or duplicated fields per
`fieldValidation=Strict|Warn|Ignore` (Warn when unset), with the apiserver's wording."""

from __future__ import annotations

from typing import Any

from .. import errors
from ..http.negotiation import JSON, media_type
from ..resources import ResourceType
from ..schema import fields, messages
from ..schema.definitions import definition_name
from ..schema.go_nulls import drop_go_nulls
from ..schema.yamlload import load_yaml

MODES = ("Ignore", "Warn", "Strict")


def check(res: ResourceType, obj: dict[str, Any], raw: bytes | None, content_type: str | None,
          mode: str) -> list[str]:
    """Problems to warn about (Warn), or raise 400 (type errors; Strict). `raw` None: a patched result."""
    mode = mode or messages.DEFAULT_MODE
    if mode not in MODES:
        raise errors.bad_request(f'fieldValidation: Unsupported value: "{mode}": supported values: '
                                 '"Ignore", "Warn", "Strict"')
    if res.crd is not None:
        return _check_custom(res, obj, raw, content_type, mode)
    shape = definition_name(res.group, res.version, res.kind)  # the built-in kind's Go type
    if shape is None:
        return []
    problem = fields.type_errors(shape, obj)
    if problem:
        raise messages.decode_error(res.kind, res.version, problem)
    drop_go_nulls(fields.shape_of(shape), obj)
    if mode == "Ignore":
        fields.drop_unknown(shape, obj)  # decoding into the Go type drops them whatever the mode
        return []
    media = media_type(content_type)
    if raw is None:
        problems = [f'unknown field "{p}"' for p in fields.unknown_fields(shape, obj)]
    elif media in (JSON, ""):
        problems = fields.strict_problems(shape, raw, obj)
    else:
        try:
            _, duplicates = load_yaml(raw)
        except Exception:  # already decoded once: a loader quirk must not turn into a 500
            duplicates = []
        problems = messages.yaml_problems(duplicates, fields.unknown_fields(shape, obj), mode == "Strict")
    if problems and mode == "Strict":
        raise messages.strict_decoding_error(res.kind, res.version, problems)
    if problems:
        fields.drop_unknown(shape, obj)
    return problems


def _check_custom(res: ResourceType, obj: dict[str, Any], raw: bytes | None, content_type: str | None,
                  mode: str) -> list[str]:
    """Custom resources: the unknown fields are what pruning drops (the CRD's schema decides)."""
    validator = res.object_schema
    if mode == "Ignore" or validator is None:
        return []
    unknown = validator.unknown_fields(obj)
    media = media_type(content_type)
    if raw is None:
        problems = [f'unknown field "{p}"' for p in unknown]
    elif media in (JSON, ""):
        problems = [f'duplicate field "{p}"' for p in fields.duplicate_fields(raw, obj)]
        problems += [f'unknown field "{p}"' for p in unknown]
    else:
        try:
            _, duplicates = load_yaml(raw)
        except Exception:  # already decoded once: a loader quirk must not turn into a 500
            duplicates = []
        problems = messages.yaml_problems(duplicates, unknown, mode == "Strict")
    if problems and mode == "Strict":
        raise messages.strict_decoding_error(res.kind, res.version, problems)
    return problems
