"""CSIDriver, CSINode and CSIStorageCapacity, as upstream's storage validation checks them (the fields a client
writes: driver names, policies, token requests, node IDs and topology keys, capacities) and what updates keep."""

from __future__ import annotations

from typing import Any

from mini_kube.apiserver.errors import GoText
from mini_kube.apiserver.gofmt import go_quote
from mini_kube.apiserver.validation.errs import (
    IMMUTABLE,
    FieldError,
    duplicate,
    each,
    invalid,
    nonnegative,
    not_supported,
    required,
    too_long,
)
from mini_kube.apiserver.validation.meta import validate_label_selector
from mini_kube.machinery.names import (
    is_dns1123_subdomain,
    is_qualified_name,
    name_is_dns_subdomain,
)
from mini_kube.machinery.quantity import parse_quantity

Obj = dict[str, Any]


def validate_csi_driver_name(name: str, path: str) -> list[FieldError]:
    """ValidateCSIDriverName: required, at most 63 bytes, a DNS subdomain once lowercased."""
    errs = [] if name else [required(path)]
    if len(name) > 63:
        errs.append(too_long(path, 63))
    return errs + each(path, name, is_dns1123_subdomain(name.lower()))


FS_GROUP_POLICIES = ("File", "None", "ReadWriteOnceWithFSType")
LIFECYCLE_MODES = ("Persistent", "Ephemeral")


def validate_csi_driver(obj: Obj) -> list[FieldError]:
    """validateCSIDriverSpec; podInfoOnMount and seLinuxMount, which upstream defaults, are not required here."""
    spec = obj.get("spec") or {}
    errs = [] if spec.get("attachRequired") is not None else [required("spec.attachedRequired")]
    if spec.get("storageCapacity") is None:
        errs.append(required("spec.storageCapacity"))
    policy = spec.get("fsGroupPolicy")
    if policy is not None and policy not in FS_GROUP_POLICIES:
        errs.append(not_supported("spec.fsGroupPolicy", policy, FS_GROUP_POLICIES))
    audiences: set[str] = set()
    for i, request in enumerate(spec.get("tokenRequests") or ()):
        at, audience = f"spec.tokenRequests[{i}]", request.get("audience") or ""
        if audience in audiences:
            errs.append(duplicate(f"{at}.audience", audience))
            continue
        audiences.add(audience)
        seconds = request.get("expirationSeconds")
        if seconds is not None and seconds < 600:
            errs.append(invalid(f"{at}.expirationSeconds", seconds, "may not specify a duration less than 10 minutes"))
        if seconds is not None and seconds > 1 << 32:
            errs.append(invalid(f"{at}.expirationSeconds", seconds,
                                "may not specify a duration larger than 2^32 seconds"))
    errs += [not_supported("spec.volumeLifecycleModes", mode, LIFECYCLE_MODES)
             for mode in spec.get("volumeLifecycleModes") or () if mode not in LIFECYCLE_MODES]
    return errs


def validate_csi_driver_update(new: Obj, old: Obj) -> list[FieldError]:
    errs = validate_csi_driver(new)
    spec, before = new.get("spec") or {}, old.get("spec") or {}
    if spec.get("attachRequired") != before.get("attachRequired"):
        errs.append(invalid("spec.attachedRequired", spec.get("attachRequired"), IMMUTABLE))
    modes = spec.get("volumeLifecycleModes") or []
    if modes != (before.get("volumeLifecycleModes") or []):
        shown = "[]storage.VolumeLifecycleMode{" + ", ".join(go_quote(m) for m in modes) + "}"
        errs.append(invalid("spec.volumeLifecycleModes", GoText(shown), IMMUTABLE))
    return errs


def validate_csi_storage_capacity(obj: Obj) -> list[FieldError]:
    """ValidateCSIStorageCapacity: the node topology a selector, the class a subdomain, capacity not negative."""
    errs = validate_label_selector(obj.get("nodeTopology"), "nodeTopology")
    name = obj.get("storageClassName") or ""
    errs += each("storageClassName", name, name_is_dns_subdomain(name, False))
    capacity = obj.get("capacity")
    quantity = parse_quantity(capacity) if capacity is not None else None
    if quantity is not None and quantity.value < 0:
        errs.append(invalid("capacity", str(quantity), "must be greater than or equal to 0"))
    return errs


def validate_csi_storage_capacity_update(new: Obj, old: Obj) -> list[FieldError]:
    """Only metadata is validated again on update; the node topology and class are fixed."""
    errs: list[FieldError] = []
    if new.get("nodeTopology") != old.get("nodeTopology"):
        errs.append(invalid("nodeTopology", GoText("v1.LabelSelector{...}"), IMMUTABLE))
    if (new.get("storageClassName") or "") != (old.get("storageClassName") or ""):
        errs.append(invalid("storageClassName", new.get("storageClassName") or "", IMMUTABLE))
    return errs


MAX_NODE_ID = 256  # the strategy's AllowLongNodeID


def validate_csi_node(obj: Obj) -> list[FieldError]:
    """validateCSINodeDrivers: driver names, node IDs, allocatable counts, unique names, topology keys."""
    errs: list[FieldError] = []
    names: set[str] = set()
    for i, driver in enumerate((obj.get("spec") or {}).get("drivers") or ()):
        at, name, node_id = f"spec.drivers[{i}]", driver.get("name") or "", driver.get("nodeID") or ""
        errs += validate_csi_driver_name(name, f"{at}.name")
        if not node_id:
            errs.append(required(f"{at}.nodeID"))
        if len(node_id) > MAX_NODE_ID:
            errs.append(invalid(f"{at}.nodeID", node_id, f"must be {MAX_NODE_ID} characters or less"))
        errs += nonnegative(f"{at}.allocatable.count", (driver.get("allocatable") or {}).get("count"))
        if name in names:
            errs.append(duplicate(f"{at}.name", name))
        names.add(name)
        keys: set[str] = set()
        for key in driver.get("topologyKeys") or ():
            if not key:
                errs.append(required(at))
            if key in keys:
                errs.append(duplicate(at, key))
            keys.add(key)
            errs += each(at, key, is_qualified_name(key))
    return errs


def validate_csi_node_update(new: Obj, old: Obj) -> list[FieldError]:
    """A driver already listed may not change."""
    errs = validate_csi_node(new)
    for before in (old.get("spec") or {}).get("drivers") or ():
        for driver in (new.get("spec") or {}).get("drivers") or ():
            if driver.get("name") == before.get("name") and driver != before:
                errs.append(invalid("spec.drivers", GoText("storage.CSINodeDriver{...}"), IMMUTABLE))
    return errs
