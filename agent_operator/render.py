"""An Agent's desired children: its ConfigMap, Deployment and Service, as server-side apply configurations
(pure functions of the Agent, its runtime and its base config)."""

from __future__ import annotations

import hashlib
from typing import Any

import orjson
from mini_kube.machinery.meta import controller_ref, meta

from .api import (
    AGENT_LABEL,
    API_VERSION,
    APPLIED_HASH,
    CLUSTER_DOMAIN,
    COMPONENT,
    CONFIG_DIR,
    CONFIG_ENV_PREFIX,
    CONFIG_HASH,
    CONTAINER_NAME,
    GROUP,
    MANAGED_BY,
    PORT_NAME,
    config_map_name,
)


def digest(value: Any) -> str:
    """A short stable hash of a JSON value."""
    return hashlib.sha256(orjson.dumps(value, option=orjson.OPT_SORT_KEYS)).hexdigest()[:16]


def labels(agent: dict[str, Any]) -> dict[str, str]:
    name = meta(agent)["name"]
    return {AGENT_LABEL: name, "app.kubernetes.io/name": "agent", "app.kubernetes.io/instance": name,
            MANAGED_BY: COMPONENT}


def selector(agent: dict[str, Any]) -> dict[str, str]:
    return {AGENT_LABEL: meta(agent)["name"]}


def selector_string(agent: dict[str, Any]) -> str:
    return ",".join(f"{k}={v}" for k, v in selector(agent).items())


def _child(agent: dict[str, Any], api_version: str, kind: str, name: str, body: dict[str, Any]) -> dict[str, Any]:
    """An apply configuration owned by `agent`, carrying the hash of its own content."""
    obj = {"apiVersion": api_version, "kind": kind,
           "metadata": {"name": name, "namespace": meta(agent)["namespace"], "labels": labels(agent),
                        "ownerReferences": [{**controller_ref(agent), "apiVersion": API_VERSION, "kind": "Agent"}]},
           **body}
    obj["metadata"]["annotations"] = {APPLIED_HASH: digest(obj)}
    return obj


def config_data(agent: dict[str, Any], base: dict[str, str] | None) -> dict[str, str]:
    """The agent's config: the referenced ConfigMap's data, overridden by `spec.config`."""
    return {**(base or {}), **((agent.get("spec") or {}).get("config") or {})}


def configmap(agent: dict[str, Any], data: dict[str, str]) -> dict[str, Any]:
    return _child(agent, "v1", "ConfigMap", config_map_name(meta(agent)["name"]), {"data": data})


def service(agent: dict[str, Any]) -> dict[str, Any]:
    spec = (agent.get("spec") or {}).get("service") or {}
    port: dict[str, Any] = {"name": PORT_NAME, "protocol": "TCP", "port": int(spec.get("port") or 80),
                            "targetPort": PORT_NAME}
    kind = spec.get("type") or "ClusterIP"
    if spec.get("nodePort") and kind != "ClusterIP":
        port["nodePort"] = int(spec["nodePort"])
    return _child(agent, "v1", "Service", meta(agent)["name"], {"spec": {
        "type": kind, "selector": selector(agent), "ports": [port]}})


def _merge_env(*lists: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Env lists merged by name: later lists override earlier ones in place; new names are appended."""
    merged: dict[str, dict[str, Any]] = {}
    for items in lists:
        for item in items:
            merged[item["name"]] = item
    return list(merged.values())


def _merge_resources(runtime: dict[str, Any], agent: dict[str, Any]) -> dict[str, Any]:
    result = {}
    for part in ("requests", "limits"):
        values = {**(runtime.get(part) or {}), **(agent.get(part) or {})}
        if values:
            result[part] = values
    return result


def replicas(agent: dict[str, Any], runtime: dict[str, Any]) -> int:
    own = (agent.get("spec") or {}).get("replicas")
    return int(own if own is not None else (runtime.get("spec") or {}).get("replicas", 1))


def deployment(agent: dict[str, Any], runtime: dict[str, Any], runtime_kind: str, data: dict[str, str]) -> dict[str, Any]:
    """The Deployment: the runtime's image, command, env, port, resources and probe, overridden by the Agent's env
    and resources, with the config mounted and in env, and its hash in the pod template (a change rolls pods)."""
    name, namespace = meta(agent)["name"], meta(agent)["namespace"]
    spec, rt = agent.get("spec") or {}, runtime.get("spec") or {}
    port = int(rt.get("port") or 8080)
    env = _merge_env([{"name": "AGENT_NAME", "value": name}, {"name": "AGENT_NAMESPACE", "value": namespace},
                      {"name": "AGENT_RUNTIME", "value": meta(runtime)["name"]}, {"name": "PORT", "value": str(port)},
                      {"name": "AGENT_CONFIG_DIR", "value": CONFIG_DIR}], rt.get("env") or [], spec.get("env") or [])
    container: dict[str, Any] = {
        "name": CONTAINER_NAME, "image": rt["image"],
        "ports": [{"name": PORT_NAME, "containerPort": port, "protocol": "TCP"}], "env": env,
        "envFrom": [{"prefix": CONFIG_ENV_PREFIX, "configMapRef": {"name": config_map_name(name)}}],
        "volumeMounts": [{"name": "config", "mountPath": CONFIG_DIR, "readOnly": True}]}
    for field in ("command", "args"):
        if rt.get(field):
            container[field] = list(rt[field])
    resources = _merge_resources(rt.get("resources") or {}, spec.get("resources") or {})
    if resources:
        container["resources"] = resources
    if rt.get("readinessProbe"):
        container["readinessProbe"] = rt["readinessProbe"]
    template = {"metadata": {"labels": labels(agent), "annotations": {
        CONFIG_HASH: digest(data), f"{GROUP}/runtime": f"{runtime_kind}/{meta(runtime)['name']}"}},
        "spec": {"containers": [container], "volumes": [
            {"name": "config", "configMap": {"name": config_map_name(name)}}]}}
    return _child(agent, "apps/v1", "Deployment", name, {"spec": {
        "replicas": replicas(agent, runtime), "selector": {"matchLabels": selector(agent)}, "template": template}})


def endpoint(agent: dict[str, Any], svc: dict[str, Any] | None) -> dict[str, str]:
    """Where the agent answers: its Service's cluster DNS name, and the load balancer's address if it has one."""
    port = int(((agent.get("spec") or {}).get("service") or {}).get("port") or 80)
    result = {"url": f"http://{meta(agent)['name']}.{meta(agent)['namespace']}.svc.{CLUSTER_DOMAIN}:{port}"}
    ingress = (((svc or {}).get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
    if ingress and (ingress[0].get("ip") or ingress[0].get("hostname")):
        result["externalURL"] = f"http://{ingress[0].get('ip') or ingress[0]['hostname']}:{port}"
    return result


def is_applied(desired: dict[str, Any], live: dict[str, Any] | None) -> bool:
    """True if `live` already carries this intent: the same applied hash and every desired field as desired
    (fields the server or others added are not ours to judge)."""
    if live is None:
        return False
    if (meta(live).get("annotations") or {}).get(APPLIED_HASH) != desired["metadata"]["annotations"][APPLIED_HASH]:
        return False
    return contains(live, {k: v for k, v in desired.items() if k not in ("apiVersion", "kind")})


def contains(live: Any, desired: Any) -> bool:
    """`desired` is a subset of `live` (maps by key, lists item by item with the same length)."""
    if isinstance(desired, dict):
        return isinstance(live, dict) and all(k in live and contains(live[k], v) for k, v in desired.items())
    if isinstance(desired, list):
        return isinstance(live, list) and len(live) == len(desired) and all(
            contains(a, b) for a, b in zip(live, desired, strict=True))
    return live == desired
