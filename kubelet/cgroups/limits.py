"""What a Pod's and a container's cgroups are set to, as upstream's kubelet computes it (pkg/kubelet/cm,
helpers_linux.go): cpu requests become shares (1024 per cpu, at least 2), cpu limits a CFS quota per 100 ms period
(at least 1 ms), memory limits a byte limit; a Pod's cgroup gets the sum over its containers (or its largest init
container, when bigger), a quota and a memory limit only when every container has one, and BestEffort Pods get
the minimum shares. QoS classes follow upstream's ComputePodQOS."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mini_kube.machinery.quantity import decimal_value, scaled_value

PERIOD_US = 100_000
MIN_SHARES, MAX_SHARES, SHARES_PER_CPU = 2, 262_144, 1024
MIN_QUOTA_US = 1_000
QOS = ("cpu", "memory")


@dataclass(frozen=True)
class Limits:
    """Settings for one cgroup; None leaves the kernel's default (unlimited, 1024 shares)."""

    memory: int | None = None  # bytes
    cpu_quota: int | None = None  # microseconds per PERIOD_US
    cpu_shares: int | None = None
    pids: int | None = None
    oom_group: bool = False  # cgroup v2: an OOM kill takes every process of the cgroup


def milli_cpu_to_shares(milli: int) -> int:
    if milli <= 0:
        return MIN_SHARES
    return max(MIN_SHARES, min(MAX_SHARES, milli * SHARES_PER_CPU // 1000))


def milli_cpu_to_quota(milli: int) -> int | None:
    if milli <= 0:
        return None
    return max(MIN_QUOTA_US, milli * PERIOD_US // 1000)


def shares_to_weight(shares: int) -> int:
    """cgroup v2's cpu.weight (1-10000) for v1 shares (2-262144), as runc converts them."""
    return 1 + (max(MIN_SHARES, min(MAX_SHARES, shares)) - 2) * 9999 // 262_142


def _amount(values: dict[str, Any] | None, name: str) -> int:
    """cpu in millicores, memory in bytes (rounded up, as MilliValue/Value do); 0 when absent or unreadable."""
    text = (values or {}).get(name)
    if text is None:
        return 0
    try:
        value = decimal_value(text)
    except ValueError:
        return 0
    return scaled_value(value, 3 if name == "cpu" else 0)


def container_limits(resources: dict[str, Any] | None) -> Limits:
    """A container's cgroup: shares from its cpu request (its limit when only that is set), quota, memory."""
    requests, limits = (resources or {}).get("requests"), (resources or {}).get("limits")
    cpu_request, cpu_limit = _amount(requests, "cpu"), _amount(limits, "cpu")
    shares = milli_cpu_to_shares(cpu_limit if not cpu_request and cpu_limit else cpu_request)
    memory = _amount(limits, "memory")
    return Limits(memory=memory or None, cpu_quota=milli_cpu_to_quota(cpu_limit), cpu_shares=shares,
                  oom_group=True)


def _pod_total(spec: dict[str, Any], kind: str, name: str) -> tuple[int, bool]:
    """The Pod's total of `kind` (requests/limits) of `name`, and whether every container sets it."""
    containers = spec.get("containers") or []
    every = all(_amount((c.get("resources") or {}).get(kind), name) for c in containers)
    total = sum(_amount((c.get("resources") or {}).get(kind), name) for c in containers)
    for init in spec.get("initContainers") or ():
        value = _amount((init.get("resources") or {}).get(kind), name)
        every = every and bool(value)
        total = max(total, value)
    return total, every


def pod_limits(pod: dict[str, Any], pids: int | None = None) -> Limits:
    """A Pod's cgroup (ResourceConfigForPod), with `pids` the node's podPidsLimit (None: unlimited)."""
    spec = pod.get("spec") or {}
    if qos_class(pod) == "BestEffort":
        return Limits(cpu_shares=MIN_SHARES, pids=pids)
    cpu_request, _ = _pod_total(spec, "requests", "cpu")
    cpu_limit, cpu_everywhere = _pod_total(spec, "limits", "cpu")
    memory, memory_everywhere = _pod_total(spec, "limits", "memory")
    return Limits(memory=memory if memory_everywhere else None,
                  cpu_quota=milli_cpu_to_quota(cpu_limit) if cpu_everywhere else None,
                  cpu_shares=milli_cpu_to_shares(cpu_request), pids=pids)


def node_limits(allocatable: dict[str, Any], pod_pids: int | None = None) -> Limits:
    """The `kubepods` cgroup, which holds every Pod of the node, as upstream's node allocatable enforcement sets
    it: memory limited to the node's allocatable memory, cpu shares from its allocatable cpu; processes limited
    to `pod_pids` (the per-Pod limit) times the Pods the node may run."""
    memory, cpu = _amount(allocatable, "memory"), _amount(allocatable, "cpu")
    pods = _amount(allocatable, "pods")
    return Limits(memory=memory or None, cpu_shares=milli_cpu_to_shares(cpu) if cpu else None,
                  pids=pod_pids * pods if pod_pids and pods else None)


def qos_class(pod: dict[str, Any]) -> str:
    """status.qosClass as the API server set it, else computed the same way."""
    known = (pod.get("status") or {}).get("qosClass")
    if known in ("Guaranteed", "Burstable", "BestEffort"):
        return known
    spec = pod.get("spec") or {}
    requests: dict[str, int] = {}
    limits: dict[str, int] = {}
    guaranteed = True
    for container in [*(spec.get("containers") or ()), *(spec.get("initContainers") or ())]:
        resources = container.get("resources") or {}
        for kind, total in (("requests", requests), ("limits", limits)):
            for name in QOS:
                value = _amount(resources.get(kind), name)
                if value > 0:
                    total[name] = total.get(name, 0) + value
        if not all(_amount(resources.get("limits"), name) > 0 for name in QOS):
            guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    if guaranteed and all(limits.get(name) == value for name, value in requests.items()) \
            and len(requests) == len(limits):
        return "Guaranteed"
    return "Burstable"
