"""One audit event per request: who asked (and as whom), what, and the answer's code.

Authentication and authorization leave the requester, the acting user and the request's attributes on the
request under the keys below; `Auditor.record_response` turns them into the event once the answer is known.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from typing import Any

from aiohttp import web
from mini_kube.apiserver.auth.audit import AuditLog, make_event
from mini_kube.apiserver.auth.user import UserInfo
from mini_kube.apiserver.errors import StatusError
from mini_kube.apiserver.requestinfo import AUDIT_ANNOTATIONS_KEY, REQUEST_INFO_KEY

ORIGINAL_USER = web.RequestKey("mini-kube.auth.original-user", UserInfo)
RECEIVED = web.RequestKey("mini-kube.auth.received", dt.datetime)
ACTING = web.RequestKey("mini-kube.auth.acting", tuple)  # (user, request info) once authorized


class Auditor:
    """Builds and queues one audit event per request (a no-op unless `--audit-log` is set)."""

    def __init__(self, path: str | None) -> None:
        self.log = AuditLog(path)

    def record_response(self, request: web.Request, status: int) -> None:
        """The per-response hook: who and what come from the request. Requests refused before authorization
        (failed authentication, refused impersonation) are recorded too, with the requester if known and an
        empty user otherwise, as upstream does."""
        acting = request.get(ACTING)
        if acting is not None:
            self.record(request, acting[0], acting[1], status)
            return
        info = request.get(REQUEST_INFO_KEY)
        if info is not None:
            original = request.get(ORIGINAL_USER)
            self.record(request, original or UserInfo(""), info, status)

    def record(self, request: web.Request, user: Any, info: Any, status: int, error: StatusError | None = None) -> None:
        if not self.log.enabled or not isinstance(user, UserInfo):
            return
        original = request.get(ORIGINAL_USER)
        peer = request.remote or ""
        self.log.log(make_event(
            user=original or user, impersonated=user if original and original is not user else None, attrs=info,
            request_uri=str(request.rel_url), code=status, received=request.get(RECEIVED) or dt.datetime.now(dt.UTC),
            audit_id=request.headers.get("Audit-ID"), source_ips=[peer] if peer else [],
            user_agent=request.headers.get("User-Agent", ""), status_reason=error.reason if error else "",
            status_message=error.message if error else "", annotations=request.get(AUDIT_ANNOTATIONS_KEY)))

    async def close(self) -> None:
        """Flush and close the log (off the event loop)."""
        await asyncio.to_thread(self.log.close)
