"""The `scale` subresource (autoscaling/v1 Scale) of any scalable resource, as upstream's ScaleREST storages:
a Scale read from the object's replicas, status replicas and selector (built-in kinds: `.spec.replicas`,
`.status.replicas`, `.spec.selector`; custom resources: the CRD's scale paths), and a write that changes only the
replicas. `handlers/subresources.py` decodes Scale bodies and patches; admission reads Scales from here."""

from __future__ import annotations

from typing import Any

from mini_kube.machinery.labels import selector_string

from ... import errors
from ...crd.serving import served
from ...crd.strategy import apply_scale, scale_of
from ...resources import ResourceType
from ..cache import Entry
from ..generic import Registry, WriteOptions


def path_get(obj: dict[str, Any], path: str) -> Any:
    """The value at a dotted path (`.spec.replicas`), None when absent."""
    value: Any = obj
    for part in path.strip(".").split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


def path_set(obj: dict[str, Any], path: str, value: Any) -> None:
    """Set the value at a dotted path, making the maps on the way."""
    parts = path.strip(".").split(".")
    for part in parts[:-1]:
        obj = obj.setdefault(part, {})
    obj[parts[-1]] = value


def scale_paths(res: ResourceType) -> tuple[str, str, str]:
    """(spec replicas path, status replicas path, label selector path) of a scalable resource."""
    scale = res.scale
    if scale:
        return (scale.get("specReplicasPath", ".spec.replicas"), scale.get("statusReplicasPath", ".status.replicas"),
                scale.get("labelSelectorPath", ""))
    return ".spec.replicas", ".status.replicas", ".spec.selector"


def to_scale(res: ResourceType, obj: dict[str, Any]) -> dict[str, Any]:
    """The Scale of a stored object."""
    if res.crd is not None:
        return scale_of(served(res, obj), res.scale or {})
    spec_path, status_path, selector_path = scale_paths(res)
    meta = obj["metadata"]
    selector = path_get(obj, selector_path) if selector_path else None
    status: dict[str, Any] = {"replicas": path_get(obj, status_path) or 0}
    if isinstance(selector, dict):
        status["selector"] = selector_string(selector) or ""
    elif isinstance(selector, str) and selector:
        status["selector"] = selector
    return {"kind": "Scale", "apiVersion": "autoscaling/v1",
            "metadata": {k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
                         if k in meta},
            "spec": {"replicas": path_get(obj, spec_path) or 0}, "status": status}


def set_replicas(res: ResourceType, obj: dict[str, Any], replicas: Any) -> None:
    """Write a Scale's replicas into the object (where its scale paths say)."""
    path_set(obj, scale_paths(res)[0], replicas)


class ScaleREST:
    """`scale` of one server's resources."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry

    def get(self, res: ResourceType, namespace: str | None, name: str) -> dict[str, Any]:
        """The Scale of `name`; the built-in scale endpoints answer their own 404 (`deployments/scale.apps`; a
        core resource's, the ReplicationController's, is in the Scale's group `autoscaling`)."""
        try:
            return self.read(res, namespace, name)
        except errors.StatusError as exc:
            if exc.code != 404 or res.crd is not None:
                raise
            sub = res.subresource("scale")
            group = res.group or (sub.group if sub is not None else "")
            raise errors.not_found(f"{res.plural}/scale" + (f".{group}" if group else ""), name) from None

    def read(self, res: ResourceType, namespace: str | None, name: str) -> dict[str, Any]:
        """The Scale of `name` before a write (a missing object is the resource's own 404)."""
        return to_scale(res, self.registry.get(res, namespace, name).obj)

    def require(self, res: ResourceType, namespace: str | None, name: str) -> None:
        """A missing object's 404, before a write's body is looked at."""
        self.registry.get(res, namespace, name)

    async def update(self, res: ResourceType, namespace: str | None, name: str, scale: dict[str, Any],
                     opts: WriteOptions) -> dict[str, Any]:
        """Set the replicas a decoded Scale asks for (a resourceVersion in it is a precondition); the new Scale."""
        replicas = (scale.get("spec") or {}).get("replicas") or 0  # absent or null: Go's zero value
        if replicas < 0:
            raise errors.invalid_object("Scale", "autoscaling", name, [errors.invalid(
                "spec.replicas", replicas, "must be greater than or equal to 0")])
        rv = (scale.get("metadata") or {}).get("resourceVersion")
        spec_path = scale_paths(res)[0]
        opts.subresource = "scale"  # the write lands on spec.replicas; managedFields record the scale subresource

        def mutate(obj: dict[str, Any]) -> dict[str, Any]:
            if res.crd is not None:
                return apply_scale(obj, res.scale or {}, scale)
            if rv:
                obj["metadata"]["resourceVersion"] = rv
            path_set(obj, spec_path, replicas)
            return obj

        result = await self.registry.guaranteed_update(res, namespace, name, mutate, opts)
        return to_scale(res, result.obj if isinstance(result, Entry) else result)
