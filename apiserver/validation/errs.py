"""Field errors worded like upstream's `field.Error`, with Go's rendering of bad values that are not scalars.

`apiserver.errors` quotes strings and lists of strings the Go way; maps and structs are rendered here (`%#v`)
and passed as pre-rendered text so messages read exactly like the real server's.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from mini_kube.apiserver.errors import FieldError, forbidden, not_supported, required
from mini_kube.apiserver.gofmt import go_quote

NEGATIVE = "must be greater than or equal to 0"
IMMUTABLE = "field is immutable"

__all__ = ["FieldError", "NEGATIVE", "IMMUTABLE", "forbidden", "not_supported", "required", "invalid", "raw",
           "duplicate", "not_found", "too_many", "too_long", "go_map", "each", "nonnegative"]


def go_map(value: dict[str, Any] | None) -> str:
    """A map[string]string as Go's %#v prints it: keys sorted, `{"k":"v", ...}`."""
    if value is None:
        return "map[string]string(nil)"
    items = ", ".join(f"{go_quote(str(k))}:{go_quote(str(value[k]))}" for k in sorted(value))
    return f"map[string]string{{{items}}}"


def raw(kind: str, field: str, text: str, detail: str = "") -> FieldError:
    """An error whose bad value is already rendered Go-style (`Invalid value: <text>: <detail>`)."""
    return FieldError(kind, field, f"{text}: {detail}" if detail else text)


def invalid(field: str, value: Any, detail: str) -> FieldError:
    """field.Invalid, rendering maps the way Go does."""
    if isinstance(value, dict):
        return raw("FieldValueInvalid", field, go_map(value), detail)
    return FieldError("FieldValueInvalid", field, detail, value, True)


def duplicate(field: str, value: Any) -> FieldError:
    return FieldError("FieldValueDuplicate", field, "", value, True)


def not_found(field: str, value: Any, detail: str = "") -> FieldError:
    return FieldError("FieldValueNotFound", field, detail, value, True)


def too_many(field: str, actual: int, maximum: int) -> FieldError:
    return raw("FieldValueTooMany", field, str(actual), f"must have at most {maximum} items")


def too_long(field: str, maximum: int) -> FieldError:
    return FieldError("FieldValueTooLong", field, f"may not be more than {maximum} bytes")


def each(field: str, value: Any, messages: Iterable[str]) -> list[FieldError]:
    """One Invalid error per message of a format check."""
    return [invalid(field, value, msg) for msg in messages]


def nonnegative(field: str, value: int | None) -> list[FieldError]:
    """ValidateNonnegativeField; None (unset) passes."""
    return [invalid(field, value, NEGATIVE)] if value is not None and value < 0 else []
