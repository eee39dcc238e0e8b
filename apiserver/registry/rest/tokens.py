"""TokenRequest (`serviceaccounts/token`) and TokenReview as registry-level REST objects, as upstream's TokenREST
and tokenreview storage: a token signed for a service account (and the objects it is bound to), and whether a
bearer token authenticates here. Only a secure server has the signing key and authenticators these need (and
imports this module: JWT and x509 are slow to import). The handlers decode the requests and encode the answers."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ... import errors
from ...auth.authn import Credentials
from ...auth.sa_token import ServiceAccountTokens
from ...auth.token_review import token_review
from ...auth.tokenrequest import object_getter, token_request
from ...auth.user import UserInfo
from ...resources import ResourceType
from ..generic import Registry
from ..reader import ObjectReader
from .reviews import ReviewREST


class TokenRequestREST:
    """Issues tokens for the service accounts of one registry; bound objects are looked up through `objects`."""

    def __init__(self, registry: Registry, objects: ObjectReader, tokens: ServiceAccountTokens) -> None:
        self.registry = registry
        self.get_object = object_getter(objects)
        self.tokens = tokens

    def _service_accounts(self) -> ResourceType:
        res = self.registry.resources.lookup("", "v1", "serviceaccounts")
        assert res is not None, "serviceaccounts is a built-in resource"
        return res

    def require(self, namespace: str, name: str) -> dict[str, Any]:
        """The service account (a missing one's 404 comes before the body is looked at)."""
        return self.registry.get(self._service_accounts(), namespace, name).obj

    async def create(self, namespace: str, name: str, body: Any) -> dict[str, Any]:
        """The decoded TokenRequest `body` for service account `namespace/name` answered: its status holds the
        token and its expiry."""
        service_account = self.require(namespace, name)
        if not isinstance(body, dict):
            raise errors.bad_request("TokenRequest must be an object")
        return token_request(body, service_account, self.tokens, self.get_object)


def token_review_storage(authenticate: Callable[[Credentials], UserInfo],
                         api_audiences: Sequence[str]) -> ReviewREST:
    """TokenReview: does a bearer token authenticate here, and as whom (for the audiences asked, else the
    server's)?"""
    return ReviewREST(lambda obj, namespace, user: token_review(obj, authenticate, api_audiences))
