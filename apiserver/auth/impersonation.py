"""Impersonation (`kubectl --as`, `--as-group`): the Impersonate-* headers, each checked against the
`impersonate` verb, and the identity the request then runs as.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from urllib.parse import unquote

from mini_kube.apiserver.auth.rbac import Attributes, AttributesLike, Decision, forbidden
from mini_kube.apiserver.auth.user import (
    ALL_AUTHENTICATED,
    ALL_UNAUTHENTICATED,
    ANONYMOUS,
    UserInfo,
    service_account_groups,
    split_service_account_username,
)
from mini_kube.apiserver.errors import StatusError

USER_HEADER = "impersonate-user"
UID_HEADER = "impersonate-uid"
GROUP_HEADER = "impersonate-group"
EXTRA_PREFIX = "impersonate-extra-"
AUTHN_GROUP = "authentication.k8s.io"

AuthorizeFn = Callable[[UserInfo, AttributesLike], Decision]


@dataclass(frozen=True, slots=True)
class ImpersonationRequest:
    """What the Impersonate-* headers ask for."""

    user: str = ""
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def requested(self) -> bool:
        return bool(self.user or self.uid or self.groups or self.extra)


def parse_headers(headers: Iterable[tuple[str, str]]) -> ImpersonationRequest:
    """Read Impersonate-User/-Uid/-Group (repeatable) and Impersonate-Extra-<key> (escaped, repeatable)."""
    user, uid = "", ""
    groups: list[str] = []
    extra: dict[str, list[str]] = {}
    for name, value in headers:
        key = name.lower()
        if key == USER_HEADER:
            user = value
        elif key == UID_HEADER:
            uid = value
        elif key == GROUP_HEADER:
            groups.append(value)
        elif key.startswith(EXTRA_PREFIX):
            extra.setdefault(unquote(key[len(EXTRA_PREFIX):]), []).append(value)
    return ImpersonationRequest(user, uid, tuple(groups), {k: tuple(v) for k, v in extra.items()})


def checks(request: ImpersonationRequest) -> list[Attributes]:
    """The `impersonate` authorizations the request needs, in upstream order."""
    out: list[Attributes] = []
    sa = split_service_account_username(request.user)
    if sa is not None:
        out.append(Attributes("impersonate", "", "serviceaccounts", namespace=sa[0], name=sa[1]))
    elif request.user:
        out.append(Attributes("impersonate", "", "users", name=request.user))
    out.extend(Attributes("impersonate", "", "groups", name=g) for g in request.groups)
    for key, values in request.extra.items():
        out.extend(Attributes("impersonate", AUTHN_GROUP, "userextras", key, name=v) for v in values)
    if request.uid:
        out.append(Attributes("impersonate", AUTHN_GROUP, "uids", name=request.uid))
    return out


def impersonated_user(request: ImpersonationRequest) -> UserInfo:
    """The identity to act as: SA users get their SA groups if none were given; authenticated/unauthenticated added."""
    groups = list(request.groups)
    sa = split_service_account_username(request.user)
    if sa is not None and not groups:
        groups = list(service_account_groups(sa[0]))
    if request.user != ANONYMOUS:
        if ALL_AUTHENTICATED not in groups and ALL_UNAUTHENTICATED not in groups:
            groups.append(ALL_AUTHENTICATED)
    elif ALL_UNAUTHENTICATED not in groups:
        groups.append(ALL_UNAUTHENTICATED)
    return UserInfo(request.user, request.uid, tuple(groups), request.extra)


def impersonate(headers: Iterable[tuple[str, str]], requester: UserInfo, authorize: AuthorizeFn) -> UserInfo | None:
    """The user to act as, or None without impersonation headers; raises a 403/500 StatusError when refused."""
    request = parse_headers(headers)
    if not request.requested:
        return None
    if not request.user:
        asked = ", ".join(h for h, v in ((UID_HEADER, request.uid), (GROUP_HEADER, request.groups),
                                         (EXTRA_PREFIX + "*", request.extra)) if v)
        raise StatusError(500, "InternalError",
                          f"Internal error occurred: requested [{asked}] without impersonating a user")
    for attrs in checks(request):
        decision = authorize(requester, attrs)
        if not decision.allowed:
            raise forbidden(requester, attrs, decision.reason)
    return impersonated_user(request)
