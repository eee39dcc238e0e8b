"""Who is making a request: the authenticated identity every later step (RBAC, audit) sees."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

SYSTEM_MASTERS = "system:masters"
ALL_AUTHENTICATED = "system:authenticated"
ALL_UNAUTHENTICATED = "system:unauthenticated"
ANONYMOUS = "system:anonymous"

SA_USER_PREFIX = "system:serviceaccount:"
SA_GROUP = "system:serviceaccounts"


@dataclass(frozen=True, slots=True)
class UserInfo:
    """An identity: name, uid, groups and extra attributes, as `user.Info` carries them."""

    name: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "groups", tuple(self.groups))
        object.__setattr__(self, "extra", {k: tuple(v) for k, v in self.extra.items()})

    def with_groups(self, groups: Sequence[str]) -> UserInfo:
        return UserInfo(self.name, self.uid, tuple(groups), self.extra)

    def to_api(self) -> dict[str, Any]:
        """The `UserInfo` shape of authentication.k8s.io (empty fields omitted)."""
        out: dict[str, Any] = {"username": self.name}
        if self.uid:
            out["uid"] = self.uid
        if self.groups:
            out["groups"] = list(self.groups)
        if self.extra:
            out["extra"] = {k: list(v) for k, v in self.extra.items()}
        return out


def is_superuser(user: UserInfo) -> bool:
    """Members of `system:masters` may do anything (the privileged-group authorizer)."""
    return SYSTEM_MASTERS in user.groups


def service_account_username(namespace: str, name: str) -> str:
    return f"{SA_USER_PREFIX}{namespace}:{name}"


def service_account_groups(namespace: str) -> tuple[str, str]:
    return (SA_GROUP, f"{SA_GROUP}:{namespace}")


def split_service_account_username(username: str) -> tuple[str, str] | None:
    """`system:serviceaccount:ns:name` -> (ns, name); None for any other user name."""
    if not username.startswith(SA_USER_PREFIX):
        return None
    namespace, sep, name = username[len(SA_USER_PREFIX):].partition(":")
    if not sep or not namespace or not name or ":" in name:
        return None
    return namespace, name


def with_authenticated_group(user: UserInfo) -> UserInfo:
    """Add `system:authenticated` unless the user already carries it or `system:unauthenticated`."""
    if ALL_AUTHENTICATED in user.groups or ALL_UNAUTHENTICATED in user.groups:
        return user
    return user.with_groups((*user.groups, ALL_AUTHENTICATED))


ANONYMOUS_USER = UserInfo(ANONYMOUS, groups=(ALL_UNAUTHENTICATED,))
