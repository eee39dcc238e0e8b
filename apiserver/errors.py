"""Kubernetes API errors: `StatusError` carries a metav1.Status; `FieldError` one validation cause.

Every layer raises these; the HTTP layer turns them into Status bodies with the real reason and code.
Wording follows k8s.io/apimachinery/pkg/api/errors and pkg/util/validation/field.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson
from mini_kube.apiserver.gofmt import go_quote, go_strings
from mini_kube.machinery.status import failure


class GoText(str):
    """A bad value already rendered the way Go's `%#v` prints it (a map or struct), shown verbatim."""

    __slots__ = ()


def go_field_value(value: Any) -> str:
    """How `field.Error` prints a built-in kind's bad value: `%q` of a string, `%#v` of a []string.

    (Unstructured values, as custom resources hold them, print as `apiserver.crd.gofmt.go_value`.)
    """
    if isinstance(value, GoText):
        return str(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return go_strings(value)
    return orjson.dumps(value).decode()


@dataclass(slots=True)
class FieldError:
    """One field error, as `field.Error` words it: `<field>: <Type>: <detail>`."""

    type: str  # FieldValueInvalid, FieldValueRequired, FieldValueNotSupported, FieldValueForbidden, ...
    field: str
    detail: str = ""
    value: Any = None
    has_value: bool = False
    supported: tuple[str, ...] = ()

    TYPE_TEXT = {
        "FieldValueInvalid": "Invalid value",
        "FieldValueRequired": "Required value",
        "FieldValueNotSupported": "Unsupported value",
        "FieldValueForbidden": "Forbidden",
        "FieldValueDuplicate": "Duplicate value",
        "FieldValueNotFound": "Not found",
        "FieldValueTooLong": "Too long",
        "FieldValueTooMany": "Too many",
        "InternalError": "Internal error",
        "FieldValueTypeInvalid": "Invalid value",
    }

    def body(self) -> str:
        """The message without the field path (what a Status cause's `message` holds)."""
        text = self.TYPE_TEXT.get(self.type, self.type)
        if self.type == "FieldValueNotSupported":
            msg = f"{text}: {go_field_value(self.value)}"
            if self.supported:
                msg += ": supported values: " + ", ".join(orjson.dumps(s).decode() for s in self.supported)
            return msg
        if self.has_value and self.type in ("FieldValueInvalid", "FieldValueDuplicate", "FieldValueNotFound",
                                            "FieldValueTypeInvalid"):
            msg = f"{text}: {go_field_value(self.value)}"
            return f"{msg}: {self.detail}" if self.detail else msg
        return f"{text}: {self.detail}" if self.detail else text

    def __str__(self) -> str:
        return f"{self.field}: {self.body()}"


def invalid(field: str, value: Any, detail: str) -> FieldError:
    return FieldError("FieldValueInvalid", field, detail, value, True)


def required(field: str, detail: str = "") -> FieldError:
    return FieldError("FieldValueRequired", field, detail)


def forbidden(field: str, detail: str) -> FieldError:
    return FieldError("FieldValueForbidden", field, detail)


def not_supported(field: str, value: Any, supported: tuple[str, ...] | list[str]) -> FieldError:
    return FieldError("FieldValueNotSupported", field, "", value, True, tuple(supported))


def duplicate(field: str, value: Any) -> FieldError:
    return FieldError("FieldValueDuplicate", field, "", value, True)


def too_long(field: str, value: Any, max_len: int) -> FieldError:
    return FieldError("FieldValueTooLong", field, f"may not be more than {max_len} bytes", value, False)


class StatusError(Exception):
    """An API error that becomes a metav1.Status response."""

    def __init__(self, code: int, reason: str, message: str, details: dict[str, Any] | None = None,
                 headers: dict[str, str] | None = None, list_meta: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details
        self.headers = headers or {}
        self.list_meta = list_meta  # the Status's own metadata (a ListMeta: an expired list's `continue`)

    def status(self) -> dict[str, Any]:
        body = failure(self.code, self.reason, self.message, self.details or None)
        if self.list_meta:
            body["metadata"] = dict(self.list_meta)
        return body


def _details(name: str | None, kind: str, **extra: Any) -> dict[str, Any]:
    details: dict[str, Any] = {}
    if name:
        details["name"] = name
    if kind:
        details["kind"] = kind
    details.update(extra)
    return details


def not_found(group_resource: str, name: str) -> StatusError:
    return StatusError(404, "NotFound", f'{group_resource} "{name}" not found',
                       _details(name, group_resource.split(".")[0], **_group(group_resource)))


def _group(group_resource: str) -> dict[str, str]:
    _, _, group = group_resource.partition(".")
    return {"group": group} if group else {}


def already_exists(group_resource: str, name: str) -> StatusError:
    return StatusError(409, "AlreadyExists", f'{group_resource} "{name}" already exists',
                       _details(name, group_resource.split(".")[0], **_group(group_resource)))


def conflict(group_resource: str, name: str, detail: str) -> StatusError:
    return StatusError(409, "Conflict", f'Operation cannot be fulfilled on {group_resource} "{name}": {detail}',
                       _details(name, group_resource.split(".")[0], **_group(group_resource)))


STALE = "the object has been modified; please apply your changes to the latest version and try again"


def invalid_object(kind: str, group: str, name: str, errors: list[FieldError]) -> StatusError:
    """422 Invalid: `Kind "name" is invalid: <errors>` with one cause per error."""
    summary = str(errors[0]) if len(errors) == 1 else "[" + ", ".join(str(e) for e in errors) + "]"
    details = _details(name, kind, causes=[
        {"reason": e.type, "message": e.body(), "field": e.field} for e in errors])
    if group:
        details = {"name": name, "group": group, "kind": kind, "causes": details["causes"]} if name else \
            {"group": group, "kind": kind, "causes": details["causes"]}
    return StatusError(422, "Invalid", f'{kind} "{name}" is invalid: {summary}', details)


def bad_request(message: str) -> StatusError:
    return StatusError(400, "BadRequest", message)


def forbidden_error(message: str, kind: str = "", name: str = "", group: str = "") -> StatusError:
    details = _details(name, kind)
    if group:
        details["group"] = group
    return StatusError(403, "Forbidden", message, details or None)


def method_not_allowed(message: str = "the server does not allow this method on the requested resource") -> StatusError:
    return StatusError(405, "MethodNotAllowed", message, {})


def unauthorized() -> StatusError:
    return StatusError(401, "Unauthorized", "Unauthorized")


def gone(message: str, continue_token: str = "") -> StatusError:
    """410 Expired; `continue_token`: where the list may go on from (at the latest revision)."""
    return StatusError(410, "Expired", message, list_meta={"continue": continue_token} if continue_token else None)


def too_large(message: str = "the server has received a request that is too large") -> StatusError:
    return StatusError(413, "RequestEntityTooLarge", message)


def unsupported_media_type(content_type: str) -> StatusError:
    return StatusError(415, "UnsupportedMediaType", f'the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf; got "{content_type}"')


def not_acceptable(*also: str) -> StatusError:
    """406 from upstream's negotiation.NewNotAcceptableError: the media types the endpoint's serializer offers
    (JSON, YAML and `also`: protobuf for built-in kinds)."""
    offered = ", ".join(("application/json", "application/yaml", *(m for m in also if m)))
    return StatusError(406, "NotAcceptable", f"only the following media types are accepted: {offered}")


def internal_error(message: str) -> StatusError:
    return StatusError(500, "InternalError", f"Internal error occurred: {message}", {"causes": [{"message": message}]})
