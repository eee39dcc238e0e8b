"""The handlers a server adds beside the generic resource verbs: subresources other than status and scale
(pods/log, exec, eviction, binding, serviceaccounts/token, ...), each a callable built with only what it uses,
and the storage of the request-only kinds (reviews, Binding: `registry/rest/`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from ..http.negotiation import Target
from ..registry.rest.request_only import RequestOnlyREST
from ..requestinfo import RequestInfo
from ..resources import ResourceType

SubresourceHandler = Callable[[web.Request, RequestInfo, ResourceType, Any, Target], Awaitable[web.StreamResponse]]
"""(request, request info, the parent's resource row, user, negotiated target) -> the answer."""



@dataclass
class SubresourceTable:
    """Subresource handlers by (group, plural, subresource), request-only kinds by (group, kind)."""

    subresources: dict[tuple[str, str, str], SubresourceHandler] = field(default_factory=dict)
    kinds: dict[tuple[str, str], RequestOnlyREST] = field(default_factory=dict)
