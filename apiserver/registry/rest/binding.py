"""`pods/binding` and `bindings`: assign a Pod to a node, as upstream's BindingREST does.

Both take a v1 Binding (`metadata.name` = the Pod, `target.name` = the node). The Pod's `spec.nodeName` is set
once (a second binding is 409 Conflict), the PodScheduled=True condition is added or updated, and the answer is
a Status Success with code 201. The write is a system update of the stored Pod (no Pod update validation: the
binding is the one way nodeName may change). `handlers/pod_binding.py` decodes the request and encodes the answer."""

from __future__ import annotations

from typing import Any

from mini_kube.machinery.times import now_rfc3339

from ... import errors
from ...auth.user import UserInfo
from ..generic import Registry, WriteOptions

SUCCESS = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}


def _unknown(code: int, message: str) -> errors.StatusError:
    """A plain error upstream's handler turns into a Status with reason Unknown (an aggregate of field errors)."""
    return errors.StatusError(code, "", message, {})


def _validate(binding: dict[str, Any]) -> None:
    """ValidatePodBinding: target.kind empty or Node, target.name required."""
    given = binding.get("target")
    target: dict[str, Any] = given if isinstance(given, dict) else {}
    problems = []
    kind = target.get("kind") or ""
    if kind and kind != "Node":
        problems.append(str(errors.not_supported("target.kind", kind, ["Node", "<empty>"])))
    if not target.get("name"):
        problems.append(str(errors.required("target.name")))
    if problems:
        raise _unknown(500, problems[0] if len(problems) == 1 else "[" + ", ".join(problems) + "]")


def set_pod_scheduled(pod: dict[str, Any], now: str) -> None:
    """UpdatePodCondition(PodScheduled=True): added, or its status (and transition time) changed."""
    status = pod.setdefault("status", {})
    conditions = status.setdefault("conditions", [])
    for condition in conditions:
        if condition.get("type") == "PodScheduled":
            if condition.get("status") != "True":
                condition["lastTransitionTime"] = now
            condition["status"] = "True"
            condition.pop("reason", None)
            condition.pop("message", None)
            return
    conditions.append({"type": "PodScheduled", "status": "True", "lastProbeTime": None, "lastTransitionTime": now})


class BindingREST:
    """`pods/binding` of one server: `create` assigns a Pod to a node as a Binding asks."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry

    async def create(self, namespace: str, name: str, binding: dict[str, Any], dry_run: bool) -> dict[str, Any]:
        """Assign pod `namespace/name` to `binding.target.name` (raises Conflict/NotFound as upstream); the
        Status to answer."""
        _validate(binding)
        node = binding["target"]["name"]
        given = binding.get("metadata")
        meta: dict[str, Any] = given if isinstance(given, dict) else {}
        uid, rv = meta.get("uid") or "", meta.get("resourceVersion") or ""
        annotations = meta.get("annotations") or {}
        registry = self.registry
        res = registry.resources.lookup("", "v1", "pods")
        assert res is not None
        current = registry.get(res, namespace, name)  # 404 pods "x" not found

        def assign(pod: dict[str, Any]) -> dict[str, Any]:
            pmeta, spec = pod["metadata"], pod.setdefault("spec", {})
            if uid and uid != pmeta.get("uid"):
                raise errors.conflict("pods", name, f"Precondition failed: UID in precondition: {uid}, UID in "
                                                    f"object meta: {pmeta.get('uid')}")
            if rv and rv != pmeta.get("resourceVersion"):
                raise errors.conflict("pods", name, f"Precondition failed: ResourceVersion in precondition: {rv}, "
                                                    f"ResourceVersion in object meta: {pmeta.get('resourceVersion')}")
            if pmeta.get("deletionTimestamp"):
                raise errors.conflict("pods/binding", name,
                                      f"pod {name} is being deleted, cannot be assigned to a host")
            if spec.get("nodeName"):
                raise errors.conflict("pods/binding", name,
                                      f'pod {name} is already assigned to node "{spec["nodeName"]}"')
            if spec.get("schedulingGates"):
                raise errors.conflict("pods/binding", name, f"pod {name} has non-empty .spec.schedulingGates")
            spec["nodeName"] = node
            if annotations:
                pmeta["annotations"] = {**(pmeta.get("annotations") or {}), **annotations}
            set_pod_scheduled(pod, now_rfc3339())
            return pod

        await registry.system_update(res, namespace, current, assign, WriteOptions(dry_run=dry_run))
        return dict(SUCCESS)


class BindingsREST:
    """The request-only kind `bindings` (POST /api/v1/namespaces/ns/bindings): binds the Pod its metadata.name
    names, through `binding` (`request_only.RequestOnlyREST`)."""

    def __init__(self, binding: BindingREST) -> None:
        self.binding = binding

    async def create(self, namespace: str, obj: dict[str, Any], user: UserInfo,
                     opts: WriteOptions) -> dict[str, Any]:
        name = (obj.get("metadata") or {}).get("name") or ""
        if not name:
            raise errors.bad_request("name in URL does not match name in Binding object")
        return await self.binding.create(namespace, name, obj, opts.dry_run)
