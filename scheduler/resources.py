"""Resource quantities and what a Pod asks for, as the scheduler counts them (NodeResourcesFit).

cpu is counted in millicores, everything else in whole units (bytes for memory and storage), rounded up as
apimachinery's `MilliValue`/`Value` do. A Pod's request is the larger of its running containers' sum (sidecar
init containers included) and what any init container needs while it runs, plus the Pod overhead.
"""

from __future__ import annotations

from typing import Any

from mini_kube.machinery.quantity import decimal_value, scaled_value

CPU, MEMORY, STORAGE, PODS = "cpu", "memory", "ephemeral-storage", "pods"
NON_ZERO_CPU = 100  # millicores a container without a cpu request counts as when scoring (upstream's default)
NON_ZERO_MEMORY = 200 * 2**20
Resources = dict[str, int]


def amount(name: str, text: Any) -> int:
    """How the scheduler counts `text` of resource `name`: millicores for cpu, whole units otherwise (0 when it
    cannot be read)."""
    try:
        value = decimal_value(text)
    except ValueError:
        return 0
    return scaled_value(value, 3 if name == CPU else 0)


def resource_list(values: dict[str, Any] | None) -> Resources:
    return {name: amount(name, text) for name, text in (values or {}).items()}


def _add(total: Resources, more: Resources) -> None:
    for name, value in more.items():
        total[name] = total.get(name, 0) + value


def _max(total: Resources, other: Resources) -> None:
    for name, value in other.items():
        if value > total.get(name, 0):
            total[name] = value


def _requests(container: dict[str, Any], non_zero: bool) -> Resources:
    requests = resource_list((container.get("resources") or {}).get("requests"))
    if non_zero:
        requests.setdefault(CPU, NON_ZERO_CPU)
        requests.setdefault(MEMORY, NON_ZERO_MEMORY)
    return requests


def pod_requests(pod: dict[str, Any], non_zero: bool = False) -> Resources:
    """The Pod's effective request; `non_zero` counts unset cpu/memory as upstream's scoring defaults."""
    spec = pod.get("spec") or {}
    running: Resources = {}
    for container in spec.get("containers") or ():
        _add(running, _requests(container, non_zero))
    init_peak: Resources = {}
    sidecars: Resources = {}
    for container in spec.get("initContainers") or ():
        requests = _requests(container, non_zero)
        if container.get("restartPolicy") == "Always":  # a sidecar: runs on with the app containers
            _add(sidecars, requests)
            _add(running, requests)
            _max(init_peak, sidecars)
        else:
            during = dict(sidecars)
            _add(during, requests)
            _max(init_peak, during)
    _max(running, init_peak)
    _add(running, resource_list(spec.get("overhead")))
    return running


def allocatable(node: dict[str, Any]) -> Resources:
    status = node.get("status") or {}
    return resource_list(status.get("allocatable") or status.get("capacity"))
