"""A Pod's `securityContext.sysctls`, as the kubelet admits them (pkg/kubelet/sysctl): only the safe set (no
--allowed-unsafe-sysctls here), and none of a namespace the Pod shares with the node; a Pod asking for another is
rejected (reason `SysctlForbidden`, `forbidden sysctl: "kernel.msgmax" not allowlisted`). The runtime sets the
admitted ones in the Pod's own namespaces when it makes its sandbox (runtime/process.py)."""

from __future__ import annotations

from typing import Any

from mini_kube.machinery.sysctls import SAFE_SYSCTLS, namespace_of, normalize_name

REASON = "SysctlForbidden"  # upstream's sysctl.ForbiddenReason
HOST_FLAGS = {"Net": "hostNetwork", "IPC": "hostIPC"}


def pod_sysctls(pod: dict[str, Any]) -> list[tuple[str, str]]:
    """The Pod's sysctls: (name, value)."""
    context = (pod.get("spec") or {}).get("securityContext") or {}
    return [(str(s.get("name", "")), str(s.get("value", ""))) for s in context.get("sysctls") or ()]


def _problem(name: str, spec: dict[str, Any]) -> str | None:
    name = normalize_name(name)
    if name not in SAFE_SYSCTLS:
        return f'"{name}" not allowlisted'
    namespace = namespace_of(name)
    if namespace in HOST_FLAGS and spec.get(HOST_FLAGS[namespace]):
        return f'"{name}" not allowed with host {namespace} enabled'
    return None


def refusal(pod: dict[str, Any]) -> tuple[str, str] | None:
    """(reason, message) when the kubelet must not run the Pod for its sysctls, else None."""
    spec = pod.get("spec") or {}
    for name, _ in pod_sysctls(pod):
        problem = _problem(name, spec)
        if problem is not None:
            return REASON, f"forbidden sysctl: {problem}"
    return None
