"""`pods/log`, `pods/exec`, `pods/attach`, `pods/portforward` and the `proxy` subresources, answered as upstream
answers them before anything runs the pod: no node yet means an empty log and `pod x does not have a host
assigned` for the streams. A node runtime registers its own handlers for these keys to serve real streams."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aiohttp import web

from .. import errors

if TYPE_CHECKING:
    from ..server import ApiServer


def _pod(handler: Any, info: Any, res: Any) -> dict[str, Any]:
    return handler.registry.get(res, info.namespace, info.name).obj


def _container(pod: dict[str, Any], wanted: str) -> str:
    """The container a log/exec request means, with upstream's errors for a missing or ambiguous one."""
    name = pod["metadata"]["name"]
    spec = pod.get("spec") or {}
    names = [c["name"] for c in spec.get("containers") or ()]
    every = names + [c["name"] for c in spec.get("initContainers") or ()] + \
        [c["name"] for c in spec.get("ephemeralContainers") or ()]
    if not wanted:
        if len(names) == 1:
            return names[0]
        raise errors.bad_request(f"a container name must be specified for pod {name}, choose one of: "
                                 f"[{' '.join(names)}] or one of the init containers: "
                                 f"[{' '.join(c['name'] for c in spec.get('initContainers') or ())}]"
                                 if spec.get("initContainers") else
                                 f"a container name must be specified for pod {name}, choose one of: [{' '.join(names)}]")
    if wanted not in every:
        raise errors.bad_request(f"container {wanted} is not valid for pod {name}")
    return wanted


def _no_backend(node: str) -> errors.StatusError:
    return errors.StatusError(503, "ServiceUnavailable", f'error dialing backend: no kubelet serves node "{node}"',
                              {})


async def log(handler: Any, request: web.Request, info: Any, res: Any, user: Any, target: Any) -> web.StreamResponse:
    pod = _pod(handler, info, res)
    container = _container(pod, request.query.get("container", ""))
    node = (pod.get("spec") or {}).get("nodeName")
    if not node:
        return web.Response(body=b"", content_type="text/plain")  # upstream: no host, an empty log
    statuses = {s.get("name"): s for s in (pod.get("status") or {}).get("containerStatuses") or ()}
    state = (statuses.get(container) or {}).get("state") or {}
    if "waiting" in state or not state:
        reason = (state.get("waiting") or {}).get("reason") or "ContainerCreating"
        raise errors.bad_request(f'container "{container}" in pod "{pod["metadata"]["name"]}" is waiting to '
                                 f"start: {reason}")
    raise _no_backend(node)


async def stream(handler: Any, request: web.Request, info: Any, res: Any, user: Any,
                 target: Any) -> web.StreamResponse:
    """exec, attach, portforward and pods/proxy: they need the pod's node."""
    pod = _pod(handler, info, res)
    if info.subresource in ("exec", "attach"):
        _container(pod, request.query.get("container", ""))
    node = (pod.get("spec") or {}).get("nodeName")
    if not node:
        raise errors.bad_request(f"pod {pod['metadata']['name']} does not have a host assigned")
    raise _no_backend(node)


async def unreachable(handler: Any, request: web.Request, info: Any, res: Any, user: Any,
                      target: Any) -> web.StreamResponse:
    """nodes/proxy and services/proxy, with nothing behind them yet."""
    obj = handler.registry.get(res, info.namespace if res.namespaced else None, info.name).obj
    if res.plural == "services":
        raise errors.StatusError(503, "ServiceUnavailable",
                                 f'no endpoints available for service "{obj["metadata"]["name"]}"', {})
    raise _no_backend(obj["metadata"]["name"])


def install(server: ApiServer) -> None:
    """Register the handlers (a node runtime may replace them with ones that reach its kubelets)."""
    handlers = server.subresource_handlers
    handlers.setdefault(("", "pods", "log"), log)
    for sub in ("exec", "attach", "portforward", "proxy"):
        handlers.setdefault(("", "pods", sub), stream)
    handlers.setdefault(("", "nodes", "proxy"), unreachable)
    handlers.setdefault(("", "services", "proxy"), unreachable)
