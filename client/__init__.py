"""The client library every component uses to reach the API server, as client-go is: the REST client
(`rest`), informers, the work queue, events, discovery and leader election. It imports only the machinery layer."""

from .rest import (
    AlreadyExists,
    ApiClient,
    ApiError,
    BadRequest,
    Conflict,
    Connection,
    Forbidden,
    Gone,
    Invalid,
    KubeconfigError,
    NotFound,
    ResourceRef,
    TooManyRequests,
    Unauthorized,
)

__all__ = ["AlreadyExists", "ApiClient", "ApiError", "BadRequest", "Conflict", "Connection", "Forbidden", "Gone",
           "Invalid", "KubeconfigError", "NotFound", "ResourceRef", "TooManyRequests", "Unauthorized"]
