"""Requests that run to their end: a task cancelled while its request waits for the API server's answer stops
waiting at once, but the request itself completes (its answer read and dropped). A Pod's delete event often
arrives before the answer to the kubelet's own final delete or last status write; abandoning those requests
would close their connections mid-request, which a real kube-apiserver logs as "Timeout or abort while
handling" (issue #28: 120-150 per 1,000-Pod scale-down)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any, TypeVar

T = TypeVar("T")
_running: set[asyncio.Future[Any]] = set()  # requests whose callers may have gone: kept until they end


async def to_the_end(request: Awaitable[T]) -> T:
    """Await `request`; when the caller is cancelled, the request still runs to its end."""
    task = asyncio.ensure_future(request)
    _running.add(task)
    task.add_done_callback(_ended)
    return await asyncio.shield(task)


def _ended(task: asyncio.Future[Any]) -> None:
    _running.discard(task)
    if not task.cancelled():
        task.exception()  # retrieved: the answer of a request nobody waits for any more is dropped quietly
