"""The review kinds as registry-level REST objects, as upstream's pkg/registry/authentication and
pkg/registry/authorization storages: SelfSubjectReview (`kubectl auth whoami`) and the access reviews
(`kubectl auth can-i`: SelfSubjectAccessReview, SubjectAccessReview, LocalSubjectAccessReview,
SelfSubjectRulesReview) answered by RBAC. Each is request-only (`request_only.RequestOnlyREST`): the answer is
computed from the posted object and never stored. TokenReview, which needs the authenticators (JWT, x509: slow to
import, and absent in insecure mode), is built in `tokens.py`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...auth import reviews
from ...auth.user import UserInfo
from ..generic import WriteOptions
from .request_only import RequestOnlyREST

AUTHN, AUTHZ = "authentication.k8s.io", "authorization.k8s.io"
Answer = Callable[[dict[str, Any], str, UserInfo], dict[str, Any]]
"""(the posted review, the request's namespace, the caller) -> the review with its status filled in."""


class ReviewREST:
    """One review kind, answered by `answer`."""

    def __init__(self, answer: Answer) -> None:
        self.answer = answer

    async def create(self, namespace: str, obj: dict[str, Any], user: UserInfo,
                     opts: WriteOptions) -> dict[str, Any]:
        return self.answer(obj, namespace, user)


def review_storage(authorizer: reviews.Authorizer) -> dict[tuple[str, str], RequestOnlyREST]:
    """SelfSubjectReview and the access reviews by (group, kind), answered by `authorizer` (RBAC)."""
    return {
        (AUTHN, "SelfSubjectReview"): ReviewREST(lambda obj, namespace, user: reviews.self_subject_review(user)),
        (AUTHZ, "SelfSubjectAccessReview"): ReviewREST(
            lambda obj, namespace, user: reviews.self_subject_access_review(obj, user, authorizer)),
        (AUTHZ, "SubjectAccessReview"): ReviewREST(
            lambda obj, namespace, user: reviews.subject_access_review(obj, authorizer)),
        (AUTHZ, "LocalSubjectAccessReview"): ReviewREST(
            lambda obj, namespace, user: reviews.local_subject_access_review(obj, namespace, authorizer)),
        (AUTHZ, "SelfSubjectRulesReview"): ReviewREST(
            lambda obj, namespace, user: reviews.self_subject_rules_review(obj, user, authorizer)),
    }
