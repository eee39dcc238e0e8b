"""`pods/log`, `pods/exec`, `pods/attach`, `pods/portforward` and the `proxy` subresources: before anything runs
the pod, answered as upstream answers (no node yet means an empty log and `pod x does not have a host assigned`);
once a node runs it, relayed to that node's kubelet (handlers/kubelet_proxy.py)."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from .. import egress, errors
from ..http.negotiation import Target
from ..http.query import parse_int64
from ..registry.generic import Registry, WriteContext, WriteOptions
from ..registry.reader import ObjectReader
from ..requestinfo import RequestInfo
from ..resources import ResourceType
from ..schema import gotime
from . import kubelet_proxy
from .kubelet_proxy import KubeletClient
from .proxy_links import ProxyLinks
from .routes import SubresourceHandler


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


def _rfc3339(text: str) -> None:
    """metav1.Time from a query parameter: Go's time.Parse(time.RFC3339, ...); 400 when it is not one."""
    try:
        gotime.parse(text)
    except gotime.TimeError as exc:
        raise errors.bad_request(str(exc)) from None


def check_log_options(query: Any, name: str) -> None:
    """PodLogOptions as the parameter codec reads them (400) and ValidatePodLogOptions checks them (422),
    before the Pod is looked at; the kubelet then only ever sees well-formed numbers and times."""
    numbers = {key: parse_int64(query[key]) for key in ("tailLines", "limitBytes", "sinceSeconds")
               if query.get(key)}
    if query.get("sinceTime"):
        _rfc3339(query["sinceTime"])
    problems = []
    if numbers.get("tailLines", 0) < 0:
        problems.append(errors.invalid("tailLines", numbers["tailLines"], "must be greater than or equal to 0"))
    if "limitBytes" in numbers and numbers["limitBytes"] < 1:
        problems.append(errors.invalid("limitBytes", numbers["limitBytes"], "must be greater than 0"))
    if "sinceSeconds" in numbers and query.get("sinceTime"):
        problems.append(errors.forbidden("", "at most one of `sinceTime` or `sinceSeconds` may be specified"))
    elif numbers.get("sinceSeconds", 1) < 1:
        problems.append(errors.invalid("sinceSeconds", numbers["sinceSeconds"], "must be greater than 0"))
    if problems:
        raise errors.invalid_object("PodLogOptions", "", name, problems)


def _flag(query: Any, name: str) -> bool:
    return str(query.get(name, "")).lower() in ("1", "true")


def connect_options(subresource: str, query: Any, container: str, path: str) -> dict[str, Any]:
    """The options object a CONNECT is admitted with (PodAttachOptions, PodExecOptions, ...), as Go's
    json encoding of it (empty fields omitted)."""
    if subresource == "portforward":
        ports = [int(p) for value in query.getall("ports", ()) for p in value.split(",") if p.strip().isdigit()]
        return {"kind": "PodPortForwardOptions", "apiVersion": "v1", **({"ports": ports} if ports else {})}
    if subresource == "proxy":
        return {"kind": "PodProxyOptions", "apiVersion": "v1", **({"path": path} if path else {})}
    out: dict[str, Any] = {"kind": "PodExecOptions" if subresource == "exec" else "PodAttachOptions",
                           "apiVersion": "v1"}
    for flag in ("stdin", "stdout", "stderr", "tty"):
        if _flag(query, flag):
            out[flag] = True
    if container:
        out["container"] = container
    if subresource == "exec":
        out["command"] = list(query.getall("command", ()))
    return out


def _split_name(name: str, kind: str) -> tuple[str, str, str]:
    """`[scheme:]name[:port]` of a proxy request -> (scheme, name, port), as upstream's SplitSchemeNamePort;
    400 `invalid <kind> request` for anything else."""
    parts = name.split(":")
    scheme, port = "", ""
    if len(parts) == 3:
        scheme, name, port = parts
    elif len(parts) == 2:
        name, port = parts
    elif len(parts) != 1:
        name = ""
    if not name or scheme not in ("", "http", "https"):
        raise errors.bad_request(f'invalid {kind} request "{":".join(parts)}"')
    return scheme, name, port


def _proxy_rest(request: web.Request, info: Any) -> str:
    """The path after `.../<name>/proxy` (with the query string left to the relay): "" when there is none."""
    marker = f"/{info.parts[0]}/{info.parts[1]}/proxy"
    path = request.path
    at = path.find(marker)
    rest = path[at + len(marker):] if at >= 0 else ""
    return rest if not rest or rest.startswith("/") else "/" + rest


def _root_redirect(request: web.Request, rest: str) -> web.Response | None:
    """A GET or HEAD of the proxy's root without its slash: 301 to it with the slash, as upstream answers."""
    if rest or request.method not in ("GET", "HEAD"):
        return None
    query = f"?{request.query_string}" if request.query_string else ""
    return web.Response(status=301, headers={"Location": f"{request.path}/{query}"})


async def _relay(kubelets: KubeletClient, kubelet: egress.Kubelet, request: web.Request, path: str,
                 rest: str, backend_host: str) -> web.StreamResponse:
    """One proxied HTTP request to `path` of the kubelet, links rewritten as upstream's proxy transport does."""
    redirect = _root_redirect(request, rest)
    if redirect is not None:
        return redirect
    links = ProxyLinks.for_request(request.path, rest, backend_host, request.host)
    return await kubelet_proxy.http(kubelets, kubelet, request, path, links, rest)


def _host_port(ip: str, port: str) -> str:
    return f"[{ip}]:{port}" if ":" in ip else f"{ip}:{port}"


class PodStreams:
    """The subresources served by a node's kubelet, relayed through `kubelets` to the node the objects name."""

    def __init__(self, registry: Registry, objects: ObjectReader, kubelets: KubeletClient) -> None:
        self.registry = registry
        self.objects = objects
        self.kubelets = kubelets

    def handlers(self) -> dict[tuple[str, str, str], SubresourceHandler]:
        """Their entries in the subresource table."""
        table: dict[tuple[str, str, str], SubresourceHandler] = {("", "pods", "log"): self.log}
        for sub in ("exec", "attach", "portforward", "proxy"):
            table[("", "pods", sub)] = self.stream
        table[("", "nodes", "proxy")] = self.node_proxy
        table[("", "services", "proxy")] = self.service_proxy
        return table

    async def log(self, request: web.Request, info: RequestInfo, res: ResourceType, user: Any,
                  target: Target) -> web.StreamResponse:
        """pods/log: the container's log from its node's kubelet (empty before the Pod has a node)."""
        check_log_options(request.query, info.name)
        pod = self.registry.get(res, info.namespace, info.name).obj
        container = _container(pod, request.query.get("container", ""))
        node = (pod.get("spec") or {}).get("nodeName")
        if not node:
            return web.Response(body=b"", content_type="text/plain")  # upstream: no host, an empty log
        status = pod.get("status") or {}
        statuses = {s.get("name"): s for key in ("containerStatuses", "initContainerStatuses",
                                                 "ephemeralContainerStatuses") for s in status.get(key) or ()}
        state = (statuses.get(container) or {}).get("state") or {}
        ran_before = bool(((statuses.get(container) or {}).get("lastState") or {}).get("terminated"))
        if ("waiting" in state or not state) and not ran_before:
            reason = (state.get("waiting") or {}).get("reason") or "ContainerCreating"
            raise errors.bad_request(f'container "{container}" in pod "{pod["metadata"]["name"]}" is waiting to '
                                     f"start: {reason}")
        kubelet = egress.kubelet_of(self.objects, node)
        return await kubelet_proxy.logs(self.kubelets, kubelet, request, info.namespace, pod["metadata"]["name"],
                                        container)

    async def stream(self, request: web.Request, info: RequestInfo, res: ResourceType, user: Any,
                     target: Target) -> web.StreamResponse:
        """exec, attach, portforward and pods/proxy: relayed to the kubelet of the pod's node."""
        scheme, name, port = (_split_name(info.name, "pod") if info.subresource == "proxy"
                              else ("", info.name, ""))
        pod = self.registry.get(res, info.namespace, name).obj
        container = ""
        if info.subresource in ("exec", "attach"):
            container = _container(pod, request.query.get("container", ""))
        admission = self.registry.admission
        if admission is not None:
            options = connect_options(info.subresource, request.query, container, _proxy_rest(request, info)
                                      if info.subresource == "proxy" else "")
            await admission.connect(WriteContext(self.registry, res, info.namespace, False, info.subresource, user),
                                    name, options, WriteOptions(user=user, subresource=info.subresource))
        node = (pod.get("spec") or {}).get("nodeName")
        if not node:
            raise errors.bad_request(f"pod {pod['metadata']['name']} does not have a host assigned")
        kubelet = egress.kubelet_of(self.objects, node)
        ns = info.namespace
        if info.subresource == "portforward":
            return await kubelet_proxy.stream(self.kubelets, kubelet, request, f"/portForward/{ns}/{name}")
        if info.subresource == "proxy":
            ip = (pod.get("status") or {}).get("podIP") or ""
            if not ip:
                raise errors.bad_request("address not allowed")
            if not port:
                declared = [p.get("containerPort") for c in (pod.get("spec") or {}).get("containers") or ()
                            for p in c.get("ports") or ()]
                port = str(declared[0]) if declared else "443" if scheme == "https" else "80"
            rest = _proxy_rest(request, info)
            pod_port = f"{scheme}:{port}" if scheme else port
            return await _relay(self.kubelets, kubelet, request, f"/podProxy/{ns}/{name}/{pod_port}{rest or '/'}", rest,
                                _host_port(ip, port))
        return await kubelet_proxy.stream(self.kubelets, kubelet, request,
                                          f"/{info.subresource}/{ns}/{name}/{container}")

    async def node_proxy(self, request: web.Request, info: RequestInfo, res: ResourceType, user: Any,
                         target: Target) -> web.StreamResponse:
        """nodes/proxy: any path of the node's kubelet."""
        _, name, _ = _split_name(info.name, "node")
        self.registry.get(res, None, name)
        kubelet = egress.kubelet_of(self.objects, name)
        rest = _proxy_rest(request, info)
        return await _relay(self.kubelets, kubelet, request, rest or "/", rest, kubelet.url.split("://", 1)[-1])

    async def service_proxy(self, request: web.Request, info: RequestInfo, res: ResourceType, user: Any,
                            target: Target) -> web.StreamResponse:
        """services/proxy: to a ready endpoint of the service's port, through the kubelet of that pod's node."""
        scheme, name, port_name = _split_name(info.name, "service")
        svc = self.registry.get(res, info.namespace, name).obj
        ports = (svc.get("spec") or {}).get("ports") or []
        chosen = next((p for p in ports if port_name in (str(p.get("port")), p.get("name", ""))), None) if port_name \
            else (ports[0] if ports else None)
        if chosen is None:
            raise errors.StatusError(503, "ServiceUnavailable", f'no endpoints available for service "{name}"', {})
        slices = self.objects.resources.lookup("discovery.k8s.io", "v1", "endpointslices")
        entries = self.registry.cache.list(slices.key_prefix, info.namespace) if slices is not None else []
        for entry in entries:
            eps = entry.obj
            if ((eps.get("metadata") or {}).get("labels") or {}).get("kubernetes.io/service-name") != name:
                continue
            port = next((p.get("port") for p in eps.get("ports") or () if p.get("name", "") == chosen.get("name", "")),
                        None)
            for endpoint in eps.get("endpoints") or ():
                ref = endpoint.get("targetRef") or {}
                if (endpoint.get("conditions") or {}).get("ready") is False or ref.get("kind") != "Pod" or not port:
                    continue
                pod = self.objects.object("", "v1", "pods", info.namespace, ref["name"])
                node = ((pod or {}).get("spec") or {}).get("nodeName")
                if node:
                    kubelet = egress.kubelet_of(self.objects, node)
                    rest = _proxy_rest(request, info)
                    pod_port = f"{scheme}:{port}" if scheme else str(port)
                    address = next(iter(endpoint.get("addresses") or ()), "")
                    return await _relay(self.kubelets, kubelet, request,
                                        f"/podProxy/{info.namespace}/{ref['name']}/{pod_port}{rest or '/'}", rest,
                                        _host_port(address, str(port)))
        raise errors.StatusError(503, "ServiceUnavailable", f'no endpoints available for service "{name}"', {})
