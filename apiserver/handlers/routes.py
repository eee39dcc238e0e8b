"""The handlers a server adds beside the generic resource verbs: subresources other than status and scale
(pods/log, exec, eviction, binding, serviceaccounts/token, ...) and request-only kinds (reviews, Binding),
each a callable built with only what it uses."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from ..http.negotiation import Target
from ..requestinfo import RequestInfo
from ..resources import ResourceType

SubresourceHandler = Callable[[web.Request, RequestInfo, ResourceType, Any, Target], Awaitable[web.StreamResponse]]
"""(request, request info, the parent's resource row, user, negotiated target) -> the answer."""

VirtualKind = Callable[[web.Request, RequestInfo, dict[str, Any], Any], Awaitable[dict[str, Any]]]
"""(request, request info, decoded body, user) -> the answer of a kind that is computed, never stored."""


@dataclass
class SubresourceTable:
    """Subresource handlers by (group, plural, subresource), request-only kinds by (group, kind)."""

    subresources: dict[tuple[str, str, str], SubresourceHandler] = field(default_factory=dict)
    kinds: dict[tuple[str, str], VirtualKind] = field(default_factory=dict)
