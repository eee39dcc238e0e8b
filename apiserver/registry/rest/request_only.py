"""The storage of a kind that is created and never stored (the access reviews, SelfSubjectReview, TokenReview,
the legacy `bindings`): upstream's rest.Creater of such a kind. The handler decodes the POSTed object and encodes
what `create` answers."""

from __future__ import annotations

from typing import Any, Protocol

from ...auth.user import UserInfo
from ..generic import WriteOptions


class RequestOnlyREST(Protocol):
    """Answers one POSTed object of a request-only kind (namespace: the request's, "" for cluster-scoped kinds)."""

    async def create(self, namespace: str, obj: dict[str, Any], user: UserInfo,
                     opts: WriteOptions) -> dict[str, Any]: ...
