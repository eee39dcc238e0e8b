"""A Pod's volumes made as directories of its own: emptyDir (`<pod dir>/volumes/kubernetes.io~empty-dir/<name>`, as
upstream's kubelet lays its volumes out under its root dir), configMap, secret,
downwardAPI, projected (service-account token, ConfigMap, Secret, downward API) on the Pod's own tmpfs where the
runtime gives one (`memory`: mounted only in the Pod's mount namespace, so no other Pod and nothing on the node's
disk holds them), hostPath, and persistentVolumeClaim as node-local storage. With the Pod's `fsGroup`, the
volumes that support ownership get that group, group read (and write for emptyDir), and set-gid directories,
as upstream's SetVolumeOwnership. The runtime mounts them at each container's `mountPath` inside the
container's own mount namespace; nothing on the host outside the kubelet's directory changes but the
directory or file a hostPath of type DirectoryOrCreate or FileOrCreate asks for (which Pod Security's
baseline already refuses to any Pod that may not have hostPath volumes)."""

from __future__ import annotations

import asyncio
import base64
import os
import stat
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from mini_kube.machinery.quantity import decimal_value

from .atomic_writer import Payload, PayloadError, write_payload
from .env import Getter, expand_sub_path, field_value, resource_value
from .security import SecurityError

TokenRequester = Callable[[dict[str, Any], dict[str, Any]], Awaitable[str]]  # (pod, source) -> token


class VolumeError(Exception):
    """A volume that cannot be made (the Pod waits, as upstream's FailedMount); `volume` is its name."""

    volume = ""


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


def _downward(pod: dict[str, Any], items: list[dict[str, Any]], default_mode: int,
              allocatable: dict[str, str]) -> dict[str, tuple[bytes, int]]:
    """The files of downward API items; a limit the container does not set is the node's allocatable."""
    containers = {c["name"]: c for c in (pod.get("spec") or {}).get("containers") or ()}
    out = {}
    for item in items:
        if "fieldRef" in item:
            value = field_value(pod, item["fieldRef"]["fieldPath"])
        else:
            ref = item["resourceFieldRef"]
            value = resource_value(containers.get(ref.get("containerName", ""), {}), ref, allocatable)
        out[item["path"]] = (value.encode(), item.get("mode", default_mode))
    return out


PLUGINS = {"emptyDir": "empty-dir", "configMap": "configmap", "secret": "secret", "downwardAPI": "downward-api",
           "projected": "projected"}  # upstream's volume plugins' directory names (kubernetes.io~<name>)


def volume_directory(pod_dir: Path, volume: dict[str, Any]) -> Path:
    """Where the kubelet makes a volume on the node's disk: `volumes/kubernetes.io~<plugin>/<name>` under the
    Pod's directory, as upstream's getPodVolumeDir."""
    kind = next((k for k in volume if k != "name"), "emptyDir")
    return pod_dir / "volumes" / f"kubernetes.io~{PLUGINS.get(kind, kind.lower())}" / volume["name"]


RW_MASK, RO_MASK, EXEC_MASK = 0o660, 0o440, 0o110
OWNED = ("emptyDir", "configMap", "secret", "downwardAPI", "projected")  # the kinds fsGroup applies to
REFRESHED = ("configMap", "secret", "downwardAPI", "projected")  # the kinds the kubelet keeps up to date


def set_ownership(path: Path, group: int, read_only: bool) -> None:
    """fsGroup on a volume: every file gets the group and group read (write unless read-only), directories
    set-gid and group search, as upstream's SetVolumeOwnership."""
    mask = RO_MASK if read_only else RW_MASK
    for root, dirs, files in os.walk(path):
        for name in [None, *dirs, *files]:
            item = Path(root) if name is None else Path(root) / name
            info = item.lstat()
            os.lchown(item, -1, group)
            if item.is_symlink():
                continue
            extra = mask | (0o2000 | EXEC_MASK if item.is_dir() else 0)
            os.chmod(item, (info.st_mode & 0o7777) | extra)


HOST_PATH_CHECKS = {  # hostPath type -> (stat test, what the path is not), as upstream's type checker
    "Directory": (stat.S_ISDIR, "a directory"), "DirectoryOrCreate": (stat.S_ISDIR, "a directory"),
    "File": (stat.S_ISREG, "a file"), "FileOrCreate": (stat.S_ISREG, "a file"),
    "Socket": (stat.S_ISSOCK, "a socket file"), "CharDevice": (stat.S_ISCHR, "a character device"),
    "BlockDevice": (stat.S_ISBLK, "a block device"),
}


def host_path(source: dict[str, Any]) -> str:
    """A hostPath volume's path, checked against its `type` as the kubelet's hostPath plugin checks it:
    DirectoryOrCreate makes a missing directory (0755, with its parents), FileOrCreate a missing empty file
    (0644); any other type must already be what it names (else the Pod waits: FailedMount)."""
    path, kind = source["path"], source.get("type") or ""
    if kind not in HOST_PATH_CHECKS:
        return path
    if not os.path.lexists(path):
        if kind == "DirectoryOrCreate":
            os.makedirs(path, mode=0o755, exist_ok=True)
        elif kind == "FileOrCreate":
            os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o644))
    test, what = HOST_PATH_CHECKS[kind]
    try:
        is_kind = test(os.stat(path).st_mode)
    except OSError:
        is_kind = False
    if not is_kind:
        raise VolumeError(f"hostPath type check failed: {path} is not {what}")
    return path


def memory_volume_size(pod: dict[str, Any], volume: dict[str, Any], allocatable: dict[str, str]) -> int:
    """The size of an emptyDir of medium Memory, as upstream's calculateEmptyDirMemorySize: the node's allocatable
    memory, or less: the Pod's memory limit (when every container sets one) or the volume's sizeLimit."""
    size = int(decimal_value(allocatable.get("memory", "0")))
    containers = (pod.get("spec") or {}).get("containers") or ()
    limits = [((c.get("resources") or {}).get("limits") or {}).get("memory") for c in containers]
    given: list[str | int | float] = [limit for limit in limits if limit]
    if limits and len(given) == len(limits):
        pod_limit = sum(int(decimal_value(limit)) for limit in given)
        size = min(size, pod_limit) if size else pod_limit
    size_limit = (volume.get("emptyDir") or {}).get("sizeLimit")
    if size_limit and decimal_value(size_limit) > 0 and (not size or decimal_value(size_limit) < size):
        size = int(decimal_value(size_limit))
    return size


def memory_volumes(pod: dict[str, Any]) -> list[dict[str, Any]]:
    """The Pod's emptyDir volumes of medium Memory."""
    return [v for v in (pod.get("spec") or {}).get("volumes") or ()
            if (v.get("emptyDir") or {}).get("medium") == "Memory"]


async def make_volumes(pod: dict[str, Any], pod_dir: Path, get: Getter, token: TokenRequester,
                       node_root: Path, memory: tuple[str, str] | None = None,
                       allocatable: dict[str, str] | None = None,
                       memory_dirs: dict[str, tuple[str, str]] | None = None) -> dict[str, str]:
    """Make every volume of `pod`; returns volume name -> host path to mount. `memory`: the Pod's tmpfs, as
    the kubelet writes it and as the Pod's mount namespace has it; `allocatable`: the node's, which a downward
    API limit the container does not set reads; `memory_dirs`: the tmpfs (written, mounted) of each emptyDir of
    medium Memory the runtime made. A VolumeError names its volume."""
    paths: dict[str, str] = {}
    group = ((pod.get("spec") or {}).get("securityContext") or {}).get("fsGroup")
    for volume in (pod.get("spec") or {}).get("volumes") or ():
        try:
            tmpfs = (memory_dirs or {}).get(volume["name"])
            paths[volume["name"]] = await _make_volume(pod, volume, pod_dir, get, token, node_root, memory,
                                                       allocatable or {}, tmpfs)
            kind = next((k for k in OWNED if k in volume), None)
            if group is not None and kind is not None:
                written = Path(tmpfs[0]) if tmpfs else _written_at(pod_dir, volume, kind, memory)
                set_ownership(written, int(group), read_only=kind != "emptyDir")
        except VolumeError as exc:
            exc.volume = volume["name"]
            raise
    return paths


async def warm_tokens(pod: dict[str, Any], token: TokenRequester, get: Getter | None = None) -> None:
    """Ask for the Pod's projected service-account tokens ahead (`token` keeps them), and with `get` (a Prefetch)
    for the ConfigMaps and Secrets its volumes name, all at once, so the API's round trips overlap the making of
    its sandbox; a failure here is met again, and reported, by `make_volumes`."""
    asked: list[Awaitable[object]] = []
    for volume in (pod.get("spec") or {}).get("volumes") or ():
        for source in [volume, *((volume.get("projected") or {}).get("sources") or ())]:
            if "serviceAccountToken" in source:
                asked.append(token(pod, source["serviceAccountToken"]))
            for kind, field in (("configmaps", "configMap"), ("secrets", "secret")):
                if get is not None and field in source:
                    named = source[field].get("name") or source[field].get("secretName") or ""
                    asked.append(get(kind, pod["metadata"]["namespace"], named))
    await asyncio.gather(*asked, return_exceptions=True)


class Prefetch:
    """A Getter asking for each object once, however many ask for it: what `warm_tokens` asked for ahead is what
    the Pod's first `make_volumes` gets, from the same round trip (a failure too: it is reported there)."""

    def __init__(self, get: Getter) -> None:
        self.get = get
        self._asked: dict[tuple[str, str, str], asyncio.Task[dict[str, Any] | None]] = {}

    async def __call__(self, kind: str, namespace: str, name: str) -> dict[str, Any] | None:
        key = (kind, namespace, name)
        if key not in self._asked:
            self._asked[key] = asyncio.ensure_future(self.get(kind, namespace, name))
        return await asyncio.shield(self._asked[key])


async def refresh_volumes(pod: dict[str, Any], pod_dir: Path, get: Getter, token: TokenRequester,
                          memory: tuple[str, str] | None, allocatable: dict[str, str]) -> list[VolumeError]:
    """Bring the Pod's ConfigMap, Secret, downward API and projected volumes up to date with the objects and the
    Pod's own metadata, as the kubelet's periodic sync does (each written atomically, and only when it changed);
    a volume that cannot be made now keeps what it had, and its error is returned."""
    failed: list[VolumeError] = []
    group = ((pod.get("spec") or {}).get("securityContext") or {}).get("fsGroup")
    for volume in (pod.get("spec") or {}).get("volumes") or ():
        kind = next((k for k in REFRESHED if k in volume), None)
        if kind is None:
            continue
        try:
            files = await _payload(pod, volume, get, token, allocatable)
            target = _written_at(pod_dir, volume, kind, memory)
            if files is not None and write_payload(target, files) and group is not None:
                set_ownership(target, int(group), read_only=True)
        except (VolumeError, PayloadError, OSError) as exc:
            error = exc if isinstance(exc, VolumeError) else VolumeError(str(exc))
            error.volume = volume["name"]
            failed.append(error)
    return failed


def _written_at(pod_dir: Path, volume: dict[str, Any], kind: str, memory: tuple[str, str] | None) -> Path:
    if memory is not None and kind != "emptyDir":
        return Path(memory[0]) / volume["name"]
    return volume_directory(pod_dir, volume)


async def _payload(pod: dict[str, Any], volume: dict[str, Any], get: Getter, token: TokenRequester,
                   allocatable: dict[str, str]) -> Payload | None:
    """The files of a ConfigMap, Secret, downward API or projected volume (None for other kinds)."""
    namespace = pod["metadata"]["namespace"]
    if "configMap" in volume:
        return await _keyed("configmaps", volume["configMap"], namespace, get,
                            volume["configMap"].get("defaultMode", 0o644))
    if "secret" in volume:
        return await _keyed("secrets", volume["secret"], namespace, get, volume["secret"].get("defaultMode", 0o644))
    if "downwardAPI" in volume:
        return _downward(pod, volume["downwardAPI"].get("items") or [],
                         volume["downwardAPI"].get("defaultMode", 0o644), allocatable)
    if "projected" not in volume:
        return None
    files: Payload = {}
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
            files.update(_downward(pod, source["downwardAPI"].get("items") or [], mode, allocatable))
    return files


async def _make_volume(pod: dict[str, Any], volume: dict[str, Any], pod_dir: Path, get: Getter,
                       token: TokenRequester, node_root: Path, memory: tuple[str, str] | None,
                       allocatable: dict[str, str], tmpfs: tuple[str, str] | None) -> str:
    """Make one volume; returns the path to mount (as the Pod's mount namespace sees it). `tmpfs`: where an
    emptyDir of medium Memory is (written, mounted)."""
    namespace = pod["metadata"]["namespace"]
    name = volume["name"]
    target = volume_directory(pod_dir, volume)
    mounted = target
    if memory is not None and "emptyDir" not in volume:
        target, mounted = Path(memory[0]) / name, Path(memory[1]) / name
    elif tmpfs is not None:
        target, mounted = Path(tmpfs[0]), Path(tmpfs[1])
    if "emptyDir" in volume:
        target.mkdir(parents=True, exist_ok=True)
        os.chmod(target, 0o777)
    elif "hostPath" in volume:
        return host_path(volume["hostPath"])
    elif "persistentVolumeClaim" in volume:
        claim = node_root / "claims" / namespace / volume["persistentVolumeClaim"]["claimName"]
        claim.mkdir(parents=True, exist_ok=True)
        return str(claim)
    else:
        files = await _payload(pod, volume, get, token, allocatable)
        if files is None:
            target.mkdir(parents=True, exist_ok=True)  # other kinds: an empty directory stands in
        else:
            try:
                write_payload(target, files)
            except PayloadError as exc:
                raise VolumeError(str(exc)) from None
    return str(mounted)


def sub_path(mount: dict[str, Any], env: dict[str, str]) -> str:
    """A volume mount's subPath, or its subPathExpr expanded with the container's `env`; as upstream's makeMounts,
    neither may be absolute or contain '..' (the container waits: CreateContainerConfigError)."""
    path = expand_sub_path(mount["subPathExpr"], env) if mount.get("subPathExpr") else mount.get("subPath") or ""
    if path.startswith("/"):
        raise SecurityError(f"error SubPath `{path}` must not be an absolute path")
    if ".." in path.split("/"):
        raise SecurityError(f"unable to provision SubPath `{path}`: must not contain '..'")
    return path


def container_mounts(container: dict[str, Any], volumes: dict[str, str],
                     memory: tuple[str, str] | None = None, env: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """The bind mounts of one container: source (host path, subPath or subPathExpr with `env` applied), target,
    readOnly. The volumes on the Pod's tmpfs (ConfigMap, Secret, downward API, projected) are always read-only,
    as upstream mounts them; a subPath must stay inside its volume (a symlink a container made there cannot lead
    the bind elsewhere)."""
    mounts = []
    for mount in container.get("volumeMounts") or ():
        source = volumes.get(mount["name"])
        if source is None:
            continue
        in_memory = memory is not None and (source == memory[1] or source.startswith(memory[1] + "/"))
        path = sub_path(mount, env or {})
        if path:
            base = source
            source = os.path.join(source, path)
            written = memory[0] + source[len(memory[1]):] if in_memory and memory is not None else source
            if not in_memory:
                real, top = os.path.realpath(source), os.path.realpath(base)
                if real != top and not real.startswith(top.rstrip("/") + "/"):
                    raise SecurityError(f'failed to prepare subPath for volumeMount "{mount["name"]}" of container '
                                        f'"{container.get("name", "")}"')
            if not os.path.exists(written):
                os.makedirs(written, exist_ok=True)
        mounts.append({"source": source, "target": mount["mountPath"],
                       "readOnly": bool(mount.get("readOnly")) or in_memory})
    return mounts
