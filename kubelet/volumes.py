"""A Pod's volumes made as directories of its own (`<pod dir>/volumes/<name>`): emptyDir, configMap, secret,
downwardAPI, projected (service-account token, ConfigMap, Secret, downward API), hostPath, and
persistentVolumeClaim as node-local storage. The runtime mounts them at each container's `mountPath` inside
the container's own mount namespace; nothing on the host outside the kubelet's directory changes."""

from __future__ import annotations

import base64
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from .env import Getter, field_value, resource_value

TokenRequester = Callable[[dict[str, Any], dict[str, Any]], Awaitable[str]]  # (pod, source) -> token


class VolumeError(Exception):
    """A volume that cannot be made (the Pod waits, as upstream's FailedMount); `volume` is its name."""

    volume = ""


def _write(directory: Path, files: dict[str, bytes], mode: int) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for rel, data in files.items():
        path = directory / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_bytes(data)
        os.chmod(tmp, mode)
        tmp.replace(path)


def _items(data: dict[str, bytes], items: list[dict[str, Any]] | None, default_mode: int,
           optional: bool, what: str) -> dict[str, tuple[bytes, int]]:
    if not items:
        return {k: (v, default_mode) for k, v in data.items()}
    out = {}
    for item in items:
        if item["key"] not in data:
            if optional:
                continue
            raise VolumeError(f"configmap references non-existent config key: {item['key']}" if what == "configmaps"
                              else f"references non-existent secret key: {item['key']}")
        out[item["path"]] = (data[item["key"]], item.get("mode", default_mode))
    return out


async def _keyed(kind: str, source: dict[str, Any], namespace: str, get: Getter,
                 default_mode: int) -> dict[str, tuple[bytes, int]]:
    name = source.get("name") or source.get("secretName") or ""
    obj = await get(kind, namespace, name)
    if obj is None:
        if source.get("optional"):
            return {}
        raise VolumeError(f'{"configmap" if kind == "configmaps" else "secret"} "{name}" not found')
    data: dict[str, bytes] = {}
    if kind == "secrets":
        data = {k: base64.b64decode(v) for k, v in (obj.get("data") or {}).items()}
    else:
        data = {k: v.encode() for k, v in (obj.get("data") or {}).items()}
        data.update({k: base64.b64decode(v) for k, v in (obj.get("binaryData") or {}).items()})
    return _items(data, source.get("items"), source.get("defaultMode", default_mode), bool(source.get("optional")),
                  kind)


def _downward(pod: dict[str, Any], items: list[dict[str, Any]], default_mode: int) -> dict[str, tuple[bytes, int]]:
    containers = {c["name"]: c for c in (pod.get("spec") or {}).get("containers") or ()}
    out = {}
    for item in items:
        if "fieldRef" in item:
            value = field_value(pod, item["fieldRef"]["fieldPath"])
        else:
            ref = item["resourceFieldRef"]
            value = resource_value(containers.get(ref.get("containerName", ""), {}), ref, {})
        out[item["path"]] = (value.encode(), item.get("mode", default_mode))
    return out


async def make_volumes(pod: dict[str, Any], pod_dir: Path, get: Getter, token: TokenRequester,
                       node_root: Path) -> dict[str, str]:
    """Make every volume of `pod`; returns volume name -> host path to mount. A VolumeError names its volume."""
    paths: dict[str, str] = {}
    for volume in (pod.get("spec") or {}).get("volumes") or ():
        try:
            paths[volume["name"]] = await _make_volume(pod, volume, pod_dir, get, token, node_root)
        except VolumeError as exc:
            exc.volume = volume["name"]
            raise
    return paths


async def _make_volume(pod: dict[str, Any], volume: dict[str, Any], pod_dir: Path, get: Getter,
                       token: TokenRequester, node_root: Path) -> str:
    """Make one volume; returns the host path to mount."""
    namespace = pod["metadata"]["namespace"]
    name = volume["name"]
    target = pod_dir / "volumes" / name
    files: dict[str, tuple[bytes, int]] | None = None
    if "emptyDir" in volume:
        target.mkdir(parents=True, exist_ok=True)
        os.chmod(target, 0o777)
    elif "hostPath" in volume:
        return volume["hostPath"]["path"]
    elif "persistentVolumeClaim" in volume:
        claim = node_root / "claims" / namespace / volume["persistentVolumeClaim"]["claimName"]
        claim.mkdir(parents=True, exist_ok=True)
        return str(claim)
    elif "configMap" in volume:
        files = await _keyed("configmaps", volume["configMap"], namespace, get,
                             volume["configMap"].get("defaultMode", 0o644))
    elif "secret" in volume:
        files = await _keyed("secrets", volume["secret"], namespace, get,
                             volume["secret"].get("defaultMode", 0o644))
    elif "downwardAPI" in volume:
        files = _downward(pod, volume["downwardAPI"].get("items") or [],
                          volume["downwardAPI"].get("defaultMode", 0o644))
    elif "projected" in volume:
        files = {}
        mode = volume["projected"].get("defaultMode", 0o644)
        for source in volume["projected"].get("sources") or ():
            if "serviceAccountToken" in source:
                sat = source["serviceAccountToken"]
                files[sat["path"]] = ((await token(pod, sat)).encode(), mode)
            elif "configMap" in source:
                files.update(await _keyed("configmaps", source["configMap"], namespace, get, mode))
            elif "secret" in source:
                files.update(await _keyed("secrets", source["secret"], namespace, get, mode))
            elif "downwardAPI" in source:
                files.update(_downward(pod, source["downwardAPI"].get("items") or [], mode))
    else:
        target.mkdir(parents=True, exist_ok=True)  # other kinds: an empty directory stands in
    if files is not None:
        target.mkdir(parents=True, exist_ok=True)
        for rel, (data, mode) in files.items():
            _write(target, {rel: data}, mode)
    return str(target)


def container_mounts(container: dict[str, Any], volumes: dict[str, str]) -> list[dict[str, Any]]:
    """The bind mounts of one container: source (host path, subPath applied), target, readOnly."""
    mounts = []
    for mount in container.get("volumeMounts") or ():
        source = volumes.get(mount["name"])
        if source is None:
            continue
        if mount.get("subPath"):
            source = os.path.join(source, mount["subPath"])
            if not os.path.exists(source):
                os.makedirs(source, exist_ok=True)
        mounts.append({"source": source, "target": mount["mountPath"], "readOnly": bool(mount.get("readOnly"))})
    return mounts
