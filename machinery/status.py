"""metav1.Status, the shape every API error takes on the wire: the server builds it (`failure`), clients read it
back as a typed `ApiError` (NotFound, Conflict, ...)."""

from __future__ import annotations

from typing import Any

DETAILS_ORDER = ("name", "group", "kind", "uid", "causes", "retryAfterSeconds")
"""metav1.StatusDetails' fields in Go's declaration order, the order its encoder writes them."""
CAUSE_ORDER = ("reason", "message", "field")


def go_ordered_details(details: dict[str, Any]) -> dict[str, Any]:
    """`details` (and its causes) with keys in Go's field order, so Status bodies match upstream byte for byte."""
    ordered = {key: details[key] for key in DETAILS_ORDER if key in details}
    causes = ordered.get("causes")
    if isinstance(causes, list):
        ordered["causes"] = [{key: c[key] for key in CAUSE_ORDER if key in c} | c if isinstance(c, dict) else c
                             for c in causes]
    return ordered | {key: value for key, value in details.items() if key not in ordered}


def failure(code: int, reason: str | None, message: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    """A Failure Status in the server's field order (reason and details left out when None)."""
    body: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                            "message": message}
    if reason is not None:
        body["reason"] = reason
    if details is not None:
        body["details"] = go_ordered_details(details)
    body["code"] = code
    return body


class ApiError(Exception):
    """A non-2xx answer, with the Status body the server sent. `ApiError.of` picks the typed subclass."""

    def __init__(self, status: int, body: dict[str, Any]) -> None:
        super().__init__(f"{status} {body.get('reason', '')}: {body.get('message', '')}")
        self.status = status
        self.body = body

    @property
    def reason(self) -> str:
        return str(self.body.get("reason") or "")

    @staticmethod
    def of(status: int, body: dict[str, Any]) -> ApiError:
        """The most specific error class for an answer (AlreadyExists before Conflict: both are 409)."""
        if status == 409 and body.get("reason") == "AlreadyExists":
            return AlreadyExists(status, body)
        return _BY_STATUS.get(status, ApiError)(status, body)


class BadRequest(ApiError):
    """400."""


class Unauthorized(ApiError):
    """401."""


class Forbidden(ApiError):
    """403."""


class NotFound(ApiError):
    """404."""


class Conflict(ApiError):
    """409: a stale resourceVersion (or another conflict)."""


class AlreadyExists(Conflict):
    """409 AlreadyExists."""


class Gone(ApiError):
    """410: the resourceVersion is too old (re-list)."""


class Invalid(ApiError):
    """422."""


class TooManyRequests(ApiError):
    """429."""


_BY_STATUS: dict[int, type[ApiError]] = {400: BadRequest, 401: Unauthorized, 403: Forbidden, 404: NotFound,
                                         409: Conflict, 410: Gone, 422: Invalid, 429: TooManyRequests}
