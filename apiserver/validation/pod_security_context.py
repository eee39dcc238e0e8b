"""A PodSpec's `securityContext`, as upstream's validatePodSpecSecurityContext checks it.

Upstream's internal PodSecurityContext also holds the spec's host namespaces and `shareProcessNamespace`, so
errors about those are reported under `securityContext` too. User and group IDs in range,
`shareProcessNamespace` not with `hostPID`, `fsGroupChangePolicy` one of its
values, and sysctls: well-formed names (dots or slashes between segments), no duplicates, and no sysctl of a
namespace the Pod shares with the host (`net.*` with `hostNetwork`, IPC ones with `hostIPC`).
"""

from __future__ import annotations

import re
from typing import Any

from mini_kube.apiserver.validation.errs import FieldError, duplicate, invalid, not_supported, required
from mini_kube.machinery.names import inclusive_range_error
from mini_kube.machinery.sysctls import namespace_of

Obj = dict[str, Any]
MAX_ID = 2**31 - 1
SYSCTL_SEGMENT = "[a-z0-9]([-_a-z0-9]*[a-z0-9])?"
SYSCTL_NAME = re.compile(f"^({SYSCTL_SEGMENT}[\\./])*{SYSCTL_SEGMENT}$")
SYSCTL_MAX_LENGTH = 253
FS_GROUP_CHANGE_POLICIES = ("Always", "OnRootMismatch")


def is_valid_sysctl_name(name: str) -> bool:
    return len(name) <= SYSCTL_MAX_LENGTH and SYSCTL_NAME.match(name) is not None


def _id(value: Any, path: str) -> list[FieldError]:
    if value is None or (isinstance(value, int) and 0 <= value <= MAX_ID):
        return []
    return [invalid(path, value, inclusive_range_error(0, MAX_ID))]


def _sysctls(sysctls: list[Obj], spec: Obj, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, sysctl in enumerate(sysctls):
        at = f"{path}[{i}].name"
        name = str(sysctl.get("name") or "")
        if not name:
            errs.append(required(at))
        elif not is_valid_sysctl_name(name):
            errs.append(invalid(at, name, f"must have at most {SYSCTL_MAX_LENGTH} characters and match regex "
                                          f"{SYSCTL_NAME.pattern}"))
        elif name in seen:
            errs.append(duplicate(at, name))
        namespace = namespace_of(name)
        if spec.get("hostNetwork") and namespace == "Net":
            errs.append(invalid(at, name, "may not be specified when 'hostNetwork' is true"))
        elif spec.get("hostIPC") and namespace == "IPC":
            errs.append(invalid(at, name, "may not be specified when 'hostIPC' is true"))
        seen.add(name)
    return errs


def validate_pod_security_context(spec: Obj, path: str) -> list[FieldError]:
    """The errors in `spec.securityContext` (path is the spec's own path)."""
    context = spec.get("securityContext")
    if not isinstance(context, dict):
        return []
    at = f"{path}.securityContext"
    errs = _id(context.get("fsGroup"), f"{at}.fsGroup")
    errs += _id(context.get("runAsUser"), f"{at}.runAsUser")
    errs += _id(context.get("runAsGroup"), f"{at}.runAsGroup")
    for i, gid in enumerate(context.get("supplementalGroups") or ()):
        errs += _id(gid, f"{at}.supplementalGroups[{i}]")
    if spec.get("shareProcessNamespace") and spec.get("hostPID"):
        errs.append(invalid(f"{at}.shareProcessNamespace", True,
                            "ShareProcessNamespace and HostPID cannot both be enabled"))
    if context.get("sysctls"):
        errs += _sysctls(context["sysctls"], spec, f"{at}.sysctls")
    policy = context.get("fsGroupChangePolicy")
    if policy is not None and policy not in FS_GROUP_CHANGE_POLICIES:
        errs.append(not_supported(f"{at}.fsGroupChangePolicy", policy, FS_GROUP_CHANGE_POLICIES))
    return errs
