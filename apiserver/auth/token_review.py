"""authentication.k8s.io/v1 TokenReview: whether a bearer token authenticates here, and as whom.

As upstream's tokenreview REST storage, the token is checked as if it came in a request's Authorization header
(so the user carries `system:authenticated`); an unknown or invalid token answers `authenticated: false` with
the authenticator's error, not an HTTP error. `spec.audiences` (default: the API server's own) must meet the
token's audiences; tokens with none of their own (the static token file) are valid for the server's."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from mini_kube.apiserver.auth.authn import AuthenticationError, Credentials
from mini_kube.apiserver.auth.user import UserInfo
from mini_kube.apiserver.errors import bad_request

AUTHN_VERSION = "authentication.k8s.io/v1"


def _token_audiences(token: str, default: Sequence[str]) -> list[str]:
    import jwt  # loaded with the first review, not with the server

    try:
        aud = jwt.decode(token, options={"verify_signature": False}).get("aud")
    except jwt.PyJWTError:
        return list(default)
    return [aud] if isinstance(aud, str) else list(aud or default)


def token_review(body: Mapping[str, Any], authenticate: Callable[[Credentials], UserInfo],
                 api_audiences: Sequence[str]) -> dict[str, Any]:
    """The TokenReview `body` answered: its status filled in."""
    spec = dict(body.get("spec") or {})
    token = spec.get("token") or ""
    if not token:
        raise bad_request("token is required for TokenReview in authentication")
    status: dict[str, Any] = {"user": {}}
    try:
        user = authenticate(Credentials(None, f"Bearer {token}"))
    except AuthenticationError as exc:
        status.update(authenticated=False, error=str(exc) or "invalid bearer token")
        user = None
    if user is not None:
        wanted = list(spec.get("audiences") or api_audiences)
        matched = [a for a in wanted if a in _token_audiences(token, api_audiences)]
        if matched:
            status.update(authenticated=True, user=user.to_api(), audiences=matched)
        else:
            status.update(authenticated=False, error="token audiences are invalid for the target audiences")
    metadata = {"creationTimestamp": None, **(body.get("metadata") or {})}  # Go's zero time, as upstream answers
    return {"kind": "TokenReview", "apiVersion": AUTHN_VERSION, "metadata": metadata, "spec": spec,
            "status": status}
