"""Namespaces, Endpoints, EndpointSlices, Leases, Events, PriorityClasses and volume claims."""

from __future__ import annotations

from typing import Any

from mini_kube.apiserver.validation.errs import (
    IMMUTABLE,
    FieldError,
    duplicate,
    each,
    forbidden,
    invalid,
    not_supported,
    required,
    too_many,
)
from mini_kube.apiserver.validation.meta import (
    kube_finalizer,
    validate_dns1123_label,
    validate_labels,
    validate_qualified_name,
)
from mini_kube.apiserver.validation.network import (
    PROTOCOLS,
    is_valid_ip,
    is_valid_ipv4,
    is_valid_ipv6,
    validate_non_special_ip,
    validate_protocol,
)
from mini_kube.machinery.names import (
    is_dns1123_label,
    is_dns1123_subdomain,
    is_qualified_name,
    is_valid_port_num,
)
from mini_kube.machinery.quantity import parse_quantity

Obj = dict[str, Any]
ADDRESS_TYPES = ("FQDN", "IPv4", "IPv6")


def validate_namespace(obj: Obj) -> list[FieldError]:
    errs: list[FieldError] = []
    for finalizer in (obj.get("spec") or {}).get("finalizers") or ():
        errs += each("spec.finalizers", finalizer, is_qualified_name(finalizer))
        errs += kube_finalizer(finalizer, "spec.finalizers")
    return errs


def _endpoint_address(address: Obj, path: str) -> list[FieldError]:
    ip = address.get("ip") or ""
    errs = is_valid_ip(f"{path}.ip", ip)
    if address.get("hostname"):
        errs += validate_dns1123_label(address["hostname"], f"{path}.hostname")
    if address.get("nodeName"):
        errs += each(f"{path}.nodeName", address["nodeName"], is_dns1123_subdomain(address["nodeName"]))
    return errs + validate_non_special_ip(ip, f"{path}.ip")


def validate_endpoints(obj: Obj) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, subset in enumerate(obj.get("subsets") or ()):
        at = f"subsets[{i}]"
        if not subset.get("addresses") and not subset.get("notReadyAddresses"):
            errs.append(required(at, "must specify `addresses` or `notReadyAddresses`"))
        for key in ("addresses", "notReadyAddresses"):
            for j, address in enumerate(subset.get(key) or ()):
                errs += _endpoint_address(address, f"{at}.{key}[{j}]")
        ports = subset.get("ports") or []
        for j, port in enumerate(ports):
            pat = f"{at}.ports[{j}]"
            if len(ports) > 1 and not port.get("name"):
                errs.append(required(f"{pat}.name"))
            elif port.get("name"):
                errs += validate_dns1123_label(port["name"], f"{pat}.name")
            errs += each(f"{pat}.port", port.get("port") or 0, is_valid_port_num(port.get("port") or 0))
            errs += validate_protocol(port.get("protocol"), f"{pat}.protocol")
    return errs


def _slice_address(kind: str, address: str, path: str) -> list[FieldError]:
    if kind == "IPv4":
        return is_valid_ipv4(path, address) + validate_non_special_ip(address, path)
    if kind == "IPv6":
        return is_valid_ipv6(path, address) + validate_non_special_ip(address, path)
    if kind == "FQDN":
        name = address.removesuffix(".")
        if not name:
            return [required(path)]
        problems = is_dns1123_subdomain(name)
        if problems:
            return [invalid(path, name, ",".join(problems))]
        if name.count(".") < 1:
            return [invalid(path, name, "should be a domain with at least two segments separated by dots")]
        for label in name.split("."):
            if is_dns1123_label(label):
                return [invalid(path, label, ",".join(is_dns1123_label(label)))]
    return []


def validate_endpoint_slice(obj: Obj) -> list[FieldError]:
    errs: list[FieldError] = []
    kind = obj.get("addressType")
    if not kind:
        errs.append(required("addressType"))
    elif kind not in ADDRESS_TYPES:
        errs.append(not_supported("addressType", kind, ADDRESS_TYPES))
    endpoints = obj.get("endpoints") or []
    if len(endpoints) > 1000:
        errs.append(too_many("endpoints", len(endpoints), 1000))
        endpoints = []
    for i, endpoint in enumerate(endpoints):
        at = f"endpoints[{i}]"
        addresses = endpoint.get("addresses") or []
        if not addresses:
            errs.append(required(f"{at}.addresses", "must contain at least 1 address"))
        elif len(addresses) > 100:
            errs.append(too_many(f"{at}.addresses", len(addresses), 100))
        for j, address in enumerate(addresses):
            errs += _slice_address(kind or "", address, f"{at}.addresses[{j}]")
        if endpoint.get("nodeName") is not None:
            errs += each(f"{at}.nodeName", endpoint["nodeName"], is_dns1123_subdomain(endpoint["nodeName"]))
        topology = endpoint.get("deprecatedTopology") or {}
        if len(topology) > 16:
            errs.append(too_many(f"{at}.deprecatedTopology", len(topology), 16))
        errs += validate_labels(topology, f"{at}.deprecatedTopology")
        if endpoint.get("zone") is not None:
            errs += validate_qualified_name(endpoint["zone"], f"{at}.zone")
        if endpoint.get("hostname") is not None:
            errs += validate_dns1123_label(endpoint["hostname"], f"{at}.hostname")
    ports = obj.get("ports") or []
    if len(ports) > 20000:
        return errs + [too_many("ports", len(ports), 20000)]
    names: set[str] = set()
    for i, port in enumerate(ports):
        at = f"ports[{i}]"
        name = port.get("name") or ""
        if name:
            errs += validate_dns1123_label(name, f"{at}.name")
        if name in names:
            errs.append(duplicate(f"{at}.name", name))
        names.add(name)
        protocol = port.get("protocol")
        if protocol is not None and protocol not in PROTOCOLS:
            errs.append(not_supported(f"{at}.protocol", protocol, PROTOCOLS))
        if port.get("appProtocol") is not None:
            errs += validate_qualified_name(port["appProtocol"], f"{at}.appProtocol")
    return errs


def validate_endpoint_slice_update(new: Obj, old: Obj) -> list[FieldError]:
    errs = validate_endpoint_slice(new)
    if new.get("addressType") != old.get("addressType"):
        errs.append(invalid("addressType", new.get("addressType") or "", IMMUTABLE))
    return errs


def validate_lease(obj: Obj) -> list[FieldError]:
    spec = obj.get("spec") or {}
    errs: list[FieldError] = []
    duration = spec.get("leaseDurationSeconds")
    if duration is not None and duration <= 0:
        errs.append(invalid("spec.leaseDurationSeconds", duration, "must be greater than 0"))
    transitions = spec.get("leaseTransitions")
    if transitions is not None and transitions < 0:
        errs.append(invalid("spec.leaseTransitions", transitions, "must be greater than or equal to 0"))
    if spec.get("preferredHolder") and not spec.get("strategy"):
        errs.append(forbidden("spec.preferredHolder", "may only be specified if `strategy` is defined"))
    return errs


_EVENT_LIMITS = (("reportingInstance", 128), ("action", 128), ("reason", 128), ("message", 1024))


def _legacy_event(event: Obj, controller_field: str) -> list[FieldError]:
    """The checks every Event create and update passes, whatever the API version."""
    errs: list[FieldError] = []
    namespace = (event.get("metadata") or {}).get("namespace") or ""
    involved = event.get("involvedObject") or {}
    involved_ns = involved.get("namespace") or ""
    if not event.get("eventTime"):
        mismatch = namespace not in ("", "default") if not involved_ns else namespace != involved_ns
    else:
        mismatch = not involved_ns and namespace not in ("default", "kube-system")
        controller = event.get("reportingComponent") or ""
        if not controller:
            errs.append(required(controller_field))
        errs += validate_qualified_name(controller, controller_field)
        for key, limit in _EVENT_LIMITS:
            value = event.get(key) or ""
            if not value and key != "message":
                errs.append(required(key))
            if len(value) > limit:
                errs.append(invalid(key, "", f"can have at most {limit} characters"))
    if mismatch:
        errs.insert(0, invalid("involvedObject.namespace", involved_ns, "does not match event.namespace"))
    return errs + each("namespace", namespace, is_dns1123_subdomain(namespace))


def validate_core_event(obj: Obj) -> list[FieldError]:
    """core/v1 Events: only the legacy checks (no metadata validation), for compatibility."""
    return _legacy_event(obj, "reportingComponent")


def as_core_event(obj: Obj) -> Obj:
    """An events.k8s.io/v1 Event in core field names (validation runs on the shared internal type)."""
    return {"metadata": obj.get("metadata"), "involvedObject": obj.get("regarding") or {}, "message": obj.get("note"),
            "source": obj.get("deprecatedSource") or {}, "firstTimestamp": obj.get("deprecatedFirstTimestamp"),
            "lastTimestamp": obj.get("deprecatedLastTimestamp"), "count": obj.get("deprecatedCount"),
            "eventTime": obj.get("eventTime"), "series": obj.get("series"), "type": obj.get("type"),
            "reason": obj.get("reason"), "action": obj.get("action"),
            "reportingComponent": obj.get("reportingController"), "reportingInstance": obj.get("reportingInstance")}


def _series(event: Obj) -> list[FieldError]:
    series = event.get("series")
    if series is None:
        return []
    errs: list[FieldError] = []
    if (series.get("count") or 0) < 2:
        errs.append(invalid("series.count", "", "should be at least 2"))
    if not series.get("lastObservedTime"):
        errs.append(required("series.lastObservedTime"))
    return errs


def validate_events_v1_event(obj: Obj) -> list[FieldError]:
    """events.k8s.io/v1 Events: legacy checks plus the strict ones of the new API."""
    event = as_core_event(obj)
    errs = _legacy_event(event, "reportingController") + _series(event)
    if not event.get("eventTime"):
        errs.append(required("eventTime"))
    if event.get("type") not in ("Normal", "Warning"):
        errs.append(invalid("type", "", f"has invalid value: {event.get('type') or ''}"))
    for key, source in (("deprecatedFirstTimestamp", "firstTimestamp"), ("deprecatedLastTimestamp", "lastTimestamp"),
                        ("deprecatedCount", "count")):
        if event.get(source):
            errs.append(invalid(key, "", "needs to be unset"))
    if any((event.get("source") or {}).get(k) for k in ("component", "host")):
        errs.append(invalid("deprecatedSource", "", "needs to be unset"))
    return errs


SYSTEM_PRIORITY_CLASSES = {"system-node-critical": 2000001000, "system-cluster-critical": 2000000000}


def validate_priority_class(obj: Obj) -> list[FieldError]:
    name = (obj.get("metadata") or {}).get("name") or ""
    value = obj.get("value") or 0
    errs: list[FieldError] = []
    if name.startswith("system-"):
        if name not in SYSTEM_PRIORITY_CLASSES:
            errs.append(forbidden("metadata.name", "priority class names with 'system-' prefix are reserved for "
                                                   f"system use only. error: {name} is not a known system priority "
                                                   "class"))
        elif value != SYSTEM_PRIORITY_CLASSES[name]:
            errs.append(forbidden("metadata.name", "priority class names with 'system-' prefix are reserved for "
                                                   f"system use only. error: value of {name} PriorityClass must be "
                                                   f"{SYSTEM_PRIORITY_CLASSES[name]}"))
    elif value > 1_000_000_000:
        errs.append(forbidden("value", "maximum allowed value of a user defined priority is 1000000000"))
    policy = obj.get("preemptionPolicy")
    if policy == "":
        errs.append(required("preemptionPolicy"))
    elif policy is not None and policy not in ("PreemptLowerPriority", "Never"):
        errs.append(not_supported("preemptionPolicy", policy, ("PreemptLowerPriority", "Never")))
    return errs


def validate_priority_class_update(new: Obj, old: Obj) -> list[FieldError]:
    """Only metadata may change: value and preemptionPolicy are fixed."""
    errs: list[FieldError] = []
    if new.get("value") != old.get("value"):
        errs.append(forbidden("value", "may not be changed in an update."))
    if new.get("preemptionPolicy") != old.get("preemptionPolicy"):
        errs.append(invalid("preemptionPolicy", new.get("preemptionPolicy"), IMMUTABLE))
    return errs


_ACCESS_MODES = ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")


def validate_persistent_volume_claim(obj: Obj) -> list[FieldError]:
    spec = obj.get("spec") or {}
    errs: list[FieldError] = []
    modes = spec.get("accessModes") or []
    if not modes:
        errs.append(required("spec.accessModes", "at least 1 access mode is required"))
    for mode in modes:
        if mode not in _ACCESS_MODES:
            errs.append(not_supported("spec.accessModes", mode, _ACCESS_MODES))
    if "ReadWriteOncePod" in modes and len(modes) > 1:
        errs.append(forbidden("spec.accessModes", "may not use ReadWriteOncePod with other access modes"))
    storage = ((spec.get("resources") or {}).get("requests") or {}).get("storage")
    if storage is None:
        errs.append(required("spec.resources[storage]"))
    else:
        quantity = parse_quantity(storage)
        if quantity is not None and quantity.value <= 0:
            errs.append(invalid("spec.resources[storage]", str(quantity), "must be greater than zero"))
    mode = spec.get("volumeMode")
    if mode is not None and mode not in ("Block", "Filesystem"):
        errs.append(not_supported("spec.volumeMode", mode, ("Block", "Filesystem")))
    return errs
