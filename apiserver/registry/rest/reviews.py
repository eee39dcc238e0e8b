"""The review kinds as registry-level REST objects, as upstream's pkg/registry/authentication and
pkg/registry/authorization storages: SelfSubjectReview (`kubectl auth whoami`), the access reviews
(`kubectl auth can-i`: SelfSubjectAccessReview, SubjectAccessReview, LocalSubjectAccessReview,
SelfSubjectRulesReview) answered by RBAC. Each is request-only (`request_only.RequestOnlyREST`): the answer is
computed from the posted object and never stored. TokenReview, which needs the authenticators (JWT, x509: slow to
import, and absent in insecure mode), is in `tokens.py`."""

from __future__ import annotations

from typing import Any

from ...auth import reviews
from ...auth.user import UserInfo
from ..generic import WriteOptions
from .request_only import RequestOnlyREST

AUTHN, AUTHZ = "authentication.k8s.io", "authorization.k8s.io"


class SelfSubjectReviewREST:
    """Who the server thinks the caller is."""

    async def create(self, namespace: str, obj: dict[str, Any], user: UserInfo,
                     opts: WriteOptions) -> dict[str, Any]:
        return reviews.self_subject_review(user)


class SelfSubjectAccessReviewREST:
    """May the caller do this?"""

    def __init__(self, authorizer: reviews.Authorizer) -> None:
        self.authorizer = authorizer

    async def create(self, namespace: str, obj: dict[str, Any], user: UserInfo,
                     opts: WriteOptions) -> dict[str, Any]:
        return reviews.self_subject_access_review(obj, user, self.authorizer)


class SubjectAccessReviewREST:
    """May the user the spec names do this?"""

    def __init__(self, authorizer: reviews.Authorizer) -> None:
        self.authorizer = authorizer

    async def create(self, namespace: str, obj: dict[str, Any], user: UserInfo,
                     opts: WriteOptions) -> dict[str, Any]:
        return reviews.subject_access_review(obj, self.authorizer)


class LocalSubjectAccessReviewREST:
    """SubjectAccessReview within the request's namespace."""

    def __init__(self, authorizer: reviews.Authorizer) -> None:
        self.authorizer = authorizer

    async def create(self, namespace: str, obj: dict[str, Any], user: UserInfo,
                     opts: WriteOptions) -> dict[str, Any]:
        return reviews.local_subject_access_review(obj, namespace, self.authorizer)


class SelfSubjectRulesReviewREST:
    """What may the caller do in a namespace?"""

    def __init__(self, authorizer: reviews.Authorizer) -> None:
        self.authorizer = authorizer

    async def create(self, namespace: str, obj: dict[str, Any], user: UserInfo,
                     opts: WriteOptions) -> dict[str, Any]:
        return reviews.self_subject_rules_review(obj, user, self.authorizer)


def review_storage(authorizer: reviews.Authorizer) -> dict[tuple[str, str], RequestOnlyREST]:
    """The access reviews and SelfSubjectReview by (group, kind), answered by `authorizer` (RBAC); TokenReview is
    `tokens.TokenReviewREST`, which only a server with authenticators serves."""
    return {
        (AUTHN, "SelfSubjectReview"): SelfSubjectReviewREST(),
        (AUTHZ, "SelfSubjectAccessReview"): SelfSubjectAccessReviewREST(authorizer),
        (AUTHZ, "SubjectAccessReview"): SubjectAccessReviewREST(authorizer),
        (AUTHZ, "LocalSubjectAccessReview"): LocalSubjectAccessReviewREST(authorizer),
        (AUTHZ, "SelfSubjectRulesReview"): SelfSubjectRulesReviewREST(authorizer),
    }
