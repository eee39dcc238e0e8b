"""The OpenAPI documents the apiserver serves: `/openapi/v2`, `/openapi/v3` and its group-versions.

Documents are built on first request and memoized per registry state as serialized bytes; the
registry's `on_change` (CRDs added or removed) drops them. A document of built-in resources only is the same
for every server of the process (a function of the code's resource table): it is built once per process. The
v3 root lists every group-version with `?hash=` set to the SHA-512 of that document's bytes, as kube-apiserver
does, so kubectl may cache documents by URL. `*_bytes` functions return what to send; the dict functions decode
those bytes.
"""

from __future__ import annotations

import hashlib
import threading
import weakref
from collections.abc import Callable, Hashable
from typing import Any, TypeVar, overload

import orjson
from mini_kube.apiserver.resources import ResourceRegistry, ResourceType
from mini_kube.apiserver.schema import openapi_schemas as schemas
from mini_kube.apiserver.schema.definitions import KUBERNETES_VERSION, definition_name
from mini_kube.apiserver.schema.openapi_paths import (
    DELETE_OPTIONS,
    PATCH,
    RESOURCE_LIST,
    STATUS,
    PathBuilder,
    Target,
)
from mini_kube.apiserver.schema.openapi_proto import ACCEPT_TYPES, MEDIA_TYPE, encode_document

TITLE = "Kubernetes"
VERSION = f"v{KUBERNETES_VERSION}"
V2_PROTOBUF = MEDIA_TYPE  # the Content-Type of the protobuf `/openapi/v2`
_ALWAYS = [DELETE_OPTIONS, PATCH, STATUS, RESOURCE_LIST, "io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent"]
_SECURITY = {"BearerToken": {"description": "Bearer Token authentication", "in": "header",
                             "name": "authorization", "type": "apiKey"}}


class _Cache:
    """Serialized documents of one registry state."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.generation = 0
        self.docs: dict[Any, bytes | None] = {}

    def clear(self) -> None:
        with self.lock:
            self.generation += 1
            self.docs = {}

    @overload
    def get(self, key: Hashable, build: Callable[[], bytes]) -> bytes: ...
    @overload
    def get(self, key: Hashable, build: Callable[[], bytes | None]) -> bytes | None: ...

    def get(self, key: Hashable, build: Callable[[], bytes | None]) -> bytes | None:
        """The document `build` makes (each key has one build, so one that never answers None here neither)."""
        docs = self.docs
        if key in docs:
            return docs[key]
        generation = self.generation
        value = build()
        with self.lock:
            if generation == self.generation:
                self.docs[key] = value
        return value


D = TypeVar("D", bytes, bytes | None)
_BUILT_IN: dict[Hashable, Any] = {}
"""Documents whose rows are all built-in, by what of the rows they are built from: one build per process (the
test suite starts hundreds of servers in a few processes; each built the same ~2 MB of documents)."""


def _built_in_key(rows: tuple[ResourceType, ...] | list[ResourceType]) -> tuple[Any, ...] | None:
    """What a document's paths and schemas are built from (openapi_paths.PathBuilder, `_target`), when no row
    is a custom resource (None: the document is the registry's own)."""
    if any(row.crd is not None or row.schema is not None for row in rows):
        return None
    return tuple((row.group, row.version, row.kind, row.list_kind, row.plural, row.namespaced, row.verbs,
                  row.subresources) for row in rows)


def _shared(kind: str, rows: tuple[ResourceType, ...] | list[ResourceType], build: Callable[[], D]) -> D:
    key = _built_in_key(rows)
    if key is None:
        return build()
    key = (kind, key)
    if key not in _BUILT_IN:
        _BUILT_IN[key] = build()
    return _BUILT_IN[key]


_CACHES: weakref.WeakKeyDictionary[ResourceRegistry, _Cache] = weakref.WeakKeyDictionary()
_CACHES_LOCK = threading.Lock()


def _cache(registry: ResourceRegistry) -> _Cache:
    cache = _CACHES.get(registry)
    if cache is None:
        with _CACHES_LOCK:
            cache = _CACHES.get(registry)
            if cache is None:
                cache = _CACHES[registry] = _Cache()
                registry.on_change(cache.clear)
    return cache


def group_versions(registry: ResourceRegistry) -> list[tuple[str, str]]:
    """Every served group-version, core first, then groups by name."""
    seen = {(row.group, row.version) for row in registry.all()}
    return sorted(seen, key=lambda gv: (gv[0] != "", gv))


def doc_path(group: str, version: str) -> str:
    """The key of a group-version in the v3 root: `api/v1`, `apis/apps/v1`."""
    return f"api/{version}" if not group else f"apis/{group}/{version}"


# --- the documents ------------------------------------------------------------------------------

def _rows(registry: ResourceRegistry, group: str, version: str) -> list[ResourceType]:
    return sorted((r for r in registry.all() if r.group == group and r.version == version),
                  key=lambda r: r.plural)


def _target(row: ResourceType) -> tuple[Target, bool]:
    custom = row.crd is not None or row.schema is not None
    name: str | None
    if custom:
        name = schemas.custom_schema_name(row.group, row.version, row.kind)
    else:
        name = definition_name(row.group, row.version, row.kind)
    return Target(name, row.group, row.version, row.kind), custom


def _build(registry: ResourceRegistry, group: str, version: str, v3: bool) -> dict[str, Any] | None:
    rows = _rows(registry, group, version)
    if not rows:
        return None
    prefix = schemas.V3_PREFIX if v3 else schemas.V2_PREFIX
    builder = PathBuilder(group, version, v3, prefix)
    paths = builder.discovery()
    components: dict[str, Any] = {}
    for row in rows:
        target, custom = _target(row)
        if custom:
            components.update(schemas.custom_schemas(row.group, row.version, row.kind, row.list_kind,
                                                     row.schema, v3, row.plural))
        paths.update(builder.resource(row, target, custom))
    builtin = [name for name in sorted(builder.used | set(_ALWAYS)) if name not in components]
    for name in schemas.reachable(builtin + [schemas.OBJECT_META, schemas.LIST_META] if components else builtin):
        components[name] = schemas.definition_schema(name, v3)
    return {"paths": paths, "components": dict(sorted(components.items()))}


def _v3_bytes(registry: ResourceRegistry, group: str, version: str) -> bytes | None:
    built = _build(registry, group, version, v3=True)
    if built is None:
        return None
    doc = {"openapi": "3.0.0", "info": {"title": TITLE, "version": VERSION}, "paths": built["paths"],
           "components": {"schemas": built["components"], "securitySchemes": _SECURITY}}
    return orjson.dumps(doc)


def openapi_v3_document_bytes(registry: ResourceRegistry, group: str, version: str) -> bytes | None:
    """The serialized v3 document of one group-version, or None if nothing is served there."""
    return _cache(registry).get(("v3", group, version), lambda: _shared(
        "v3", _rows(registry, group, version), lambda: _v3_bytes(registry, group, version)))


def openapi_v3_document(registry: ResourceRegistry, group: str, version: str) -> dict[str, Any] | None:
    """The v3 document of one group-version (`components.schemas` holds every schema it reaches)."""
    body = openapi_v3_document_bytes(registry, group, version)
    return None if body is None else orjson.loads(body)


def document_hash(body: bytes) -> str:
    """The `hash` kube-apiserver puts in v3 URLs: upper-case hex SHA-512 of the document."""
    return hashlib.sha512(body).hexdigest().upper()


def _root_bytes(registry: ResourceRegistry) -> bytes:
    paths = {}
    for group, version in group_versions(registry):
        body = openapi_v3_document_bytes(registry, group, version)
        if body is not None:
            key = doc_path(group, version)
            paths[key] = {"serverRelativeURL": f"/openapi/v3/{key}?hash={document_hash(body)}"}
    return orjson.dumps({"paths": paths})


def openapi_v3_root_bytes(registry: ResourceRegistry) -> bytes:
    """The serialized `/openapi/v3` discovery document."""
    return _cache(registry).get("root", lambda: _root_bytes(registry))


def openapi_v3_root(registry: ResourceRegistry) -> dict[str, Any]:
    """`{"paths": {"api/v1": {"serverRelativeURL": "/openapi/v3/api/v1?hash=<HASH>"}, ...}}`."""
    return orjson.loads(openapi_v3_root_bytes(registry))


def _v2_bytes(registry: ResourceRegistry) -> bytes:
    paths: dict[str, Any] = {}
    definitions: dict[str, Any] = {}
    for group, version in group_versions(registry):
        built = _build(registry, group, version, v3=False)
        if built is not None:
            paths.update(built["paths"])
            definitions.update(built["components"])
    doc = {"swagger": "2.0", "info": {"title": TITLE, "version": VERSION}, "paths": paths,
           "definitions": dict(sorted(definitions.items())), "securityDefinitions": _SECURITY,
           "security": [{"BearerToken": []}]}
    return orjson.dumps(doc)


def openapi_v2_bytes(registry: ResourceRegistry) -> bytes:
    """The serialized Swagger 2.0 document of everything served."""
    return _cache(registry).get("v2", lambda: _shared("v2", registry.all(), lambda: _v2_bytes(registry)))


def openapi_v2(registry: ResourceRegistry) -> dict[str, Any]:
    """The Swagger 2.0 document (`/openapi/v2`) of everything served."""
    return orjson.loads(openapi_v2_bytes(registry))


def openapi_v2_protobuf_bytes(registry: ResourceRegistry) -> bytes:
    """`/openapi/v2` for `Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf` (old kubectl)."""
    return _cache(registry).get("v2pb", lambda: _shared("v2pb", registry.all(),
                                                        lambda: encode_document(openapi_v2(registry))))


def wants_v2_protobuf(accept: str) -> bool:
    """Whether an Accept header asks `/openapi/v2` for protobuf (kubectl 1.28 and older always do)."""
    return any(media in accept for media in ACCEPT_TYPES)
