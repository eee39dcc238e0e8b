"""Row cells for networking, RBAC, admission, scheduling, coordination, certificates and storage kinds."""

from __future__ import annotations

from typing import Any

from mini_kube.apiserver.printers.formatting import (
    NONE,
    UNSET,
    dig,
    format_selector,
    go_selector_struct,
    with_more,
)
from mini_kube.apiserver.printers.humanize import human_duration, since
from mini_kube.machinery.quantity import canonical

Obj = dict[str, Any]
_DEFAULT_CLASS = ("storageclass.kubernetes.io/is-default-class", "storageclass.beta.kubernetes.io/is-default-class")


def _name(obj: Obj) -> str:
    return dig(obj, "metadata", "name", default="")


def _age(obj: Obj, now: float) -> str:
    return since(dig(obj, "metadata", "creationTimestamp"), now)


def ingress(obj: Obj, now: float) -> list:
    spec = obj.get("spec") or {}
    rules = spec.get("rules") or []
    hosts: list[str] = []
    more = False
    for rule in rules:
        more = more or len(hosts) == 3
        if not more and rule.get("host"):
            hosts.append(rule["host"])
    host_text = ",".join(hosts) or "*"
    if more and hosts:
        host_text = f"{host_text} + {len(rules) - 3} more..."
    points = {i.get("ip") or i.get("hostname") for i in dig(obj, "status", "loadBalancer", "ingress", default=())}
    address = ",".join(sorted(p for p in points if p))
    return [_name(obj), spec.get("ingressClassName") or NONE, host_text, address,
            "80, 443" if spec.get("tls") else "80", _age(obj, now)]


def ingress_class(obj: Obj, now: float) -> list:
    spec = obj.get("spec") or {}
    params = spec.get("parameters")
    text = NONE
    if params is not None:
        text = params.get("kind", "")
        if params.get("apiGroup") is not None:
            text += "." + params["apiGroup"]
        text += "/" + params.get("name", "")
    return [_name(obj), spec.get("controller", ""), text, _age(obj, now)]


def network_policy(obj: Obj, now: float) -> list:
    return [_name(obj), format_selector(dig(obj, "spec", "podSelector", default={})), _age(obj, now)]


def endpoint_slice(obj: Obj, now: float) -> list:
    ports = obj.get("ports") or []
    port_text = []
    for port in ports[:3]:
        if port.get("port") is not None:
            port_text.append(str(port["port"]))
        else:
            port_text.append(port.get("name") if port.get("name") is not None else "*")
    addresses = [a for e in obj.get("endpoints") or () for a in e.get("addresses") or ()]
    return [_name(obj), obj.get("addressType", ""), with_more(port_text, len(ports)),
            with_more(addresses[:3], len(addresses)), _age(obj, now)]


def _subjects(subjects: list[Obj]) -> list[str]:
    users, groups, accounts = [], [], []
    for subject in subjects:
        kind, name = subject.get("kind"), subject.get("name", "")
        if kind == "ServiceAccount":
            accounts.append(f"{subject.get('namespace', '')}/{name}")
        elif kind == "User":
            users.append(name)
        elif kind == "Group":
            groups.append(name)
    return [", ".join(users), ", ".join(groups), ", ".join(accounts)]


def role_binding(obj: Obj, now: float) -> list:
    ref = obj.get("roleRef") or {}
    return [_name(obj), f"{ref.get('kind', '')}/{ref.get('name', '')}", _age(obj, now),
            *_subjects(obj.get("subjects") or [])]


def webhook_configuration(obj: Obj, now: float) -> list:
    return [_name(obj), len(obj.get("webhooks") or ()), _age(obj, now)]


def admission_policy(obj: Obj, now: float) -> list:
    spec = obj.get("spec") or {}
    param = spec.get("paramKind")
    param_text = UNSET if param is None else f"{param.get('apiVersion', '')}/{param.get('kind', '')}"
    return [_name(obj), len(spec.get("validations") or ()), param_text, _age(obj, now)]


def admission_policy_binding(obj: Obj, now: float) -> list:
    spec = obj.get("spec") or {}
    ref = spec.get("paramRef")
    param = UNSET
    if ref is not None:
        if ref.get("name"):
            param = f"{ref.get('namespace') or '*'}/{ref['name']}"
        elif ref.get("selector") is not None:
            param = go_selector_struct(ref["selector"])
    return [_name(obj), spec.get("policyName", ""), param, _age(obj, now)]


def priority_class(obj: Obj, now: float) -> list:
    return [_name(obj), obj.get("value") or 0, bool(obj.get("globalDefault")), _age(obj, now),
            obj.get("preemptionPolicy") or ""]


def runtime_class(obj: Obj, now: float) -> list:
    return [_name(obj), obj.get("handler", ""), _age(obj, now)]


def lease(obj: Obj, now: float) -> list:
    return [_name(obj), dig(obj, "spec", "holderIdentity", default=""), _age(obj, now)]


def _csr_status(status: Obj) -> str:
    kinds = {c.get("type") for c in status.get("conditions") or ()}
    text = "Denied" if "Denied" in kinds else "Approved" if "Approved" in kinds else "Pending"
    if "Failed" in kinds:
        text += ",Failed"
    if status.get("certificate"):
        text += ",Issued"
    return text


def certificate_signing_request(obj: Obj, now: float) -> list:
    spec = obj.get("spec") or {}
    seconds = spec.get("expirationSeconds")
    return [_name(obj), _age(obj, now), spec.get("signerName") or NONE, spec.get("username", ""),
            NONE if seconds is None else human_duration(seconds), _csr_status(obj.get("status") or {})]


def storage_class(obj: Obj, now: float) -> list:
    annotations = dig(obj, "metadata", "annotations", default={})
    name = _name(obj)
    if any(annotations.get(key) == "true" for key in _DEFAULT_CLASS):
        name += " (default)"
    return [name, obj.get("provisioner", ""), obj.get("reclaimPolicy") or "Delete",
            obj.get("volumeBindingMode") or "Immediate", bool(obj.get("allowVolumeExpansion")), _age(obj, now)]


def volume_attachment(obj: Obj, now: float) -> list:
    spec = obj.get("spec") or {}
    return [_name(obj), spec.get("attacher", ""), dig(spec, "source", "persistentVolumeName", default=""),
            spec.get("nodeName", ""), bool(dig(obj, "status", "attached")), _age(obj, now)]


def csi_driver(obj: Obj, now: float) -> list:
    spec = obj.get("spec") or {}
    attach = spec.get("attachRequired")
    tokens = spec.get("tokenRequests")
    token_text = UNSET if tokens is None else ",".join(t.get("audience", "") for t in tokens)
    return [_name(obj), True if attach is None else attach, bool(spec.get("podInfoOnMount")),
            bool(spec.get("storageCapacity")), token_text, bool(spec.get("requiresRepublish")),
            ",".join(spec.get("volumeLifecycleModes") or ()) or NONE, _age(obj, now)]


def csi_node(obj: Obj, now: float) -> list:
    return [_name(obj), len(dig(obj, "spec", "drivers", default=())), _age(obj, now)]


def csi_storage_capacity(obj: Obj, now: float) -> list:
    capacity = obj.get("capacity")
    return [_name(obj), obj.get("storageClassName", ""), UNSET if capacity is None else canonical(capacity)]
