"""Request info: what a request is about (verb, API group/version, resource, namespace, name, subresource).

Parsed from the URL and method the way k8s.io/apiserver/pkg/endpoints/request/requestinfo.go does, before
authentication and authorization, so RBAC and audit see the same attributes the handlers act on.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import unquote

from aiohttp import web

from .http.query import go_bool

SPECIAL_VERBS = {"proxy", "watch"}
NAMESPACE_SUBRESOURCES = {"status", "finalize"}
METHOD_VERBS = {"POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete", "GET": "get", "HEAD": "get"}


@dataclass(slots=True)
class RequestInfo:
    """Kubernetes request attributes. Non-resource requests (`/healthz`, `/version`) have `is_resource=False`."""

    is_resource: bool
    path: str
    verb: str
    api_prefix: str = ""  # "api" or "apis"
    api_group: str = ""
    api_version: str = ""
    namespace: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""
    parts: tuple[str, ...] = ()


def parse_request_info(method: str, path: str, query: Mapping[str, str]) -> RequestInfo:
    """Parse a request the way the upstream RequestInfoFactory does."""
    method = method.upper()
    segments = [unquote(s) for s in path.strip("/").split("/")] if path.strip("/") else []
    info = RequestInfo(is_resource=False, path=path, verb=method.lower())
    if not segments or segments[0] not in ("api", "apis"):
        return info
    prefix, rest = segments[0], segments[1:]
    if prefix == "apis":
        if len(rest) < 2:
            return info
        group, rest = rest[0], rest[1:]
    else:
        group = ""
        if len(rest) < 1:
            return info
    version, rest = rest[0], rest[1:]
    if not rest:
        return info  # discovery document of a group/version
    info = RequestInfo(is_resource=True, path=path, verb=METHOD_VERBS.get(method, method.lower()),
                       api_prefix=prefix, api_group=group, api_version=version)
    if rest[0] in SPECIAL_VERBS:
        if len(rest) < 2:
            return RequestInfo(is_resource=False, path=path, verb=method.lower())
        info.verb = rest[0]
        rest = rest[1:]
    if rest[0] == "namespaces" and len(rest) > 1:
        info.namespace = rest[1]
        if len(rest) > 2 and rest[2] not in NAMESPACE_SUBRESOURCES:
            rest = rest[2:]
    info.parts = tuple(rest)
    if len(rest) >= 3:
        info.subresource = rest[2]
    if len(rest) >= 2:
        info.name = rest[1]
    info.resource = rest[0]
    if not info.name and info.verb == "get":
        info.verb = "watch" if go_bool(query.get("watch")) else "list"
    elif not info.name and info.verb == "delete":
        info.verb = "deletecollection"
    elif info.verb == "get" and go_bool(query.get("watch")):
        info.verb = "watch"
    return info


REQUEST_INFO_KEY = web.RequestKey("mini-kube.request-info", object)
AUDIT_ANNOTATIONS_KEY = web.RequestKey("mini-kube.audit-annotations", dict)  # admission plugins' audit annotations
"""Where the request's parsed RequestInfo is kept on the aiohttp request (for the audit of early failures)."""
