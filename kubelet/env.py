"""A container's environment, as the kubelet builds it: the Service variables (`<SVC>_SERVICE_HOST`, ...,
docker-link style), then `envFrom`, then `env` with `$(VAR)` expansion and ConfigMap, Secret, field and
resource references."""

from __future__ import annotations

import base64
import math
import re
from collections.abc import Awaitable, Callable
from typing import Any

from .images import image_environment

Getter = Callable[[str, str, str], Awaitable[dict[str, Any] | None]]  # (kind, namespace, name) -> object
EXPAND = re.compile(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)")


class EnvError(Exception):
    """A reference that cannot be resolved (the container waits with CreateContainerConfigError)."""


def expand(text: str, env: dict[str, str]) -> str:
    """`$(VAR)` from env (left as is when unknown), `$$` -> `$`."""
    return EXPAND.sub(lambda m: "$" if m.group(0) == "$$" else env.get(m.group(1), m.group(0)), text)


def expand_sub_path(expression: str, env: dict[str, str]) -> str:
    """A volume mount's subPathExpr with `$(VAR)` from the container's env, as upstream's
    ExpandContainerVolumeMounts: a variable unset or empty is an EnvError (`missing value for A, B`)."""
    missing: set[str] = set()

    def value(match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        found = env.get(match.group(1), "")
        if not found:
            missing.add(match.group(1))
        return found

    expanded = EXPAND.sub(value, expression)
    if missing:
        raise EnvError(f"missing value for {', '.join(sorted(missing))}")
    return expanded


def _svc_name(name: str) -> str:
    return name.upper().replace("-", "_")


def service_env(services: list[dict[str, Any]]) -> dict[str, str]:
    """The docker-link variables of every Service with a ClusterIP (in name order)."""
    env: dict[str, str] = {}
    for svc in sorted(services, key=lambda s: s["metadata"]["name"]):
        spec = svc.get("spec") or {}
        ip = spec.get("clusterIP")
        ports = spec.get("ports") or []
        if not ip or ip == "None" or not ports:
            continue
        prefix = _svc_name(svc["metadata"]["name"])
        env[f"{prefix}_SERVICE_HOST"] = ip
        env[f"{prefix}_SERVICE_PORT"] = str(ports[0]["port"])
        for port in ports:
            if port.get("name"):
                env[f"{prefix}_SERVICE_PORT_{_svc_name(port['name'])}"] = str(port["port"])
        first = ports[0]
        proto = (first.get("protocol") or "TCP").lower()
        env[f"{prefix}_PORT"] = f"{proto}://{ip}:{first['port']}"
        for port in ports:
            p = (port.get("protocol") or "TCP")
            base = f"{prefix}_PORT_{port['port']}_{p.upper()}"
            env[base] = f"{p.lower()}://{ip}:{port['port']}"
            env[f"{base}_PROTO"] = p.lower()
            env[f"{base}_PORT"] = str(port["port"])
            env[f"{base}_ADDR"] = ip
    return env


def field_value(pod: dict[str, Any], path: str) -> str:
    """A downward-API fieldRef (`metadata.name`, `metadata.labels['x']`, `status.podIP`, ...)."""
    meta, spec, status = pod.get("metadata") or {}, pod.get("spec") or {}, pod.get("status") or {}
    indexed = re.fullmatch(r"metadata\.(labels|annotations)\['(.*)'\]", path)
    if indexed:
        return str((meta.get(indexed.group(1)) or {}).get(indexed.group(2), ""))
    if path in ("metadata.labels", "metadata.annotations"):
        values = meta.get(path.split(".")[1]) or {}
        return "\n".join(f'{k}="{v}"' for k, v in sorted(values.items()))
    simple = {"metadata.name": meta.get("name"), "metadata.namespace": meta.get("namespace"),
              "metadata.uid": meta.get("uid"), "spec.nodeName": spec.get("nodeName"),
              "spec.serviceAccountName": spec.get("serviceAccountName"), "status.hostIP": status.get("hostIP"),
              "status.podIP": status.get("podIP"),
              "status.podIPs": ",".join(i["ip"] for i in status.get("podIPs") or ()),
              "status.hostIPs": ",".join(i["ip"] for i in status.get("hostIPs") or ())}
    if path not in simple:
        raise EnvError(f"unsupported fieldRef {path}")
    return str(simple[path] or "")


def resource_value(container: dict[str, Any], ref: dict[str, Any], allocatable: dict[str, str]) -> str:
    """A resourceFieldRef: the container's limit (else the node's allocatable) or request, in `divisor` units
    (a fraction rounded up: a 1250m limit is 2 CPUs)."""
    from mini_kube.machinery.quantity import decimal_value

    kind, _, name = ref["resource"].partition(".")
    values = (container.get("resources") or {}).get(kind) or {}
    raw = values.get(name) or (allocatable.get(name, "0") if kind == "limits" else "0")
    divisor = decimal_value(str(ref.get("divisor") or "1")) or 1  # a zero divisor (unset, "0") counts as 1
    return str(math.ceil(decimal_value(str(raw)) / divisor))  # rounded up, as upstream's convertResource*ToString


def _decode(kind: str, data: dict[str, str]) -> dict[str, str]:
    if kind == "secrets":
        return {k: base64.b64decode(v).decode(errors="replace") for k, v in data.items()}
    return dict(data)


async def container_env(pod: dict[str, Any], container: dict[str, Any], get: Getter,
                        services: list[dict[str, Any]], allocatable: dict[str, str],
                        image_env: dict[str, str] | None = None) -> dict[str, str]:
    """The whole environment of one container (`image_env`: a mapped or loaded image's own variables, its HOME
    kept; else the built-in image's)."""
    namespace = pod["metadata"]["namespace"]
    spec = pod.get("spec") or {}
    hostname = spec.get("hostname") or pod["metadata"]["name"]
    env: dict[str, str] = ({**image_environment(container.get("image") or ""), "HOSTNAME": hostname, "HOME": "/root"}
                           if image_env is None else {"HOME": "/root", **image_env, "HOSTNAME": hostname})
    links = [s for s in services if s["metadata"]["namespace"] == namespace] if spec.get(
        "enableServiceLinks", True) else []
    links += [s for s in services if s["metadata"]["namespace"] == "default" and
              s["metadata"]["name"] == "kubernetes" and namespace != "default"]
    env.update(service_env(links))
    for source in container.get("envFrom") or ():
        for key, kind in (("configMapRef", "configmaps"), ("secretRef", "secrets")):
            ref = source.get(key)
            if not ref:
                continue
            obj = await get(kind, namespace, ref["name"])
            if obj is None:
                if ref.get("optional"):
                    continue
                raise EnvError(f'{"configmap" if kind == "configmaps" else "secret"} "{ref["name"]}" not found')
            for k, v in _decode(kind, obj.get("data") or {}).items():
                env[f"{source.get('prefix', '')}{k}"] = v
    for var in container.get("env") or ():
        name = var["name"]
        if "valueFrom" not in var:
            env[name] = expand(var.get("value", ""), env)
            continue
        source = var["valueFrom"]
        if "fieldRef" in source:
            env[name] = field_value(pod, source["fieldRef"]["fieldPath"])
        elif "resourceFieldRef" in source:
            env[name] = resource_value(container, source["resourceFieldRef"], allocatable)
        else:
            key, kind = ("configMapKeyRef", "configmaps") if "configMapKeyRef" in source else ("secretKeyRef", "secrets")
            ref = source.get(key) or {}
            obj = await get(kind, namespace, ref.get("name", ""))
            data = _decode(kind, (obj or {}).get("data") or {})
            if ref.get("key") not in data:
                if ref.get("optional"):
                    continue
                what = "configmap" if kind == "configmaps" else "secret"
                raise EnvError(f'{what} "{ref.get("name")}" not found' if obj is None else
                               f"couldn't find key {ref.get('key')} in {what.capitalize() if what == 'secret' else 'ConfigMap'} "
                               f"{namespace}/{ref.get('name')}")
            env[name] = data[ref["key"]]
    return env
