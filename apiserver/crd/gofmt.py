"""Render JSON values the way Go's fmt prints them in Kubernetes field errors.

Field errors print a bad value with `%v` for numbers and booleans, `%q` for strings and `%#v` for
maps and lists (`map[string]interface {}{"a":1}`). `FieldError` in `apiserver.errors` renders the simple
cases; the helpers here build errors whose value needs Go's exact spelling (floats, maps, lists). The
renderings themselves live in `apiserver.gofmt` (re-exported here for the CRD modules).
"""

from __future__ import annotations

from typing import Any

from mini_kube.apiserver.errors import FieldError
from mini_kube.apiserver.gofmt import go_float, go_number, go_quote, go_sharp, go_type

__all__ = ["go_float", "go_number", "go_quote", "go_sharp", "go_type", "go_plain", "go_value", "invalid",
           "invalid_raw", "type_invalid", "duplicate", "not_supported", "too_many", "too_long", "required",
           "forbidden", "internal"]


def go_plain(value: Any) -> str:
    """`%v` of a scalar JSON value (strings unquoted, nil as `<nil>`); maps and lists as `%#v`."""
    if value is None:
        return "<nil>"
    if isinstance(value, str):
        return value
    if isinstance(value, bool | int | float):
        return go_number(value)
    return go_sharp(value)


def go_value(value: Any) -> str:
    """How `field.Error` prints an unstructured bad value: `%v` for scalars, `%q` for strings, `%#v` otherwise."""
    if value is None:
        return '"null"'
    if isinstance(value, bool | int | float):
        return go_number(value)
    if isinstance(value, str):
        return go_quote(value)
    return go_sharp(value)


def invalid(field: str, value: Any, detail: str) -> FieldError:
    """`field.Invalid` with the bad value spelled as Go spells it."""
    return FieldError("FieldValueInvalid", field, f"{go_value(value)}: {detail}" if detail else go_value(value))


def invalid_raw(field: str, rendered: str, detail: str) -> FieldError:
    """`field.Invalid` whose value is already rendered (Go structs, typed nil slices...)."""
    return FieldError("FieldValueInvalid", field, f"{rendered}: {detail}" if detail else rendered)


def type_invalid(field: str, value: Any, detail: str) -> FieldError:
    """`field.TypeInvalid` (reason FieldValueTypeInvalid, printed as `Invalid value`)."""
    return FieldError("FieldValueTypeInvalid", field, f"{go_value(value)}: {detail}")


def duplicate(field: str, value: Any) -> FieldError:
    """`field.Duplicate` with the value spelled as Go spells it."""
    return FieldError("FieldValueDuplicate", field, go_value(value))


def not_supported(field: str, value: Any, supported: list[str] | tuple[str, ...]) -> FieldError:
    """`field.NotSupported`: `Unsupported value: <v>: supported values: "a", "b"` (null prints as "null")."""
    return FieldError("FieldValueNotSupported", field, "", "null" if value is None else value, True, tuple(supported))


def too_many(field: str, actual: int, maximum: int) -> FieldError:
    """`field.TooMany`: `Too many: <n>: must have at most <max> items`."""
    return FieldError("FieldValueTooMany", field, f"{actual}: must have at most {maximum} items")


def too_long(field: str, maximum: int) -> FieldError:
    """`field.TooLong`: `Too long: may not be more than <max> bytes`."""
    return FieldError("FieldValueTooLong", field, f"may not be more than {maximum} bytes")


def required(field: str, detail: str = "") -> FieldError:
    return FieldError("FieldValueRequired", field, detail)


def forbidden(field: str, detail: str) -> FieldError:
    return FieldError("FieldValueForbidden", field, detail)


def internal(field: str, detail: str) -> FieldError:
    return FieldError("InternalError", field, detail)
