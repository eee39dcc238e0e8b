"""The Pod Security Standards checks (k8s.io/pod-security-admission/policy/check_*.go), on Pods as JSON dicts.

Each check takes the Pod's (or template's) metadata and spec and returns None when the Pod passes, or a
Violation: the short reason and the detail upstream prints after it in parentheses. Wording, order and
pluralisation are upstream's, so messages read exactly as a real cluster's.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

Obj = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Violation:
    reason: str
    detail: str = ""


CheckFn = Callable[[Obj, Obj], Violation | None]


# -- helpers -------------------------------------------------------------------------------------------------
def containers(spec: Obj) -> Iterator[Obj]:
    """Init containers, containers, then ephemeral containers (upstream's visitContainers order)."""
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for container in spec.get(key) or ():
            if isinstance(container, dict):
                yield container


def _sc(holder: Obj) -> Obj:
    value = holder.get("securityContext")
    return value if isinstance(value, dict) else {}


def _obj(value: Any) -> Obj | None:
    return value if isinstance(value, dict) else None


def join_quote(items: list[str]) -> str:
    return '"' + '", "'.join(items) + '"' if items else ""


def pluralize(singular: str, plural: str, count: int) -> str:
    return singular if count == 1 else plural


def go_quote(value: str) -> str:
    """Go's %q for ordinary strings."""
    return json.dumps(value, ensure_ascii=False)


def _containers_phrase(names: list[str]) -> str:
    return f"{pluralize('container', 'containers', len(names))} {join_quote(names)}"


def _windows(spec: Obj) -> bool:
    return (_obj(spec.get("os")) or {}).get("name") == "windows"


def _name(container: Obj) -> str:
    return str(container.get("name", ""))


# -- baseline ------------------------------------------------------------------------------------------------
APPARMOR_ANNOTATION_PREFIX = "container.apparmor.security.beta.kubernetes.io/"


def app_armor_profile(meta: Obj, spec: Obj) -> Violation | None:
    def allowed_type(profile: Obj) -> bool:
        return profile.get("type") in ("RuntimeDefault", "Localhost")

    setters: list[str] = []
    bad_values: set[str] = set()
    pod_profile = _obj(_sc(spec).get("appArmorProfile"))
    if pod_profile is not None and not allowed_type(pod_profile):
        setters.append("pod")
        bad_values.add(str(pod_profile.get("type") or ""))
    bad_containers = []
    for c in containers(spec):
        profile = _obj(_sc(c).get("appArmorProfile"))
        if profile is not None and not allowed_type(profile):
            bad_containers.append(_name(c))
            bad_values.add(str(profile.get("type") or ""))
    if bad_containers:
        setters.append(_containers_phrase(bad_containers))
    values = sorted(bad_values)
    annotations = sorted(f"{k}={go_quote(v)}" for k, v in (meta.get("annotations") or {}).items()
                         if k.startswith(APPARMOR_ANNOTATION_PREFIX) and isinstance(v, str)
                         and not (v in ("", "runtime/default") or v.startswith("localhost/")))
    if annotations:
        values += annotations
        setters.append(pluralize("annotation", "annotations", len(annotations)))
    if not setters:
        return None
    return Violation(pluralize("forbidden AppArmor profile", "forbidden AppArmor profiles", len(values)),
                     f"{' and '.join(setters)} must not set AppArmor profile type to {join_quote(values)}")


BASELINE_CAPABILITIES = frozenset(("AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
                                   "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT"))


def capabilities_baseline(meta: Obj, spec: Obj) -> Violation | None:
    bad_containers, bad_caps = [], set()
    for c in containers(spec):
        caps = _obj(_sc(c).get("capabilities"))
        if caps is None:
            continue
        added = [str(cap) for cap in caps.get("add") or () if str(cap) not in BASELINE_CAPABILITIES]
        if added:
            bad_containers.append(_name(c))
            bad_caps.update(added)
    if not bad_containers:
        return None
    return Violation("non-default capabilities", f"{_containers_phrase(bad_containers)} must not include "
                     f"{join_quote(sorted(bad_caps))} in securityContext.capabilities.add")


def host_namespaces(meta: Obj, spec: Obj) -> Violation | None:
    used = [f"{key}=true" for key in ("hostNetwork", "hostPID", "hostIPC") if spec.get(key) is True]
    return Violation("host namespaces", ", ".join(used)) if used else None


def host_path_volumes(meta: Obj, spec: Obj) -> Violation | None:
    names = [str(v.get("name", "")) for v in spec.get("volumes") or () if isinstance(v, dict)
             and v.get("hostPath") is not None]
    if not names:
        return None
    return Violation("hostPath volumes", f"{pluralize('volume', 'volumes', len(names))} {join_quote(names)}")


def host_ports(meta: Obj, spec: Obj) -> Violation | None:
    bad_containers: list[str] = []
    ports: set[str] = set()
    for c in containers(spec):
        used = [p.get("hostPort") for p in c.get("ports") or () if isinstance(p, dict) and p.get("hostPort")]
        if used:
            bad_containers.append(_name(c))
            ports.update(str(p) for p in used)
    if not bad_containers:
        return None
    n = len(bad_containers)
    return Violation("hostPort", f"{_containers_phrase(bad_containers)} {pluralize('uses', 'use', n)} "
                     f"{pluralize('hostPort', 'hostPorts', len(ports))} {', '.join(sorted(ports))}")


def privileged(meta: Obj, spec: Obj) -> Violation | None:
    bad = [_name(c) for c in containers(spec) if _sc(c).get("privileged") is True]
    if not bad:
        return None
    return Violation("privileged", f"{_containers_phrase(bad)} must not set securityContext.privileged=true")


def proc_mount(meta: Obj, spec: Obj) -> Violation | None:
    bad, types = [], set()
    for c in containers(spec):
        value = _sc(c).get("procMount")
        if value is not None and value != "Default":
            bad.append(_name(c))
            types.add(str(value))
    if not bad:
        return None
    return Violation("procMount", f"{_containers_phrase(bad)} must not set securityContext.procMount to "
                     f"{join_quote(sorted(types))}")


SELINUX_TYPES_1_0 = frozenset(("", "container_t", "container_init_t", "container_kvm_t"))
SELINUX_TYPES_1_31 = SELINUX_TYPES_1_0 | {"container_engine_t"}


def se_linux_options(allowed: frozenset[str]) -> CheckFn:
    def check(meta: Obj, spec: Obj) -> Violation | None:
        bad_types: set[str] = set()
        flags = {"user": False, "role": False}

        def valid(opts: Obj) -> bool:
            ok = True
            kind = str(opts.get("type") or "")
            if kind not in allowed:
                ok = False
                bad_types.add(kind)
            for key in ("user", "role"):
                if opts.get(key):
                    ok, flags[key] = False, True
            return ok

        setters = []
        pod_opts = _obj(_sc(spec).get("seLinuxOptions"))
        if pod_opts is not None and not valid(pod_opts):
            setters.append("pod")
        bad = [_name(c) for c in containers(spec)
               if (opts := _obj(_sc(c).get("seLinuxOptions"))) is not None and not valid(opts)]
        if bad:
            setters.append(_containers_phrase(bad))
        if not setters:
            return None
        data = []
        if bad_types:
            data.append(f"{pluralize('type', 'types', len(bad_types))} {join_quote(sorted(bad_types))}")
        data += [f"{key} may not be set" for key in ("user", "role") if flags[key]]
        return Violation("seLinuxOptions", f"{' and '.join(setters)} set forbidden "
                         f"securityContext.seLinuxOptions: {'; '.join(data)}")

    return check


SECCOMP_POD_ANNOTATION = "seccomp.security.alpha.kubernetes.io/pod"
SECCOMP_CONTAINER_ANNOTATION_PREFIX = "container.seccomp.security.alpha.kubernetes.io/"


def _valid_seccomp(profile: Obj) -> bool:
    return profile.get("type") in ("Localhost", "RuntimeDefault")


def seccomp_profile_baseline_1_0(meta: Obj, spec: Obj) -> Violation | None:
    annotations = meta.get("annotations") or {}

    def bad(value: Any) -> bool:
        return not (value in ("runtime/default", "docker/default") or str(value).startswith("localhost/"))

    keys = [SECCOMP_POD_ANNOTATION] + [SECCOMP_CONTAINER_ANNOTATION_PREFIX + _name(c) for c in containers(spec)]
    found = sorted({f"{k}={go_quote(str(annotations[k]))}" for k in keys if k in annotations and bad(annotations[k])})
    if not found:
        return None
    return Violation("seccompProfile", f"forbidden {pluralize('annotation', 'annotations', len(found))} "
                     f"{', '.join(found)}")


def _seccomp_fields(spec: Obj, require: bool) -> Violation | None:
    """The 1.19 seccompProfile field checks: bad types always; with `require`, an unset profile too."""
    setters, bad_values = [], set()
    pod_set = False
    pod_profile = _obj(_sc(spec).get("seccompProfile"))
    if pod_profile is not None:
        if not _valid_seccomp(pod_profile):
            setters.append("pod")
            bad_values.add(str(pod_profile.get("type") or ""))
        else:
            pod_set = True
    explicit, implicit = [], []
    for c in containers(spec):
        profile = _obj(_sc(c).get("seccompProfile"))
        if profile is not None:
            if not _valid_seccomp(profile):
                explicit.append(_name(c))
                bad_values.add(str(profile.get("type") or ""))
        elif not pod_set:
            implicit.append(_name(c))
    if explicit:
        setters.append(_containers_phrase(explicit))
    if setters:
        return Violation("seccompProfile", f"{' and '.join(setters)} must not set securityContext.seccompProfile."
                         f"type to {join_quote(sorted(bad_values))}")
    if require and implicit:
        return Violation("seccompProfile", f"pod or {_containers_phrase(implicit)} must set securityContext."
                         'seccompProfile.type to "RuntimeDefault" or "Localhost"')
    return None


def seccomp_profile_baseline_1_19(meta: Obj, spec: Obj) -> Violation | None:
    return _seccomp_fields(spec, require=False)


SYSCTLS_1_0 = frozenset(("kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.tcp_syncookies",
                         "net.ipv4.ping_group_range", "net.ipv4.ip_unprivileged_port_start"))
SYSCTLS_1_27 = SYSCTLS_1_0 | {"net.ipv4.ip_local_reserved_ports"}
SYSCTLS_1_29 = SYSCTLS_1_27 | {"net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout",
                               "net.ipv4.tcp_keepalive_intvl", "net.ipv4.tcp_keepalive_probes"}
SYSCTLS_1_32 = SYSCTLS_1_29 | {"net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem"}


def sysctls(allowed: frozenset[str]) -> CheckFn:
    def check(meta: Obj, spec: Obj) -> Violation | None:
        bad = [str(s.get("name", "")) for s in _sc(spec).get("sysctls") or ()
               if isinstance(s, dict) and s.get("name") not in allowed]
        return Violation("forbidden sysctls", ", ".join(bad)) if bad else None

    return check


def windows_host_process(meta: Obj, spec: Obj) -> Violation | None:
    def host_process(holder: Obj) -> bool:
        return (_obj(_sc(holder).get("windowsOptions")) or {}).get("hostProcess") is True

    setters = ["pod"] if host_process(spec) else []
    bad = [_name(c) for c in containers(spec) if host_process(c)]
    if bad:
        setters.append(_containers_phrase(bad))
    if not setters:
        return None
    return Violation("hostProcess", f"{' and '.join(setters)} must not set "
                     "securityContext.windowsOptions.hostProcess=true")


# -- restricted ----------------------------------------------------------------------------------------------
def allow_privilege_escalation_1_8(meta: Obj, spec: Obj) -> Violation | None:
    bad = [_name(c) for c in containers(spec) if _sc(c).get("allowPrivilegeEscalation") is not False]
    if not bad:
        return None
    return Violation("allowPrivilegeEscalation != false",
                     f"{_containers_phrase(bad)} must set securityContext.allowPrivilegeEscalation=false")


def capabilities_restricted_1_22(meta: Obj, spec: Obj) -> Violation | None:
    missing_drop, adding, forbidden = [], [], set()
    for c in containers(spec):
        caps = _obj(_sc(c).get("capabilities"))
        if caps is None:
            missing_drop.append(_name(c))
            continue
        if "ALL" not in (caps.get("drop") or ()):
            missing_drop.append(_name(c))
        added = [str(cap) for cap in caps.get("add") or () if cap != "NET_BIND_SERVICE"]
        if added:
            adding.append(_name(c))
            forbidden.update(added)
    details = []
    if missing_drop:
        details.append(f'{_containers_phrase(missing_drop)} must set securityContext.capabilities.drop=["ALL"]')
    if adding:
        details.append(f"{_containers_phrase(adding)} must not include {join_quote(sorted(forbidden))} in "
                       "securityContext.capabilities.add")
    return Violation("unrestricted capabilities", "; ".join(details)) if details else None


RESTRICTED_VOLUME_SOURCES = ("configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "image",
                             "persistentVolumeClaim", "projected", "secret")
KNOWN_VOLUME_SOURCES = ("hostPath", "gcePersistentDisk", "awsElasticBlockStore", "gitRepo", "nfs", "iscsi",
                        "glusterfs", "rbd", "flexVolume", "cinder", "cephfs", "flocker", "fc", "azureFile",
                        "vsphereVolume", "quobyte", "azureDisk", "photonPersistentDisk", "portworxVolume", "scaleIO",
                        "storageos")


def restricted_volumes(meta: Obj, spec: Obj) -> Violation | None:
    bad, kinds = [], set()
    for volume in spec.get("volumes") or ():
        if not isinstance(volume, dict) or any(volume.get(k) is not None for k in RESTRICTED_VOLUME_SOURCES):
            continue
        bad.append(str(volume.get("name", "")))
        kinds.add(next((k for k in KNOWN_VOLUME_SOURCES if volume.get(k) is not None), "unknown"))
    if not bad:
        return None
    n = len(bad)
    return Violation("restricted volume types", f"{pluralize('volume', 'volumes', n)} {join_quote(bad)} "
                     f"{pluralize('uses', 'use', n)} {pluralize('restricted volume type', 'restricted volume types', len(kinds))} "
                     f"{join_quote(sorted(kinds))}")


def run_as_non_root(meta: Obj, spec: Obj) -> Violation | None:
    setters = []
    pod_value = _sc(spec).get("runAsNonRoot")
    if pod_value is False:
        setters.append("pod")
    explicit, implicit = [], []
    for c in containers(spec):
        value = _sc(c).get("runAsNonRoot")
        if value is not None:
            if value is False:
                explicit.append(_name(c))
        elif pod_value is not True:
            implicit.append(_name(c))
    if explicit:
        setters.append(_containers_phrase(explicit))
    if setters:
        return Violation("runAsNonRoot != true", f"{' and '.join(setters)} must not set "
                         "securityContext.runAsNonRoot=false")
    if implicit:
        return Violation("runAsNonRoot != true", f"pod or {_containers_phrase(implicit)} must set "
                         "securityContext.runAsNonRoot=true")
    return None


def run_as_user_1_23(meta: Obj, spec: Obj) -> Violation | None:
    def root(holder: Obj) -> bool:
        value = _sc(holder).get("runAsUser")
        return value == 0 and not isinstance(value, bool)

    setters = ["pod"] if root(spec) else []
    bad = [_name(c) for c in containers(spec) if root(c)]
    if bad:
        setters.append(_containers_phrase(bad))
    if not setters:
        return None
    return Violation("runAsUser=0", f"{' and '.join(setters)} must not set runAsUser=0")


def seccomp_profile_restricted_1_19(meta: Obj, spec: Obj) -> Violation | None:
    return _seccomp_fields(spec, require=True)


def not_on_windows(check: CheckFn) -> CheckFn:
    """The 1.25 revision of a restricted check: Pods with spec.os.name=windows pass."""
    def windows_exempt(meta: Obj, spec: Obj) -> Violation | None:
        return None if _windows(spec) else check(meta, spec)

    return windows_exempt
