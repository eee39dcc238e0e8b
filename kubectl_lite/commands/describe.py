"""`describe`: kubectl's layout for the common kinds (ConfigMap, Secret, Namespace, ServiceAccount, Service,
Deployment, Pod, Node) and a generic field tree for everything else, each followed by the object's Events."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from mini_kube.machinery.status import ApiError

from ..session import Session, Target

Lines = list[str]


def add_parser(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("describe", parents=[common], help="Show details of a resource or group of resources")
    p.add_argument("words", nargs="+")
    p.add_argument("-l", "--selector", default="")
    p.add_argument("--show-events", default="true", choices=["true", "false"])
    p.set_defaults(run=run)


def _field(label: str, value: Any, width: int = 14) -> str:
    return f"{label + ':':<{width}}{value}"


def _map_lines(label: str, values: dict[str, str] | None, width: int = 14) -> Lines:
    """`Labels:       a=b` with further entries aligned below; `<none>` when empty."""
    items = sorted((values or {}).items())
    if not items:
        return [_field(label, "<none>", width)]
    lines = [_field(label, f"{items[0][0]}={items[0][1]}", width)]
    lines.extend(" " * width + f"{k}={v}" for k, v in items[1:])
    return lines


def _annotations(meta: dict[str, Any], width: int = 14) -> Lines:
    hidden = {"kubectl.kubernetes.io/last-applied-configuration"}
    shown = {k: v for k, v in (meta.get("annotations") or {}).items() if k not in hidden}
    return _map_lines("Annotations", shown, width)


def _header(obj: dict[str, Any], width: int = 14, namespaced: bool = True) -> Lines:
    meta = obj.get("metadata") or {}
    lines = [_field("Name", meta.get("name", ""), width)]
    if namespaced:
        lines.append(_field("Namespace", meta.get("namespace", ""), width))
    return lines + _map_lines("Labels", meta.get("labels"), width) + _annotations(meta, width)


def _configmap(obj: dict[str, Any]) -> Lines:
    lines = _header(obj) + ["", "Data", "===="]
    for key, value in sorted((obj.get("data") or {}).items()):
        lines += [f"{key}:", "----", value, ""]
    lines += ["", "BinaryData", "===="]
    for key, value in sorted((obj.get("binaryData") or {}).items()):
        lines.append(f"{key}: {len(value) * 3 // 4} bytes")
    return lines + [""]


def _secret(obj: dict[str, Any]) -> Lines:
    lines = _header(obj) + ["", _field("Type", obj.get("type", ""), 6), "", "Data", "===="]
    import base64

    for key, value in sorted((obj.get("data") or {}).items()):
        lines.append(f"{key}:  {len(base64.b64decode(value))} bytes")
    return lines


def _namespace(obj: dict[str, Any]) -> Lines:
    meta = obj.get("metadata") or {}
    lines = [_field("Name", meta.get("name", ""))] + _map_lines("Labels", meta.get("labels")) + _annotations(meta)
    lines.append(_field("Status", (obj.get("status") or {}).get("phase", "")))
    return lines + ["", "No resource quota.", "", "No LimitRange resource."]


def _generic_value(key: str, value: Any, indent: int, out: Lines) -> None:
    pad = "  " * indent
    label = key[:1].upper() + "".join(f" {c}" if c.isupper() else c for c in key[1:])
    if isinstance(value, dict):
        out.append(f"{pad}{label}:")
        for k in value:
            _generic_value(k, value[k], indent + 1, out)
    elif isinstance(value, list):
        out.append(f"{pad}{label}:")
        for item in value:
            if isinstance(item, dict):
                first = True
                for k in item:
                    sub: Lines = []
                    _generic_value(k, item[k], indent + 2, sub)
                    if first and sub:
                        sub[0] = pad + "  " + sub[0].lstrip()
                        first = False
                    out.extend(sub)
            else:
                out.append(f"{pad}  {item}")
    else:
        out.append(f"{pad}{label}:  {'' if value is None else value}")


def _generic(obj: dict[str, Any], namespaced: bool) -> Lines:
    """kubectl's describer for kinds it has no special printer for: a tree of the object's fields."""
    lines = _header(obj, namespaced=namespaced)
    lines += [_field("API Version", obj.get("apiVersion", "")), _field("Kind", obj.get("kind", ""))]
    for key, value in obj.items():
        if key in ("apiVersion", "kind", "metadata"):
            continue
        _generic_value(key, value, 0, lines)
    return lines


DESCRIBERS: dict[str, Callable[[dict[str, Any]], Lines]] = {
    "ConfigMap": _configmap, "Secret": _secret, "Namespace": _namespace,
}


NO_EVENTS = {"Namespace"}


def _age(timestamp: str) -> str:
    from mini_kube.machinery.times import now, parse_time

    then = parse_time(timestamp)
    if then is None:
        return "<unknown>"
    seconds = int((now() - then).total_seconds())
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size * 2 or (unit == "m" and seconds >= 120):
            return f"{seconds // size}{unit}"
    return f"{max(seconds, 0)}s"


def _event_items(session: Session, obj: dict[str, Any], namespace: str | None) -> list[dict[str, Any]]:
    meta = obj.get("metadata") or {}
    selector = f"involvedObject.name={meta.get('name')},involvedObject.uid={meta.get('uid')}"
    if namespace:
        selector += f",involvedObject.namespace={namespace}"
    path = f"/api/v1/namespaces/{namespace}/events" if namespace else "/api/v1/events"
    try:
        listed = session.request("GET", path, params={"fieldSelector": selector})
    except ApiError:
        return []
    return listed.get("items") or []


def _events(session: Session, obj: dict[str, Any], namespace: str | None) -> Lines:
    events = _event_items(session, obj, namespace)
    if not events:
        return ["Events:  <none>"]
    from ..printing import tabulate

    rows = [["Type", "Reason", "Age", "From", "Message"], ["----", "------", "----", "----", "-------"]]
    for event in sorted(events, key=lambda e: e.get("lastTimestamp") or e.get("eventTime") or ""):
        source = event.get("source") or {}
        origin = source.get("component") or event.get("reportingComponent") or ""
        if source.get("host"):
            origin += f", {source['host']}"
        rows.append([event.get("type", ""), event.get("reason", ""),
                     _age(event.get("lastTimestamp") or event.get("eventTime") or ""), origin,
                     event.get("message", "").strip()])
    return ["Events:"] + ["  " + line for line in tabulate(rows).splitlines()]


def _describe_pod(session: Session, target: Target, obj: dict[str, Any]) -> str:
    from ..tabwriter import tabwrite
    from .describe_pod import describe_events, describe_pod

    head, table = ("", "")
    if session.args.show_events == "true":
        head, table = describe_events(_event_items(session, obj, target.namespace))
    return tabwrite(describe_pod(obj) + head) + tabwrite(table)


def describe(session: Session, target: Target, obj: dict[str, Any]) -> str:
    kind = obj.get("kind") or target.resource.kind
    if kind == "Pod":
        return _describe_pod(session, target, obj)
    describer = DESCRIBERS.get(kind)
    lines = describer(obj) if describer else _generic(obj, target.resource.namespaced)
    if session.args.show_events == "true" and kind not in NO_EVENTS:
        lines += _events(session, obj, target.namespace)
    return "\n".join(lines) + "\n"


def run(session: Session) -> int:
    blocks = []
    for target in session.targets(session.args.words):
        res = target.resource
        if target.name:
            obj = session.request("GET", res.path(target.namespace, target.name))
            blocks.append(describe(session, target, obj))
            continue
        listed = session.request("GET", res.path(target.namespace), params={"labelSelector": session.args.selector})
        for item in listed.get("items") or ():
            item = {"apiVersion": res.group_version, "kind": res.kind, **item}
            blocks.append(describe(session, target, item))
    if not blocks:
        print(f"No resources found in {session.namespace} namespace.", file=sys.stderr)
    sys.stdout.write("\n\n".join(blocks))
    return 0
