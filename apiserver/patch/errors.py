"""Errors raised by the patch and field-management libraries, as the Status the real apiserver answers.

`PatchError` is a `StatusError` whose `details` is written even when empty (upstream's generic 422 carries
`"details": {}`) and whose `reason` is left out when upstream has none (a plain Go error becomes a 500
Status without a reason).
"""

from __future__ import annotations

from typing import Any

from mini_kube.apiserver.errors import StatusError
from mini_kube.machinery.status import failure

# What k8s.io/apimachinery's NewGenericServerResponse says for a 422 with no more information.
GENERIC_422 = "the server rejected our request due to an error in our request"

# Patch content types the apiserver accepts for built-in resources and for custom resources.
BUILTIN_PATCH_TYPES = ("application/json-patch+json", "application/merge-patch+json",
                       "application/strategic-merge-patch+json", "application/apply-patch+yaml")
CUSTOM_PATCH_TYPES = ("application/json-patch+json", "application/merge-patch+json",
                      "application/apply-patch+yaml")


class PatchError(StatusError):
    """A patch or apply failure with the status code, reason and message upstream gives."""

    def __init__(self, code: int, reason: str, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(code, reason, message, details)

    def status(self) -> dict[str, Any]:
        return failure(self.code, self.reason or None, self.message, self.details)

    def __repr__(self) -> str:
        return f"PatchError({self.code}, {self.reason!r}, {self.message!r})"


def bad_request(message: str) -> PatchError:
    return PatchError(400, "BadRequest", message)


def unprocessable() -> PatchError:
    """The generic 422 upstream answers when a JSON patch (or some strategic patches) cannot apply."""
    return PatchError(422, "Invalid", GENERIC_422, {})


def internal(message: str) -> PatchError:
    """A plain Go error reaching the handler: 500, no reason, the error text as message."""
    return PatchError(500, "", message)


def unsupported_patch_type(accepted: tuple[str, ...] = CUSTOM_PATCH_TYPES) -> PatchError:
    """415 for a patch content type the resource does not take (strategic merge on custom resources)."""
    return PatchError(415, "UnsupportedMediaType",
                      "the body of the request was in an unknown format - accepted media types include: "
                      + ", ".join(accepted))


def too_many_operations(count: int, limit: int) -> PatchError:
    return PatchError(413, "RequestEntityTooLarge",
                      f"Request entity too large: The allowed maximum operations in a JSON patch is {limit}, "
                      f"got {count}")
