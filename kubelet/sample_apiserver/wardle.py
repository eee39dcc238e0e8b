"""The wardle.example.com API: discovery documents and the flunders (namespaced; v1alpha1, v1beta1) and
fischers (cluster-scoped; v1alpha1) collections: create, get, list (label selectors, metadata.name and
metadata.namespace field selectors), update, merge patch, delete and deletecollection, each object one etcd key."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import orjson
from aiohttp import web

from .storage import Conflict, Etcd

GROUP = "wardle.example.com"
PREFERRED = "v1beta1"
VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update"]


@dataclass(frozen=True, slots=True)
class Kind:
    plural: str
    kind: str
    namespaced: bool
    versions: tuple[str, ...]


KINDS = (Kind("flunders", "Flunder", True, ("v1alpha1", "v1beta1")), Kind("fischers", "Fischer", False, ("v1alpha1",)))
VERSIONS = ("v1beta1", "v1alpha1")  # preferred first


class ApiError(Exception):
    def __init__(self, code: int, reason: str, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code, self.reason, self.message, self.details = code, reason, message, details


def status_response(code: int, reason: str, message: str, details: dict[str, Any] | None = None) -> web.Response:
    body: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                            "message": message, "reason": reason}
    if details:
        body["details"] = details
    body["code"] = code
    return web.Response(status=code, body=orjson.dumps(body), content_type="application/json")


def json_response(body: Any, status: int = 200) -> web.Response:
    return web.Response(status=status, body=orjson.dumps(body), content_type="application/json")


def discovery(parts: list[str]) -> dict[str, Any] | None:
    """The discovery document at /apis[/wardle.example.com[/VERSION]] (parts after `apis`), or None."""
    versions = [{"groupVersion": f"{GROUP}/{v}", "version": v} for v in VERSIONS]
    group = {"name": GROUP, "versions": versions, "preferredVersion": versions[0]}
    if not parts:
        return {"kind": "APIGroupList", "apiVersion": "v1", "groups": [group]}
    if parts[0] != GROUP:
        return None
    if len(parts) == 1:
        return {"kind": "APIGroup", "apiVersion": "v1", **group}
    if len(parts) == 2 and parts[1] in VERSIONS:
        return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": f"{GROUP}/{parts[1]}", "resources": [
            {"name": k.plural, "singularName": k.kind.lower(), "namespaced": k.namespaced, "kind": k.kind,
             "verbs": VERBS} for k in KINDS if parts[1] in k.versions]}
    return None


@dataclass(frozen=True, slots=True)
class Target:
    """What a resource request names."""

    kind: Kind
    version: str
    namespace: str  # "" for cluster-scoped kinds and lists across namespaces
    name: str

    @property
    def api_version(self) -> str:
        return f"{GROUP}/{self.version}"

    def key(self, name: str | None = None, namespace: str | None = None) -> str:
        ns = self.namespace if namespace is None else namespace
        base = f"/registry/{GROUP}/{self.kind.plural}/"
        return base + (f"{ns}/" if self.kind.namespaced else "") + (name if name is not None else self.name)

    def prefix(self) -> str:
        base = f"/registry/{GROUP}/{self.kind.plural}/"
        return base + (f"{self.namespace}/" if self.kind.namespaced and self.namespace else "")

    def verb(self, method: str, watch: bool) -> str:
        if method == "GET":
            return "get" if self.name else ("watch" if watch else "list")
        return {"POST": "create", "PUT": "update", "PATCH": "patch"}.get(method) or (
            "delete" if self.name else "deletecollection")

    def attributes(self, method: str, watch: bool) -> dict[str, Any]:
        attrs = {"verb": self.verb(method, watch), "group": GROUP, "version": self.version,
                 "resource": self.kind.plural, "namespace": self.namespace, "name": self.name}
        return {k: v for k, v in attrs.items() if v}


def parse_target(parts: list[str]) -> Target | None:
    """/apis/wardle.example.com/VERSION/[namespaces/NS/]PLURAL[/NAME] (parts after `apis`)."""
    if len(parts) < 3 or parts[0] != GROUP:
        return None
    version, rest, namespace = parts[1], parts[2:], ""
    if len(rest) >= 3 and rest[0] == "namespaces":
        namespace, rest = rest[1], rest[2:]
    if not rest or len(rest) > 2:
        return None
    kind = next((k for k in KINDS if k.plural == rest[0] and version in k.versions), None)
    if kind is None or (namespace and not kind.namespaced):
        return None
    return Target(kind, version, namespace, rest[1] if len(rest) == 2 else "")


def _labels_match(selector: str, labels: dict[str, str]) -> bool:
    for term in filter(None, (t.strip() for t in selector.split(","))):
        if "!=" in term:
            key, value = term.split("!=", 1)
            if labels.get(key.strip()) == value.strip():
                return False
        elif "=" in term:
            key, value = term.split("=", 1)
            if labels.get(key.strip()) != value.strip().lstrip("="):
                return False
        elif term.startswith("!"):
            if term[1:] in labels:
                return False
        elif term not in labels:
            return False
    return True


def _fields_match(selector: str, obj: dict[str, Any]) -> bool:
    meta = obj.get("metadata") or {}
    for term in filter(None, (t.strip() for t in selector.split(","))):
        key, op, value = term.partition("!=") if "!=" in term else term.partition("=")
        actual = {"metadata.name": meta.get("name", ""), "metadata.namespace": meta.get("namespace", "")}.get(
            key.strip())
        if actual is None:
            raise ApiError(400, "BadRequest", f'"{key.strip()}" is not a known field selector: only '
                                              '"metadata.name", "metadata.namespace"')
        if (actual == value.lstrip("=").strip()) != (op == "="):
            return False
    return True


def _merge(target: Any, patch: Any) -> Any:
    """RFC 7386 merge patch."""
    if not isinstance(patch, dict):
        return patch
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = _merge(out.get(key), value)
    return out


class Wardle:
    """Serves the resource requests of one target."""

    def __init__(self, etcd: Etcd) -> None:
        self.etcd = etcd

    def _out(self, target: Target, obj: dict[str, Any]) -> dict[str, Any]:
        return {"kind": target.kind.kind, "apiVersion": target.api_version,
                **{k: v for k, v in obj.items() if k not in ("kind", "apiVersion")}}

    def _not_found(self, target: Target, name: str) -> ApiError:
        return ApiError(404, "NotFound", f'{target.kind.plural}.{GROUP} "{name}" not found',
                        {"name": name, "group": GROUP, "kind": target.kind.plural})

    async def handle(self, request: web.BaseRequest, target: Target) -> web.Response:
        method = request.method
        if method == "GET" and target.name:
            obj = await self.etcd.get(target.key())
            if obj is None:
                raise self._not_found(target, target.name)
            return json_response(self._out(target, obj))
        if method == "GET":
            return json_response(await self._list(request, target))
        if method == "POST" and not target.name:
            return await self._create(request, target)
        if method in ("PUT", "PATCH") and target.name:
            return await self._update(request, target)
        if method == "DELETE" and target.name:
            if not await self.etcd.delete(target.key()):
                raise self._not_found(target, target.name)
            return json_response({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                                  "details": {"name": target.name, "group": GROUP, "kind": target.kind.plural}})
        if method == "DELETE":
            listed = await self._list(request, target)
            for item in listed["items"]:
                meta = item["metadata"]
                await self.etcd.delete(target.key(meta["name"], meta.get("namespace", "")))
            return json_response(listed)
        raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")

    async def _list(self, request: web.BaseRequest, target: Target) -> dict[str, Any]:
        items, revision = await self.etcd.list(target.prefix())
        labels, fields = request.query.get("labelSelector", ""), request.query.get("fieldSelector", "")
        chosen = [self._out(target, o) for o in items
                  if _labels_match(labels, (o.get("metadata") or {}).get("labels") or {}) and _fields_match(fields, o)]
        return {"kind": f"{target.kind.kind}List", "apiVersion": target.api_version,
                "metadata": {"resourceVersion": revision}, "items": chosen}

    async def _body(self, request: web.BaseRequest, target: Target) -> dict[str, Any]:
        try:
            obj = orjson.loads(await request.read())
        except orjson.JSONDecodeError as exc:
            raise ApiError(400, "BadRequest", f"the body of the request could not be decoded: {exc}") from None
        if not isinstance(obj, dict):
            raise ApiError(400, "BadRequest", "the body of the request was not a JSON object")
        if obj.get("kind") not in (None, target.kind.kind):
            raise ApiError(400, "BadRequest", f"the kind in the data ({obj.get('kind')}) does not match the expected "
                                              f"kind ({target.kind.kind})")
        return obj

    async def _create(self, request: web.BaseRequest, target: Target) -> web.Response:
        obj = await self._body(request, target)
        meta = obj.setdefault("metadata", {})
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = meta["generateName"] + uuid.uuid4().hex[:5]
        name = meta.get("name")
        if not name:
            raise ApiError(422, "Invalid", f"{target.kind.kind}.{GROUP} \"\" is invalid: metadata.name: Required "
                                           "value: name or generateName is required")
        if target.kind.namespaced:
            if meta.get("namespace") not in (None, "", target.namespace):
                raise ApiError(400, "BadRequest", "the namespace of the provided object does not match the "
                                                  "namespace sent on the request")
            meta["namespace"] = target.namespace
        meta.update(uid=str(uuid.uuid4()), creationTimestamp=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"))
        meta.pop("resourceVersion", None)
        try:
            stored = await self.etcd.create(target.key(name), self._out(target, obj))
        except Conflict:
            raise ApiError(409, "AlreadyExists", f'{target.kind.plural}.{GROUP} "{name}" already exists',
                           {"name": name, "group": GROUP, "kind": target.kind.plural}) from None
        return json_response(self._out(target, stored), 201)

    async def _update(self, request: web.BaseRequest, target: Target) -> web.Response:
        current = await self.etcd.get(target.key())
        if current is None:
            raise self._not_found(target, target.name)
        body = await self._body(request, target) if request.method == "PUT" else None
        if body is None:
            try:
                patch = orjson.loads(await request.read())
            except orjson.JSONDecodeError as exc:
                raise ApiError(400, "BadRequest", f"the body of the request could not be decoded: {exc}") from None
            body = _merge(self._out(target, current), patch)
        meta = body.setdefault("metadata", {})
        revision = str(meta.get("resourceVersion") or current["metadata"]["resourceVersion"])
        for key in ("uid", "creationTimestamp", "namespace", "name"):
            if key in current["metadata"]:
                meta[key] = current["metadata"][key]
        try:
            stored = await self.etcd.update(target.key(), self._out(target, body), revision)
        except Conflict:
            raise ApiError(409, "Conflict", f'Operation cannot be fulfilled on {target.kind.plural}.{GROUP} '
                                            f'"{target.name}": the object has been modified; please apply your '
                                            "changes to the latest version and try again",
                           {"name": target.name, "group": GROUP, "kind": target.kind.plural}) from None
        return json_response(self._out(target, stored))
