"""AppArmor, as the kubelet's AppArmor admit handler decides it (pkg/kubelet/lifecycle, pkg/security/apparmor): a
Pending Pod that asks for a profile other than `Unconfined` (its own or a container's `appArmorProfile`, or the
deprecated `container.apparmor.security.beta.kubernetes.io/` annotations) needs a host that can enforce it;
where none can be, the Pod is rejected (reason `AppArmor`, `Cannot enforce AppArmor: ...`) rather than run
unconfined. On a host without AppArmor that is upstream's answer word for word. mini-kube's runtimes load and
apply no profile, so where the kernel has AppArmor they say so, the same way, instead of running the Pod without
the profile it asked for. SELinux options need no handler: like a runtime on a host without SELinux, the
kubelet ignores them."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

REASON = "AppArmor"  # upstream's AppArmorNotAdmittedReason
ANNOTATION_PREFIX = "container.apparmor.security.beta.kubernetes.io/"
UNCONFINED_ANNOTATION = "unconfined"


@functools.cache
def host_problem() -> str:
    """Why this host cannot enforce AppArmor profiles for mini-kube's runtimes."""
    enabled = Path("/sys/module/apparmor/parameters/enabled")
    try:
        on = Path("/sys/kernel/security/apparmor").exists() and enabled.read_text().startswith("Y")
    except OSError:
        on = False
    if not on:
        return "AppArmor is not enabled on the host"  # upstream's validateHost, as libcontainer checks it
    return "the node's runtime does not apply AppArmor profiles"


def _containers(spec: dict[str, Any]) -> list[dict[str, Any]]:
    return [*(spec.get("initContainers") or ()), *(spec.get("containers") or ()),
            *(spec.get("ephemeralContainers") or ())]


def required(pod: dict[str, Any]) -> bool:
    """Whether the Pod asks for any profile but `Unconfined` (upstream's isRequired)."""
    spec = pod.get("spec") or {}
    contexts = [spec.get("securityContext") or {}, *(c.get("securityContext") or {} for c in _containers(spec))]
    if any((context.get("appArmorProfile") or {}).get("type", "Unconfined") != "Unconfined" for context in contexts):
        return True
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    return any(key.startswith(ANNOTATION_PREFIX) and value != UNCONFINED_ANNOTATION
               for key, value in annotations.items())


def refusal(pod: dict[str, Any]) -> tuple[str, str] | None:
    """(reason, message) when the Pod cannot be admitted for its AppArmor profiles, else None; only a Pending
    Pod is checked, as upstream (one already running keeps running)."""
    if ((pod.get("status") or {}).get("phase") or "Pending") != "Pending" or not required(pod):
        return None
    return REASON, f"Cannot enforce AppArmor: {host_problem()}"
