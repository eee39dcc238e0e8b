"""Non-resource endpoints: health checks, version, discovery and OpenAPI."""

from __future__ import annotations

import orjson
from aiohttp import web

from .. import VERSION as MINI_KUBE_VERSION
from .. import errors
from ..discovery import AGGREGATED_V2, AGGREGATED_V2BETA1, Discovery
from ..http.responses import HEADERS
from ..resources import ResourceRegistry
from ..store_health import StoreHealth

VERSION = {
    "major": "1", "minor": "32", "gitVersion": f"v1.32.0+mini-kube.{MINI_KUBE_VERSION}", "gitCommit": "", "gitTreeState": "clean",
    "buildDate": "2026-11-22T00:00:00Z", "goVersion": "python3.11", "compiler": "mini-kube",
    "platform": "linux/amd64",
}
POST_START_HOOKS = ("poststarthook/start-apiextensions-controllers", "poststarthook/crd-informer-synced",
                    "poststarthook/rbac/bootstrap-roles", "poststarthook/bootstrap-controller")
LIVEZ_CHECKS = ("ping", "log", "etcd", *POST_START_HOOKS)  # /healthz and /livez
READYZ_CHECKS = ("ping", "log", "etcd", "etcd-readiness", "informer-sync", *POST_START_HOOKS, "shutdown")
STORE_CHECKS = ("etcd", "etcd-readiness")


def _json(body: bytes, content_type: str = "application/json", extra: dict[str, str] | None = None) -> web.Response:
    headers = {**HEADERS, "Content-Type": content_type}
    if extra:
        headers.update(extra)
    return web.Response(body=body, headers=headers)


async def check_problem(store: StoreHealth, ready: bool, check: str) -> str | None:
    """Why a health check fails, or None: the store's probe for `etcd`/`etcd-readiness`, the server being
    stopped (not `ready`) for `shutdown`; the others pass once the server serves."""
    if check in STORE_CHECKS:
        return await store.check()
    if check == "shutdown" and not ready:
        return "process is shutting down"
    return None


async def health(store: StoreHealth, ready: bool, request: web.Request, name: str) -> web.Response:
    """`/healthz`, `/livez`, `/readyz` as upstream's: `?verbose`, `?exclude=<check>`, `/<endpoint>/<check>`; a
    failing check makes the answer 500 with every check listed and the failure's reason withheld."""
    checks = READYZ_CHECKS if name == "/readyz" else LIVEZ_CHECKS
    headers = {**HEADERS, "Content-Type": "text/plain; charset=utf-8", "X-Content-Type-Options": "nosniff"}
    path = request.path.rstrip("/")
    single = path[len(name) + 1:].lstrip("/") if len(path) > len(name) + 1 else ""
    if single:
        if single not in checks:
            raise errors.not_found("", single)
        problem = await check_problem(store, ready, single)
        if problem is not None:
            return web.Response(text=f"internal server error: {problem}\n", headers=headers, status=500)
        return web.Response(text="ok", headers=headers)
    excluded = [e for value in request.query.getall("exclude", []) for e in value.split(",") if e]
    lines, failed = [], False
    for check in checks:
        if check in excluded:
            excluded = [e for e in excluded if e != check]
            lines.append(f"[+]{check} excluded: ok")
        elif await check_problem(store, ready, check) is not None:
            failed = True
            lines.append(f"[-]{check} failed: reason withheld")
        else:
            lines.append(f"[+]{check} ok")
    if excluded:
        quoted = ",".join(f'"{e}"' for e in sorted(set(excluded)))
        lines.append(f"warn: some health checks cannot be excluded: no matches for {quoted}")
    endpoint = name.strip("/")
    if failed:
        return web.Response(text="\n".join(lines) + f"\n{endpoint} check failed\n", headers=headers, status=500)
    if "verbose" not in request.query:
        return web.Response(text="ok", headers=headers)
    return web.Response(text="\n".join(lines) + f"\n{endpoint} check passed\n", headers=headers)


def discovery(disco: Discovery, request: web.Request) -> web.Response | None:
    """Discovery documents, or None when the path is not a discovery path."""
    path = request.path.rstrip("/")
    accept = request.headers.get("Accept", "")
    if path in ("/api", "/apis"):
        if "as=APIGroupDiscoveryList" in accept and ("v=v2" in accept or "v=v2beta1" in accept):
            use_v2 = any("as=APIGroupDiscoveryList" in part and "v=v2" in part and "v2beta1" not in part
                         for part in accept.split(","))
            body = disco.aggregated(legacy=path == "/api")
            if not use_v2:
                body = body.replace(b'"apidiscovery.k8s.io/v2"', b'"apidiscovery.k8s.io/v2beta1"', 1)
            content_type = AGGREGATED_V2 if use_v2 else AGGREGATED_V2BETA1
            return _json(body, content_type, {"Vary": "Accept", "ETag": disco.etag(body),
                                              "Cache-Control": "public"})
        return _json(disco.api_versions() if path == "/api" else disco.api_groups())
    parts = path.strip("/").split("/")
    if parts[0] == "api" and len(parts) == 2:
        document = disco.resource_list("", parts[1])
    elif parts[0] == "apis" and len(parts) == 2:
        document = disco.api_group(parts[1])
    elif parts[0] == "apis" and len(parts) == 3:
        document = disco.resource_list(parts[1], parts[2])
    else:
        return None
    if document is None:
        raise errors.StatusError(404, "NotFound", "the server could not find the requested resource", {})
    return _json(document)


def openapi(resources: ResourceRegistry, request: web.Request) -> web.Response:
    """`/openapi/v2` (JSON or protobuf), `/openapi/v3` and `/openapi/v3/<group-version path>`."""
    from ..schema import openapi as docs  # loaded on first use, not at start-up

    path = request.path.rstrip("/")
    if path == "/openapi/v2":
        if docs.wants_v2_protobuf(request.headers.get("Accept", "")):
            return _json(docs.openapi_v2_protobuf_bytes(resources), docs.V2_PROTOBUF)
        return _json(docs.openapi_v2_bytes(resources))
    if path == "/openapi/v3":
        return _json(docs.openapi_v3_root_bytes(resources), "text/plain; charset=utf-8")
    parts = path[len("/openapi/v3/"):].split("/")
    if parts[0] == "api" and len(parts) == 2:
        group, version = "", parts[1]
    elif parts[0] == "apis" and len(parts) == 3:
        group, version = parts[1], parts[2]
    else:
        raise errors.StatusError(404, "NotFound", "the server could not find the requested resource", {})
    body = docs.openapi_v3_document_bytes(resources, group, version)
    if body is None:
        raise errors.StatusError(404, "NotFound", "the server could not find the requested resource", {})
    return _json(body, extra={"Cache-Control": "public, immutable"} if "hash" in request.query else None)


def version() -> web.Response:
    return _json(orjson.dumps(VERSION))


def root_paths(resources: ResourceRegistry) -> list[str]:
    """`GET /`: the server's root paths, as upstream lists them."""
    paths = {"/api", "/api/v1", "/apis", "/healthz", "/livez", "/readyz", "/version", "/openapi/v2",
             "/openapi/v3", "/.well-known/openid-configuration", "/openid/v1/jwks"}
    for row in resources.all():
        if row.group:
            paths.add(f"/apis/{row.group}")
            paths.add(f"/apis/{row.group}/{row.version}")
    return sorted(paths)
