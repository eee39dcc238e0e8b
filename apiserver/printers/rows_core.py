"""Row cells for core/v1 kinds other than pods: ConfigMap, Secret, Service, Node, Event, volumes, ..."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from mini_kube.apiserver.printers.formatting import NONE, UNSET, access_modes, dig, format_labels, with_more
from mini_kube.apiserver.printers.humanize import UNKNOWN, epoch, since
from mini_kube.machinery.meta import meta
from mini_kube.machinery.quantity import canonical

Obj = dict[str, Any]
_LB_WIDTH = 16
_ROLE_PREFIX = "node-role.kubernetes.io/"
_ROLE_LABEL = "kubernetes.io/role"
_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"
RFC3339 = "%Y-%m-%dT%H:%M:%SZ"


def _age(obj: Obj, now: float) -> str:
    return since(meta(obj).get("creationTimestamp"), now)


def config_map(obj: Obj, now: float) -> list:
    count = len(obj.get("data") or {}) + len(obj.get("binaryData") or {})
    return [meta(obj).get("name", ""), count, _age(obj, now)]


def secret(obj: Obj, now: float) -> list:
    keys = set(obj.get("data") or {}) | set(obj.get("stringData") or {})
    return [meta(obj).get("name", ""), obj.get("type") or "Opaque", len(keys), _age(obj, now)]


def service_account(obj: Obj, now: float) -> list:
    return [meta(obj).get("name", ""), len(obj.get("secrets") or ()), _age(obj, now)]


def namespace(obj: Obj, now: float) -> list:
    return [meta(obj).get("name", ""), dig(obj, "status", "phase", default=""), _age(obj, now)]


def _load_balancer(status: Obj | None) -> str:
    """Ingress points of a load balancer status, sorted and de-duplicated (wide output: never clipped)."""
    points = {item.get("ip") or item.get("hostname") for item in dig(status, "ingress", default=())}
    points.discard(None)
    points.discard("")
    return ",".join(sorted(points))


def _external_ip(obj: Obj) -> str:
    spec = obj.get("spec") or {}
    kind = spec.get("type") or "ClusterIP"
    external = spec.get("externalIPs") or []
    if kind in ("ClusterIP", "NodePort"):
        return ",".join(external) if external else NONE
    if kind == "LoadBalancer":
        lb = _load_balancer(dig(obj, "status", "loadBalancer"))
        if external:
            return ",".join(([*lb.split(",")] if lb else []) + external)
        return lb or "<pending>"
    if kind == "ExternalName":
        return spec.get("externalName", "")
    return UNKNOWN


def _service_ports(ports: list[Obj]) -> str:
    pieces = []
    for port in ports:
        protocol = port.get("protocol") or "TCP"
        node_port = port.get("nodePort") or 0
        if node_port > 0:
            pieces.append(f"{port.get('port', 0)}:{node_port}/{protocol}")
        else:
            pieces.append(f"{port.get('port', 0)}/{protocol}")
    return ",".join(pieces)


def service(obj: Obj, now: float) -> list:
    spec = obj.get("spec") or {}
    cluster_ips = spec.get("clusterIPs") or ([spec["clusterIP"]] if spec.get("clusterIP") else [])
    return [
        meta(obj).get("name", ""), spec.get("type") or "ClusterIP", cluster_ips[0] if cluster_ips else NONE,
        _external_ip(obj), _service_ports(spec.get("ports") or []) or NONE, _age(obj, now),
        format_labels(spec.get("selector")),
    ]


def _endpoint_text(obj: Obj) -> str:
    """The first three endpoints (`ip:port`), as formatEndpoints prints them."""
    subsets = obj.get("subsets") or []
    if not subsets:
        return NONE
    items: list[str] = []
    total = 0
    for subset in subsets:
        addresses = [a.get("ip", "") for a in subset.get("addresses") or ()]
        ports = subset.get("ports") or []
        if not ports:
            total += len(addresses)
            items.extend(addresses[: max(0, 3 - len(items))])
            continue
        for port in ports:
            total += len(addresses)
            number = port.get("port", 0)
            for ip in addresses[: max(0, 3 - len(items))]:
                items.append(f"[{ip}]:{number}" if ":" in ip else f"{ip}:{number}")
    return with_more(items, total, empty="")


def endpoints(obj: Obj, now: float) -> list:
    return [meta(obj).get("name", ""), _endpoint_text(obj), _age(obj, now)]


def _node_status(obj: Obj) -> str:
    conditions = {c.get("type"): c for c in dig(obj, "status", "conditions", default=())}
    ready = conditions.get("Ready")
    status = ["Unknown"] if ready is None else ["Ready" if ready.get("status") == "True" else "NotReady"]
    if dig(obj, "spec", "unschedulable"):
        status.append("SchedulingDisabled")
    return ",".join(status)


def _node_roles(labels: dict[str, str]) -> str:
    roles = set()
    for key, value in labels.items():
        if key.startswith(_ROLE_PREFIX) and len(key) > len(_ROLE_PREFIX):
            roles.add(key[len(_ROLE_PREFIX):])
        elif key == _ROLE_LABEL and value:
            roles.add(value)
    return ",".join(sorted(roles)) or NONE


def _node_address(obj: Obj, kind: str) -> str:
    for address in dig(obj, "status", "addresses", default=()):
        if address.get("type") == kind:
            return address.get("address", "")
    return NONE


def node(obj: Obj, now: float) -> list:
    info = dig(obj, "status", "nodeInfo", default={})
    return [
        meta(obj).get("name", ""), _node_status(obj), _node_roles(meta(obj).get("labels") or {}),
        _age(obj, now), info.get("kubeletVersion", ""), _node_address(obj, "InternalIP"),
        _node_address(obj, "ExternalIP"), info.get("osImage") or UNKNOWN, info.get("kernelVersion") or UNKNOWN,
        info.get("containerRuntimeVersion") or UNKNOWN,
    ]


def _pv_class(obj: Obj) -> str:
    annotations = meta(obj).get("annotations") or {}
    if _CLASS_ANNOTATION in annotations:
        return annotations[_CLASS_ANNOTATION]
    return dig(obj, "spec", "storageClassName", default="")


def persistent_volume(obj: Obj, now: float) -> list:
    spec = obj.get("spec") or {}
    claim = spec.get("claimRef")
    claim_text = f"{claim.get('namespace', '')}/{claim.get('name', '')}" if claim else ""
    phase = "Terminating" if meta(obj).get("deletionTimestamp") else dig(obj, "status", "phase", default="")
    return [
        meta(obj).get("name", ""), canonical(dig(spec, "capacity", "storage")), access_modes(spec.get("accessModes")),
        spec.get("persistentVolumeReclaimPolicy", ""), phase, claim_text, _pv_class(obj),
        spec.get("volumeAttributesClassName") or UNSET, dig(obj, "status", "reason", default=""), _age(obj, now),
        spec.get("volumeMode") or UNSET,
    ]


def persistent_volume_claim(obj: Obj, now: float) -> list:
    spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    phase = "Terminating" if meta(obj).get("deletionTimestamp") else status.get("phase", "")
    capacity = modes = ""
    if spec.get("volumeName"):
        modes = access_modes(status.get("accessModes"))
        capacity = canonical(dig(status, "capacity", "storage"))
    return [
        meta(obj).get("name", ""), phase, spec.get("volumeName", ""), capacity, modes, _pv_class(obj),
        spec.get("volumeAttributesClassName") or UNSET, _age(obj, now), spec.get("volumeMode") or UNSET,
    ]


def resource_quota(obj: Obj, now: float) -> list:
    hard = dig(obj, "status", "hard", default={})
    used = dig(obj, "status", "used", default={})
    requests: list[str] = []
    limits: list[str] = []
    for name in sorted(hard):
        text = f"{name}: {canonical(used.get(name))}/{canonical(hard[name])}"
        parts = name.split(".")
        (limits if len(parts) > 1 and parts[0] == "limits" else requests).append(text)
    return [meta(obj).get("name", ""), ", ".join(requests), ", ".join(limits), _age(obj, now)]


def component_status(obj: Obj, now: float) -> list:
    status, message, error = "Unknown", "", ""
    for condition in obj.get("conditions") or ():
        if condition.get("type") == "Healthy":
            status = "Healthy" if condition.get("status") == "True" else "Unhealthy"
            message, error = condition.get("message", ""), condition.get("error", "")
            break
    return [meta(obj).get("name", ""), status, message, error]


def _as_core_event(obj: Obj) -> Obj:
    """An events.k8s.io/v1 Event with core/v1 field names (the server prints both from one internal type)."""
    return {
        "metadata": obj.get("metadata"), "involvedObject": obj.get("regarding") or {}, "message": obj.get("note"),
        "source": obj.get("deprecatedSource") or {}, "firstTimestamp": obj.get("deprecatedFirstTimestamp"),
        "lastTimestamp": obj.get("deprecatedLastTimestamp"), "count": obj.get("deprecatedCount"),
        "eventTime": obj.get("eventTime"), "series": obj.get("series"), "type": obj.get("type"),
        "reason": obj.get("reason"), "reportingComponent": obj.get("reportingController"),
        "reportingInstance": obj.get("reportingInstance"),
    }


def events_v1_event(obj: Obj, now: float) -> list:
    return event(_as_core_event(obj), now)


def event(ev: Obj, now: float) -> list:
    first = since(ev.get("firstTimestamp"), now)
    if epoch(ev.get("firstTimestamp")) is None:
        first = since(ev.get("eventTime"), now)
    last = since(ev.get("lastTimestamp"), now) if epoch(ev.get("lastTimestamp")) is not None else first
    count = ev.get("count") or 0
    series = ev.get("series")
    if series is not None:
        last = since(series.get("lastObservedTime"), now)
        count = series.get("count") or 0
    elif count == 0:
        count = 1
    involved = ev.get("involvedObject") or {}
    kind = (involved.get("kind") or "").lower()
    target = f"{kind}/{involved['name']}" if involved.get("name") else kind
    source = ev.get("source") or {}
    component = source.get("component") or ev.get("reportingComponent") or ""
    host = source.get("host") or ev.get("reportingInstance") or ""
    return [
        last, ev.get("type") or "", ev.get("reason") or "", target, involved.get("fieldPath", ""),
        f"{component}, {host}" if host else component, (ev.get("message") or "").strip(), first, count,
        meta(ev).get("name", ""),
    ]


def default_row(obj: Obj, now: float) -> list:
    """Name and creation time in RFC 3339 (the default table convertor's `Created At`)."""
    created = meta(obj).get("creationTimestamp")
    start = epoch(created)
    stamp = "0001-01-01T00:00:00Z" if start is None else datetime.fromtimestamp(start, UTC).strftime(RFC3339)
    return [meta(obj).get("name", ""), stamp]
