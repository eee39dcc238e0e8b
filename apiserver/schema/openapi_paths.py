"""OpenAPI path items for a group-version's resources, in the shape kubectl reads.

kubectl finds a kind's PATCH operation by its `x-kubernetes-group-version-kind` extension, decides
whether to send a strategic merge patch from that operation's request content types, and whether the
server does field validation from a `fieldValidation` query parameter on the operation itself. Every
operation therefore carries its action, its group/version/kind, and its own query parameters.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mini_kube.apiserver.resources import ResourceType, Subresource
from mini_kube.apiserver.schema.definitions import definition_name, definitions

PATCH_TYPES = ("application/apply-patch+yaml", "application/json-patch+json", "application/merge-patch+json",
               "application/strategic-merge-patch+json")
OBJECT_TYPES = ("application/json", "application/yaml", "application/vnd.kubernetes.protobuf")
CUSTOM_TYPES = ("application/json", "application/yaml")
PATCH = "io.k8s.apimachinery.pkg.apis.meta.v1.Patch"
STATUS = "io.k8s.apimachinery.pkg.apis.meta.v1.Status"
DELETE_OPTIONS = "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions"
RESOURCE_LIST = "io.k8s.apimachinery.pkg.apis.meta.v1.APIResourceList"

_WRITE = ("dryRun", "fieldManager", "fieldValidation")
_LIST = ("allowWatchBookmarks", "continue", "fieldSelector", "labelSelector", "limit", "resourceVersion",
         "resourceVersionMatch", "sendInitialEvents", "timeoutSeconds", "watch")
_DELETE = ("dryRun", "gracePeriodSeconds", "propagationPolicy")
_BOOL = {"allowWatchBookmarks", "force", "sendInitialEvents", "watch"}
_INT = {"gracePeriodSeconds", "limit", "timeoutSeconds"}


@dataclass(frozen=True, slots=True)
class Target:
    """What one path serves: its kind's schema name and group/version/kind."""

    schema: str | None
    group: str
    version: str
    kind: str

    @property
    def gvk(self) -> dict[str, str]:
        return {"group": self.group, "kind": self.kind, "version": self.version}


def camel(text: str) -> str:
    """`rbac.authorization.k8s.io` -> `RbacAuthorization`, `` -> `Core` (operation id style)."""
    if not text:
        return "Core"
    text = text.removesuffix(".k8s.io")
    return "".join(part[:1].upper() + part[1:] for part in text.replace("-", ".").split("."))


def _query(name: str, v3: bool) -> dict[str, Any]:
    kind = "boolean" if name in _BOOL else "integer" if name in _INT else "string"
    if v3:
        return {"in": "query", "name": name, "schema": {"type": kind, "uniqueItems": True}}
    return {"in": "query", "name": name, "type": kind, "uniqueItems": True}


def _path_param(name: str, v3: bool) -> dict[str, Any]:
    if v3:
        return {"in": "path", "name": name, "required": True, "schema": {"type": "string", "uniqueItems": True}}
    return {"in": "path", "name": name, "required": True, "type": "string", "uniqueItems": True}


class PathBuilder:
    """Builds the `paths` of one group-version document, v3 (`content`) or v2 (`consumes`/`schema`)."""

    def __init__(self, group: str, version: str, v3: bool, ref_prefix: str) -> None:
        self.group, self.version, self.v3, self.prefix = group, version, v3, ref_prefix
        self.ids = camel(group) + version[:1].upper() + version[1:]
        self.used: set[str] = set()

    def _ref(self, name: str | None) -> dict[str, Any]:
        if name is None:
            return {"type": "object"}
        self.used.add(name)
        return {"$ref": self.prefix + name}

    def _body(self, name: str | None, types: tuple[str, ...]) -> dict[str, Any]:
        if self.v3:
            schema = self._ref(name)
            return {"requestBody": {"content": {t: {"schema": schema} for t in types}, "required": True}}
        return {"consumes": list(types), "parameters": [{"in": "body", "name": "body", "required": True,
                                                          "schema": self._ref(name)}]}

    def _response(self, name: str | None, types: tuple[str, ...], codes: tuple[str, ...]) -> dict[str, Any]:
        schema = self._ref(name)
        if self.v3:
            content = {t: {"schema": schema} for t in types}
            responses = {code: {"description": _DESCRIPTIONS[code], "content": content} for code in codes}
        else:
            responses = {code: {"description": _DESCRIPTIONS[code], "schema": schema} for code in codes}
        responses["401"] = {"description": "Unauthorized"}
        return {"responses": responses} if self.v3 else {"produces": list(types), "responses": responses}

    def operation(self, op_id: str, action: str, target: Target, *, body: str | None = None,
                  body_types: tuple[str, ...] = (), reply: str | None, reply_types: tuple[str, ...],
                  codes: tuple[str, ...] = ("200",), query: tuple[str, ...] = ()) -> dict[str, Any]:
        """One operation with its request body, responses, query parameters and extensions."""
        op: dict[str, Any] = {"description": f"{action} {target.kind}", "operationId": op_id,
                              "tags": [f"{self.ids[0].lower()}{self.ids[1:]}"]}
        params = [_query(name, self.v3) for name in query]
        if body_types:
            request = self._body(body, body_types)
            params = request.pop("parameters", []) + params
            op.update(request)
        if params:
            op["parameters"] = params
        op.update(self._response(reply, reply_types, codes))
        op["x-kubernetes-action"] = action
        op["x-kubernetes-group-version-kind"] = target.gvk
        return op

    def resource(self, row: ResourceType, target: Target, custom: bool) -> dict[str, dict[str, Any]]:
        """The path items of one resource and its subresources."""
        types = CUSTOM_TYPES if custom else OBJECT_TYPES
        patches = tuple(t for t in PATCH_TYPES if not (custom and "strategic" in t))
        list_schema = target.schema and _list_name(target.schema, row, custom)
        base = f"/api/{self.version}" if not self.group else f"/apis/{self.group}/{self.version}"
        ns = "/namespaces/{namespace}" if row.namespaced else ""
        scope = "Namespaced" if row.namespaced else ""
        collection = f"{base}{ns}/{row.plural}"
        item = f"{collection}/{{name}}"
        verbs = set(row.verbs)
        kind = target.kind
        paths: dict[str, dict[str, Any]] = {}
        coll: dict[str, Any] = {}
        if "list" in verbs:
            coll["get"] = self.operation(f"list{self.ids}{scope}{kind}", "list", target, reply=list_schema,
                                         reply_types=types, query=_LIST)
        if "create" in verbs:
            coll["post"] = self.operation(f"create{self.ids}{scope}{kind}", "post", target, body=target.schema,
                                          body_types=("*/*",) if not self.v3 else types, reply=target.schema,
                                          reply_types=types, codes=("200", "201", "202"), query=_WRITE)
        if "deletecollection" in verbs:
            coll["delete"] = self.operation(f"delete{self.ids}Collection{scope}{kind}", "deletecollection",
                                            target, reply=STATUS, reply_types=types, query=_DELETE + _LIST)
        if coll:
            paths[collection] = self._params(coll, row.namespaced, False)
        if row.namespaced and "list" in verbs:
            paths[f"{base}/{row.plural}"] = {"get": self.operation(
                f"list{self.ids}{kind}ForAllNamespaces", "list", target, reply=list_schema, reply_types=types,
                query=_LIST)}
        one = self._item_ops(f"{scope}{kind}", target, verbs, types, patches, with_delete=True)
        if one:
            paths[item] = self._params(one, row.namespaced, True)
        for sub in row.subresources:
            sub_ops = self._subresource(row, sub, target, scope, types, patches)
            if sub_ops:
                paths[f"{item}/{sub.name}"] = self._params(sub_ops, row.namespaced, True)
        return paths

    def _item_ops(self, name: str, target: Target, verbs: set[str], types: tuple[str, ...],
                  patches: tuple[str, ...], with_delete: bool) -> dict[str, Any]:
        ops: dict[str, Any] = {}
        if "get" in verbs:
            ops["get"] = self.operation(f"read{self.ids}{name}", "get", target, reply=target.schema,
                                        reply_types=types)
        if "update" in verbs:
            ops["put"] = self.operation(f"replace{self.ids}{name}", "put", target, body=target.schema,
                                        body_types=("*/*",) if not self.v3 else types, reply=target.schema,
                                        reply_types=types, codes=("200", "201"), query=_WRITE)
        if "patch" in verbs:
            ops["patch"] = self.operation(f"patch{self.ids}{name}", "patch", target, body=PATCH,
                                          body_types=patches, reply=target.schema, reply_types=types,
                                          codes=("200", "201"), query=(*_WRITE, "force"))
        if with_delete and "delete" in verbs:
            ops["delete"] = self.operation(f"delete{self.ids}{name}", "delete", target, body=DELETE_OPTIONS,
                                           body_types=("*/*",) if not self.v3 else types, reply=STATUS,
                                           reply_types=types, codes=("200", "202"), query=_DELETE)
        return ops

    def _subresource(self, row: ResourceType, sub: Subresource, parent: Target, scope: str,
                     types: tuple[str, ...], patches: tuple[str, ...]) -> dict[str, Any]:
        name = f"{scope}{parent.kind}{camel(sub.name)}"
        if sub.name == "status":
            return self._item_ops(name, parent, set(sub.verbs), types, patches, with_delete=False)
        target = subresource_target(row, sub)
        verbs = set(sub.verbs)
        ops = self._item_ops(name, target, verbs - {"create"}, types, patches, with_delete=False)
        if "create" in verbs:
            ops["post"] = self.operation(f"create{self.ids}{name}", "post", target, body=target.schema,
                                         body_types=("*/*",) if not self.v3 else types, reply=target.schema,
                                         reply_types=types, codes=("200", "201", "202"), query=_WRITE)
        return ops

    def _params(self, item: dict[str, Any], namespaced: bool, named: bool) -> dict[str, Any]:
        params = [_path_param("name", self.v3)] if named else []
        if namespaced:
            params.append(_path_param("namespace", self.v3))
        params.append(_query("pretty", self.v3))
        item["parameters"] = params
        return item

    def discovery(self) -> dict[str, dict[str, Any]]:
        """The group-version's own path: its APIResourceList."""
        base = f"/api/{self.version}/" if not self.group else f"/apis/{self.group}/{self.version}/"
        op = {"description": "get available resources", "operationId": f"get{self.ids}APIResources",
              "tags": [f"{self.ids[0].lower()}{self.ids[1:]}"]}
        op.update(self._response(RESOURCE_LIST, ("application/json", "application/yaml",
                                                 "application/vnd.kubernetes.protobuf"), ("200",)))
        return {base: {"get": op}}


_DESCRIPTIONS = {"200": "OK", "201": "Created", "202": "Accepted"}


def _list_name(schema: str, row: ResourceType, custom: bool) -> str | None:
    name = schema.rsplit(".", 1)[0] + "." + row.list_kind
    return name if custom or name in definitions() else None


def subresource_target(row: ResourceType, sub: Subresource) -> Target:
    """The kind a subresource speaks (Scale is autoscaling/v1; Eviction is policy/v1; ...)."""
    group = sub.group or row.group
    version = sub.version or row.version
    name = definition_name(group, version, sub.kind)
    if name is None:
        name = _any_version(sub.kind)
        if name is not None:
            gvk = definitions()[name]["x-kubernetes-group-version-kind"][0]
            group, version = gvk["group"], gvk["version"]
    return Target(name, group, version, sub.kind)


def _any_version(kind: str) -> str | None:
    """The stable (v1) upstream definition of a kind, wherever its group."""
    for name, schema in sorted(definitions().items()):
        for gvk in schema.get("x-kubernetes-group-version-kind", ()):
            if gvk["kind"] == kind and gvk["version"] == "v1":
                return name
    return None
