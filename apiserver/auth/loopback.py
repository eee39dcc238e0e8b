"""The in-process components' way in: the loopback socket and its credential.

A server that runs its controllers, scheduler and nodes in its own process serves them on an abstract Unix
socket (no file to leave behind, reachable only from this network namespace) in plain HTTP, so neither end
pays TLS: a handshake per connection and encryption of every byte, both sides in the one process. Like
upstream's loopback client config, they authenticate with a random bearer token that lives only in memory;
here it counts only on that socket (a request over TCP offering it is just an invalid token), and it is the
admin's identity, which the in-process components have always used.
"""

from __future__ import annotations

import hmac
import os
import secrets
import socket
from dataclasses import dataclass, field

from aiohttp import web
from mini_kube.apiserver.auth.pki import ADMIN_USER
from mini_kube.apiserver.auth.user import SYSTEM_MASTERS, UserInfo, with_authenticated_group

LOOPBACK_USER = with_authenticated_group(UserInfo(ADMIN_USER, groups=(SYSTEM_MASTERS,)))


def new_socket_name() -> str:
    """A fresh abstract socket name (leading NUL): nothing on disk, gone when the process ends."""
    return f"\0mini-kube-apiserver-{os.getpid()}-{secrets.token_hex(8)}"


def via_unix_socket(request: web.Request) -> bool:
    transport = request.transport
    sock = transport.get_extra_info("socket") if transport is not None else None
    return sock is not None and sock.family == socket.AF_UNIX


@dataclass(frozen=True, slots=True)
class LoopbackCredentials:
    """The token the in-process clients send; `user(request)` is the admin for it on the loopback socket."""

    token: str = field(default_factory=lambda: secrets.token_urlsafe(32))

    def user(self, request: web.Request) -> UserInfo | None:
        if not via_unix_socket(request):
            return None
        offered = request.headers.get("Authorization", "")
        return LOOPBACK_USER if hmac.compare_digest(offered.encode(), f"Bearer {self.token}".encode()) else None
