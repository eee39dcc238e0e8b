"""PersistentVolume (ValidatePersistentVolumeSpec, not inline: access modes, a capacity of storage only, the reclaim
policy, exactly one volume source and the required fields of the common ones) and VolumeAttachment."""

from __future__ import annotations

import posixpath
from typing import Any

from mini_kube.apiserver.errors import GoText
from mini_kube.apiserver.validation.csi import validate_csi_driver_name
from mini_kube.apiserver.validation.errs import (
    IMMUTABLE,
    FieldError,
    each,
    forbidden,
    invalid,
    not_supported,
    required,
)
from mini_kube.machinery.names import (
    name_is_dns_subdomain,
)
from mini_kube.machinery.quantity import parse_quantity

Obj = dict[str, Any]
ACCESS_MODES = ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")
RECLAIM_POLICIES = ("Delete", "Recycle", "Retain")
VOLUME_MODES = ("Block", "Filesystem")
HOST_PATH_TYPES = ("", "BlockDevice", "CharDevice", "Directory", "DirectoryOrCreate", "File", "FileOrCreate", "Socket")
# Upstream's order of checks; the path each source is reported under when it is one too many.
PV_SOURCES = ("hostPath", "gcePersistentDisk", "awsElasticBlockStore", "glusterfs", "flocker", "nfs", "rbd",
              "quobyte", "cephfs", "iscsi", "cinder", "fc", "flexVolume", "azureFile", "vsphereVolume",
              "photonPersistentDisk", "portworxVolume", "azureDisk", "scaleIO", "local", "storageos", "csi")
FORBIDDEN_PATH = {"cephfs": "cephFS"}


def _access_modes(modes: list[str], path: str) -> list[FieldError]:
    errs = [] if modes else [required(path)]
    errs += [not_supported(path, mode, ACCESS_MODES) for mode in modes if mode not in ACCESS_MODES]
    others = [m for m in modes if m in ACCESS_MODES and m != "ReadWriteOncePod"]
    if "ReadWriteOncePod" in modes and others:
        errs.append(forbidden(path, "may not use ReadWriteOncePod with other access modes"))
    return errs


def _capacity(capacity: Obj | None, path: str) -> list[FieldError]:
    errs = [] if capacity else [required(path)]
    if not capacity or "storage" not in capacity or len(capacity) > 1:
        shown = "core.ResourceList(nil)" if capacity is None else "core.ResourceList{...}"
        errs.append(not_supported(path, GoText(shown), ("storage",)))
    for name, value in (capacity or {}).items():
        quantity = parse_quantity(value)
        if quantity is None:
            continue
        if quantity.value < 0:
            errs.append(invalid(f"{path}[{name}]", str(quantity), "must be a valid resource quantity"))
        if quantity.value <= 0:
            errs.append(invalid(f"{path}[{name}]", str(quantity), "must be greater than zero"))
    return errs


def _absolute(value: str, path: str) -> list[FieldError]:
    return [] if value.startswith("/") else [invalid(path, value, "must be an absolute path")]


def _no_backsteps(value: str, path: str) -> list[FieldError]:
    return [invalid(path, value, "must not contain '..'")] if ".." in value.split("/") else []


def _source(kind: str, source: Obj, path: str) -> list[FieldError]:
    """The required fields of the sources people write by hand."""
    errs: list[FieldError] = []
    if kind == "hostPath":
        if not source.get("path"):
            return [required(f"{path}.path")]
        errs += _no_backsteps(source["path"], f"{path}.path")
        kind_ = source.get("type")
        if kind_ is not None and kind_ not in HOST_PATH_TYPES:
            errs.append(not_supported(f"{path}.type", kind_, HOST_PATH_TYPES))
    elif kind == "nfs":
        if not source.get("server"):
            errs.append(required(f"{path}.server"))
        if not source.get("path"):
            errs.append(required(f"{path}.path"))
        elif not source["path"].startswith("/"):
            errs += _absolute(source["path"], f"{path}.path")
    elif kind == "local":
        if not source.get("path"):
            errs.append(required(f"{path}.path"))
        else:
            errs += _no_backsteps(source["path"], f"{path}.path")
    elif kind == "csi":
        if not source.get("driver"):
            errs.append(required(f"{path}.driver"))
        if not source.get("volumeHandle"):
            errs.append(required(f"{path}.volumeHandle"))
    return errs


def _sources(spec: Obj) -> list[FieldError]:
    errs: list[FieldError] = []
    count = 0
    affinity = spec.get("nodeAffinity")
    for kind in PV_SOURCES:
        source = spec.get(kind)
        if source is None:
            continue
        if count and kind != "flexVolume":
            errs.append(forbidden(f"spec.{FORBIDDEN_PATH.get(kind, kind)}", "may not specify more than 1 volume type"))
            continue
        count += 1
        errs += _source(kind, source, f"spec.{kind}")
        if kind == "local" and affinity is None:
            errs.append(required("spec.nodeAffinity", "Local volume requires node affinity"))
    if not count:
        errs.append(required("spec", "must specify a volume type"))
    return errs


def validate_persistent_volume(obj: Obj) -> list[FieldError]:
    spec = obj.get("spec") or {}
    errs = _access_modes(spec.get("accessModes") or [], "spec.accessModes")
    errs += _capacity(spec.get("capacity"), "spec.capacity")
    policy = spec.get("persistentVolumeReclaimPolicy")
    if policy and policy not in RECLAIM_POLICIES:
        errs.append(not_supported("spec.persistentVolumeReclaimPolicy", policy, RECLAIM_POLICIES))
    affinity = spec.get("nodeAffinity")
    if affinity is not None and affinity.get("required") is None:
        errs.append(required("spec.nodeAffinity.required", "must specify required node constraints"))
    errs += _sources(spec)
    host = spec.get("hostPath") or {}
    if host.get("path") and posixpath.normpath(host["path"]) in ("/", "//") and policy == "Recycle":
        errs.append(forbidden("spec.persistentVolumeReclaimPolicy", "may not be 'recycle' for a hostPath mount of '/'"))
    if spec.get("storageClassName"):
        errs += each("spec.storageClassName", spec["storageClassName"],
                     name_is_dns_subdomain(spec["storageClassName"], False))
    mode = spec.get("volumeMode")
    if mode is not None and mode not in VOLUME_MODES:
        errs.append(not_supported("spec.volumeMode", mode, VOLUME_MODES))
    return errs


def validate_persistent_volume_update(new: Obj, old: Obj) -> list[FieldError]:
    """The volume source is fixed once created (a CSI controllerExpandSecretRef may be added) and so is volumeMode.

    Upstream appends a cmp.Diff of the two sources to the source message; that diff is not reproduced."""
    errs = validate_persistent_volume(new)
    spec, before = new.get("spec") or {}, old.get("spec") or {}
    sources = {k: spec.get(k) for k in PV_SOURCES if spec.get(k) is not None}
    was = {k: before.get(k) for k in PV_SOURCES if before.get(k) is not None}
    csi, old_csi = sources.get("csi"), was.get("csi")
    if csi is not None and old_csi is not None and old_csi.get("controllerExpandSecretRef") is None:
        sources["csi"] = {k: v for k, v in csi.items() if k != "controllerExpandSecretRef"}
    if sources != was:
        errs.append(forbidden("spec.persistentvolumesource", "spec.persistentvolumesource is immutable after creation"))
    mode = spec.get("volumeMode") or "Filesystem"  # upstream defaults it; an unset one is Filesystem
    if mode != (before.get("volumeMode") or "Filesystem"):
        errs.append(invalid("volumeMode", mode, IMMUTABLE))
    return errs


def validate_volume_attachment(obj: Obj) -> list[FieldError]:
    """ValidateVolumeAttachment then ValidateVolumeAttachmentV1, as the strategy runs them (the inline volume spec
    is not checked here)."""
    spec = obj.get("spec") or {}
    attacher = spec.get("attacher") or ""
    errs = [] if attacher else [required("spec.attacher")]
    source = spec.get("source") or {}
    inline, pv = source.get("inlineVolumeSpec"), source.get("persistentVolumeName")
    one_of = "must specify exactly one of inlineVolumeSpec and persistentVolumeName"
    if inline is None and pv is None:
        errs.append(required("spec.source", one_of))
    elif inline is not None and pv is not None:
        errs.append(forbidden("spec.source", one_of))
    elif pv == "":
        errs.append(required("spec.source.persistentVolumeName", "must specify non empty persistentVolumeName"))
    node = spec.get("nodeName") or ""
    errs += each("spec.nodeName", node, name_is_dns_subdomain(node, False))
    errs += validate_csi_driver_name(attacher, "spec.attacher")
    if pv is not None:
        errs += each("spec.source.persistentVolumeName", pv, name_is_dns_subdomain(pv, False))
    return errs


def validate_volume_attachment_update(new: Obj, old: Obj) -> list[FieldError]:
    errs = validate_volume_attachment(new)
    if (new.get("spec") or {}) != (old.get("spec") or {}):
        errs.append(invalid("spec", GoText("storage.VolumeAttachmentSpec{...}"), IMMUTABLE))
    return errs
