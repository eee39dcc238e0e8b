"""A container's identity and privileges from its Pod's and its own `securityContext`, as upstream's kubelet
resolves them (DetermineEffectiveSecurityContext) and containerd applies them: the user and groups, the
capabilities (containerd's default set, plus `add`, minus `drop`; `privileged` gets every one), no_new_privs
when `allowPrivilegeEscalation: false`, a read-only root. There are no images: every image's user is root (uid
0, as for most images), so `runAsNonRoot` without a non-zero `runAsUser` is refused as upstream refuses it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .imagestore.users import ImageUser, additional_gids, primary_gid
from .seccomp import SeccompError, container_profile

# containerd's (and Docker's) default capabilities, in the kernel's numbering
DEFAULT_CAPABILITIES = ("CHOWN", "DAC_OVERRIDE", "FSETID", "FOWNER", "MKNOD", "NET_RAW", "SETGID", "SETUID",
                        "SETFCAP", "SETPCAP", "NET_BIND_SERVICE", "SYS_CHROOT", "KILL", "AUDIT_WRITE")
CAPABILITIES = ("CHOWN", "DAC_OVERRIDE", "DAC_READ_SEARCH", "FOWNER", "FSETID", "KILL", "SETGID", "SETUID",
                "SETPCAP", "LINUX_IMMUTABLE", "NET_BIND_SERVICE", "NET_BROADCAST", "NET_ADMIN", "NET_RAW",
                "IPC_LOCK", "IPC_OWNER", "SYS_MODULE", "SYS_RAWIO", "SYS_CHROOT", "SYS_PTRACE", "SYS_PACCT",
                "SYS_ADMIN", "SYS_BOOT", "SYS_NICE", "SYS_RESOURCE", "SYS_TIME", "SYS_TTY_CONFIG", "MKNOD", "LEASE",
                "AUDIT_WRITE", "AUDIT_CONTROL", "SETFCAP", "MAC_OVERRIDE", "MAC_ADMIN", "SYSLOG", "WAKE_ALARM",
                "BLOCK_SUSPEND", "AUDIT_READ", "PERFMON", "BPF", "CHECKPOINT_RESTORE")
IMAGE_UID = 0  # the user every image runs as


class SecurityError(Exception):
    """A container its security context forbids to start: CreateContainerConfigError, as upstream, or the
    `reason` given (CreateContainerError where the runtime is what refuses)."""

    def __init__(self, message: str, reason: str = "CreateContainerConfigError") -> None:
        super().__init__(message)
        self.reason = reason


def _cap_name(name: str) -> str:
    return name.upper().removeprefix("CAP_")


def capabilities(context: dict[str, Any]) -> list[str]:
    """The container's capability set, by name (without `CAP_`), in the kernel's order."""
    if context.get("privileged"):
        return list(CAPABILITIES)
    caps = context.get("capabilities") or {}
    added = {_cap_name(c) for c in caps.get("add") or ()}
    dropped = {_cap_name(c) for c in caps.get("drop") or ()}
    wanted = set(DEFAULT_CAPABILITIES)  # as containerd: ALL added, ALL dropped, then each added, each dropped
    if "ALL" in added:
        wanted = set(CAPABILITIES)
    if "ALL" in dropped:
        wanted = set()
    wanted = (wanted | added) - dropped
    return [c for c in CAPABILITIES if c in wanted]


def effective(pod: dict[str, Any], container: dict[str, Any]) -> dict[str, Any]:
    """The container's securityContext over the Pod's (the fields both have)."""
    pod_context = (pod.get("spec") or {}).get("securityContext") or {}
    own = container.get("securityContext") or {}
    merged = {k: pod_context[k] for k in ("runAsUser", "runAsGroup", "runAsNonRoot", "seLinuxOptions",
                                         "seccompProfile", "appArmorProfile", "windowsOptions") if k in pod_context}
    merged.update({k: v for k, v in own.items() if v is not None})
    return merged


def pod_format(pod: dict[str, Any]) -> str:
    """format.Pod: `name_namespace(uid)`."""
    meta = pod.get("metadata") or {}
    return f"{meta.get('name', '')}_{meta.get('namespace', '')}({meta.get('uid', '')})"


def container_security(pod: dict[str, Any], container: dict[str, Any],
                       image: ImageUser | None = None, *, seccomp_root: Path | None = None) -> dict[str, Any]:
    """What the container's init applies before it execs the command: uid, gid, groups, capability names,
    noNewPrivs, privileged, readOnlyRoot, and the seccomp profile (a JSON object, absent when unconfined;
    Localhost profiles are read under `seccomp_root`). `image`: the user a mapped or loaded image runs as (else
    root, with the host's /etc/passwd). SecurityError when runAsNonRoot cannot be met or the profile cannot be
    read."""
    context = effective(pod, container)
    pod_context = (pod.get("spec") or {}).get("securityContext") or {}
    name = container.get("name", "")
    uid = context.get("runAsUser")
    image_uid = IMAGE_UID if image is None else image.uid
    if context.get("runAsNonRoot"):
        if uid == 0:
            raise SecurityError(f"container's runAsUser breaks non-root policy (pod: \"{pod_format(pod)}\", "
                                f"container: {name})")
        if uid is None and image_uid == 0:
            raise SecurityError(f"container has runAsNonRoot and image will run as root (pod: \"{pod_format(pod)}\", "
                                f"container: {name})")
        if uid is None and image is not None and image.uid is None:
            raise SecurityError(f"container has runAsNonRoot and image has non-numeric user ({image.name}), cannot "
                                f"verify user is non-root (pod: \"{pod_format(pod)}\", container: {name})")
    passwd = "/etc/passwd" if image is None else image.passwd
    if uid is None and image is not None:
        uid = image.run_uid
        gid = context.get("runAsGroup", image.gid)
    else:
        uid = IMAGE_UID if uid is None else int(uid)
        gid = context.get("runAsGroup")
    gid = primary_gid(uid, passwd) if gid is None else int(gid)
    groups = [gid]
    # the image's memberships of the user (containerd's WithAdditionalGIDs), unless supplementalGroupsPolicy
    # is Strict; then fsGroup and supplementalGroups, as the kubelet passes them
    if pod_context.get("supplementalGroupsPolicy") != "Strict":
        groups += additional_gids(uid, passwd, "/etc/group" if image is None else image.group)
    for extra in [*([pod_context["fsGroup"]] if pod_context.get("fsGroup") is not None else []),
                  *(pod_context.get("supplementalGroups") or ())]:
        groups.append(int(extra))
    groups = list(dict.fromkeys(groups))
    allow = context.get("allowPrivilegeEscalation")
    privileged = bool(context.get("privileged"))
    security = {"uid": uid, "gid": gid, "groups": groups, "capabilities": capabilities(context),
                "noNewPrivs": allow is False, "privileged": privileged,
                "readOnlyRoot": bool(context.get("readOnlyRootFilesystem")),
                "unmaskedProc": context.get("procMount") == "Unmasked"}  # (validation: only with hostUsers false)
    try:  # privileged containers run unconfined, as containerd runs them
        profile = None if privileged else container_profile(context.get("seccompProfile"), seccomp_root)
    except SeccompError as exc:
        raise SecurityError(f"failed to create containerd container: {exc}", "CreateContainerError") from None
    if profile is not None:
        security["seccomp"] = profile
    return security

