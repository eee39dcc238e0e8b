"""What the apiserver's custom-resource strategy does around a write, as pure functions.

- create: with a status subresource the status is dropped; generation is 1.
- update (main endpoint): with a status subresource the status is kept from the old object; generation
  is bumped when anything outside metadata changed.
- update (status endpoint): only status (and managedFields) are taken from the request.
- scale: `scale_of` builds the autoscaling/v1 Scale; `apply_scale` writes spec replicas back.
- selectable fields: `field_set` gives the values a field selector matches against.
"""

from __future__ import annotations

import copy
from typing import Any

from mini_kube.apiserver.crd import gofmt
from mini_kube.apiserver.crd.jsonpath import compile_path
from mini_kube.apiserver.errors import StatusError, bad_request

INVALID_SPEC_REPLICAS = -2147483648


def prepare_for_create(obj: dict[str, Any], has_status: bool) -> None:
    """PrepareForCreate: drop status (status subresource) and set generation 1."""
    if has_status:
        obj.pop("status", None)
    obj.setdefault("metadata", {})["generation"] = 1


def _non_metadata(obj: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if k != "metadata"}


def prepare_for_update(obj: dict[str, Any], old: dict[str, Any], has_status: bool) -> None:
    """PrepareForUpdate: keep the old status (status subresource); bump generation on non-metadata change."""
    if has_status:
        if "status" in old:
            obj["status"] = old["status"]
        else:
            obj.pop("status", None)
    old_generation = (old.get("metadata") or {}).get("generation") or 0
    meta = obj.setdefault("metadata", {})
    if _non_metadata(obj) != _non_metadata(old):
        meta["generation"] = old_generation + 1
    else:
        meta["generation"] = old_generation


def prepare_for_status_update(obj: dict[str, Any], old: dict[str, Any]) -> dict[str, Any]:
    """The object a status update stores: the old object with the request's status and managedFields."""
    result = copy.deepcopy(old)
    managed = (obj.get("metadata") or {}).get("managedFields")
    meta = result.setdefault("metadata", {})
    if managed is not None:
        meta["managedFields"] = managed
    else:
        meta.pop("managedFields", None)
    if "status" in obj:
        result["status"] = obj["status"]
    else:
        result.pop("status", None)
    return result


def _path(json_path: str) -> list[str]:
    return json_path.removeprefix(".").split(".")


def _int_at(obj: dict[str, Any], json_path: str) -> tuple[int, bool]:
    value: Any = obj
    for name in _path(json_path):
        if not isinstance(value, dict) or name not in value:
            return 0, False
        value = value[name]
    if value is None:
        return 0, False
    if not isinstance(value, int) or isinstance(value, bool):
        raise bad_request(f".{'.'.join(_path(json_path))} accessor error: {gofmt.go_plain(value)} "
                          f"is of the type {gofmt.go_type(value)}, expected int64")
    return value, True


def scale_of(obj: dict[str, Any], scale: dict[str, Any]) -> dict[str, Any]:
    """The autoscaling/v1 Scale of a custom resource (scaleFromCustomResource)."""
    meta = obj.get("metadata") or {}
    spec_replicas, _ = _int_at(obj, scale.get("specReplicasPath", ".spec.replicas"))
    status_replicas, _ = _int_at(obj, scale.get("statusReplicasPath", ".status.replicas"))
    selector = ""
    if scale.get("labelSelectorPath"):
        value: Any = obj
        for name in _path(scale["labelSelectorPath"]):
            value = value.get(name) if isinstance(value, dict) else None
        selector = value if isinstance(value, str) else ""
    scale_meta = {k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
                  if meta.get(k)}
    status: dict[str, Any] = {"replicas": status_replicas}
    if selector:
        status["selector"] = selector
    return {"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": scale_meta,
            "spec": {"replicas": spec_replicas} if spec_replicas else {}, "status": status}


def apply_scale(obj: dict[str, Any], scale: dict[str, Any], requested: dict[str, Any]) -> dict[str, Any]:
    """A copy of `obj` with the Scale's spec.replicas written at specReplicasPath (and its resourceVersion)."""
    spec_path = scale.get("specReplicasPath", ".spec.replicas")
    _, found = _int_at(obj, spec_path)
    replicas = (requested.get("spec") or {}).get("replicas")
    if replicas is None:
        if not found:
            raise bad_request(f'the spec replicas field "{spec_path}" cannot be empty')
        replicas = 0
    result = copy.deepcopy(obj)
    target = result
    names = _path(spec_path)
    for name in names[:-1]:
        if not isinstance(target.get(name), dict):
            target[name] = {}
        target = target[name]
    target[names[-1]] = int(replicas)
    rv = (requested.get("metadata") or {}).get("resourceVersion")
    if rv:
        result.setdefault("metadata", {})["resourceVersion"] = rv
    return result


def field_set(obj: dict[str, Any], namespaced: bool, selectable_fields: list[dict[str, Any]] | tuple = ()) -> dict[str, str]:
    """The fields a field selector can match: metadata.name(/namespace) and the CRD's selectableFields."""
    meta = obj.get("metadata") or {}
    fields = {"metadata.name": meta.get("name", "")}
    if namespaced:
        fields["metadata.namespace"] = meta.get("namespace", "")
    for selectable in selectable_fields:
        json_path = selectable.get("jsonPath", "")
        value = compile_path(json_path).first(obj)
        if isinstance(value, dict | list):
            raise StatusError(500, "InternalError", "unexpectedly received more than one JSON path result")
        fields[json_path.removeprefix(".")] = "" if value is None else (
            value if isinstance(value, str) else gofmt.go_number(value))
    return fields
