"""Seccomp as the kubelet and containerd apply it: a container's `seccompProfile` (its own over the Pod's) is
`Unconfined` (the default, as upstream's kubelet without SeccompDefault), `RuntimeDefault` (containerd's default
profile, kubelet/seccomp_default.json: an allow-list that refuses with EPERM what a container has no business
doing: unshare, mount, setns, keyctl, bpf, reboot..., unless the capability the call needs is in the container's
set) or `Localhost` (a profile file under the node's seccomp root, `<node root>/seccomp`, as upstream's
`/var/lib/kubelet/seccomp`). Privileged containers run unconfined.

Profiles are JSON in the OCI/Docker format (`defaultAction`, `defaultErrnoRet`, `architectures` or `archMap`,
`syscalls` with `names`, `action`, `errnoRet`, `args`, `includes`/`excludes` of `caps`, `arches` and
`minKernel`); they are compiled to a BPF program with libseccomp (through the `pyseccomp` ctypes binding), once
per profile and capability set, and containerinit loads it just before the command runs."""

from __future__ import annotations

import functools
import json
import os
import platform
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

DEFAULT_PROFILE = Path(__file__).with_name("seccomp_default.json")
PROFILE_DIRECTORY = "seccomp"  # under the node's root dir
MAX_PROFILE = 1 << 20  # bytes a Localhost profile file may have
NATIVE_ARCH = {"x86_64": "SCMP_ARCH_X86_64", "aarch64": "SCMP_ARCH_AARCH64", "s390x": "SCMP_ARCH_S390X",
               "riscv64": "SCMP_ARCH_RISCV64", "ppc64le": "SCMP_ARCH_PPC64LE"}.get(platform.machine(), "")


class SeccompError(Exception):
    """A profile the container cannot run with (containerd refuses to create the container)."""


def container_profile(profile: dict[str, Any] | None, root: Path | None) -> dict[str, Any] | None:
    """The profile (a JSON object) for a container's effective `seccompProfile`: None when unconfined. `root` is
    the node's seccomp directory, where Localhost profiles are. SeccompError when a profile cannot be read."""
    kind = (profile or {}).get("type") or "Unconfined"
    if kind == "RuntimeDefault":
        return default_profile()
    if kind != "Localhost":
        return None
    relative = (profile or {}).get("localhostProfile") or ""
    path = (root or Path(PROFILE_DIRECTORY)) / relative
    where = f'cannot load seccomp profile "{path}"'
    if not relative or os.path.isabs(relative) or ".." in Path(relative).parts:
        raise SeccompError(f"failed to generate seccomp spec opts: {where}: not a path under the seccomp root")
    try:
        with open(path, "rb") as handle:
            text = handle.read(MAX_PROFILE + 1)
    except OSError as exc:
        raise SeccompError(f"failed to generate seccomp spec opts: {where}: open {path}: "
                           f"{(exc.strerror or str(exc)).lower()}") from None
    try:
        if len(text) > MAX_PROFILE:
            raise ValueError("larger than 1 MiB")
        loaded = json.loads(text)
        if not isinstance(loaded, dict):
            raise ValueError("not a JSON object")
    except ValueError as exc:
        raise SeccompError(f"failed to generate seccomp spec opts: {where}: decoding seccomp profile failed: "
                           f"{exc}") from None
    return loaded


@functools.cache
def _default_text() -> str:
    return DEFAULT_PROFILE.read_text()


def default_profile() -> dict[str, Any]:
    """containerd's default profile (a fresh copy)."""
    return json.loads(_default_text())


def compile_filter(profile: dict[str, Any], capabilities: Iterable[str]) -> bytes:
    """The BPF program (an array of struct sock_filter) enforcing `profile` for a container whose capability set
    is `capabilities` (names without `CAP_`). ValueError for a profile libseccomp refuses; OSError where the
    node has no libseccomp."""
    return _compiled(json.dumps(profile, sort_keys=True), tuple(sorted(set(capabilities))))


def _kernel_at_least(version: str) -> bool:
    def parts(text: str) -> tuple[int, ...]:
        numbers = []
        for piece in text.split(".")[:2]:
            digits = "".join(c for c in piece if c.isdigit()) if piece else ""
            numbers.append(int(digits or 0))
        return tuple(numbers)

    return parts(platform.release()) >= parts(version)


def _applies(rule: dict[str, Any], caps: set[str]) -> bool:
    """A rule's `includes` (all of its caps held, the node's arch among its arches, the kernel at least
    `minKernel`) and `excludes` (none of its caps held, the node's arch not among its arches)."""
    includes, excludes = rule.get("includes") or {}, rule.get("excludes") or {}
    if any(c not in caps for c in includes.get("caps") or ()):
        return False
    if includes.get("arches") and NATIVE_ARCH not in includes["arches"]:
        return False
    if includes.get("minKernel") and not _kernel_at_least(str(includes["minKernel"])):
        return False
    if any(c in caps for c in excludes.get("caps") or ()):
        return False
    return not (excludes.get("arches") and NATIVE_ARCH in excludes["arches"])


@functools.lru_cache(maxsize=64)
def _compiled(text: str, capabilities: tuple[str, ...]) -> bytes:
    try:
        import pyseccomp as seccomp  # a ctypes binding: loads libseccomp, only where a profile is used
    except (ImportError, RuntimeError) as exc:
        raise OSError(f"seccomp is not supported: {exc}") from None
    profile = json.loads(text)
    caps = {f"CAP_{c}" for c in capabilities}

    def action(name: str, errno_ret: Any) -> int:
        errno = int(errno_ret) if errno_ret is not None else 1  # EPERM, as runc
        actions = {"SCMP_ACT_ALLOW": seccomp.ALLOW, "SCMP_ACT_ERRNO": seccomp.ERRNO(errno),
                   "SCMP_ACT_KILL": seccomp.KILL_THREAD, "SCMP_ACT_KILL_THREAD": seccomp.KILL_THREAD,
                   "SCMP_ACT_KILL_PROCESS": seccomp.KILL_PROCESS, "SCMP_ACT_TRAP": seccomp.TRAP,
                   "SCMP_ACT_LOG": seccomp.LOG, "SCMP_ACT_TRACE": seccomp.TRACE(errno)}
        if name not in actions:
            raise ValueError(f"unsupported seccomp action {name!r}")
        return actions[name]

    ops = {"SCMP_CMP_NE": seccomp.NE, "SCMP_CMP_LT": seccomp.LT, "SCMP_CMP_LE": seccomp.LE,
           "SCMP_CMP_EQ": seccomp.EQ, "SCMP_CMP_GE": seccomp.GE, "SCMP_CMP_GT": seccomp.GT,
           "SCMP_CMP_MASKED_EQ": seccomp.MASKED_EQ}
    arches = {"SCMP_ARCH_X86": seccomp.Arch.X86, "SCMP_ARCH_X86_64": seccomp.Arch.X86_64,
              "SCMP_ARCH_X32": seccomp.Arch.X32, "SCMP_ARCH_ARM": seccomp.Arch.ARM,
              "SCMP_ARCH_AARCH64": seccomp.Arch.AARCH64, "SCMP_ARCH_S390": seccomp.Arch.S390,
              "SCMP_ARCH_S390X": seccomp.Arch.S390X, "SCMP_ARCH_PPC64LE": seccomp.Arch.PPC64LE,
              "SCMP_ARCH_RISCV64": seccomp.Arch.RISCV64}
    default = action(profile.get("defaultAction") or "SCMP_ACT_ALLOW", profile.get("defaultErrnoRet"))
    program = seccomp.SyscallFilter(default)
    wanted = list(profile.get("architectures") or ())
    for entry in profile.get("archMap") or ():
        if entry.get("architecture") == NATIVE_ARCH:
            wanted += [entry["architecture"], *(entry.get("subArchitectures") or ())]
    for name in dict.fromkeys(wanted):
        if name in arches and not program.exist_arch(arches[name]):
            program.add_arch(arches[name])
    for rule in profile.get("syscalls") or ():
        if not _applies(rule, caps):
            continue
        verdict = action(rule.get("action") or "", rule.get("errnoRet"))
        if verdict == default:
            continue  # libseccomp refuses a rule that says what the default says
        args = [seccomp.Arg(int(a.get("index", 0)), ops[a.get("op") or "SCMP_CMP_EQ"], int(a.get("value", 0)),
                            int(a.get("valueTwo", 0))) for a in rule.get("args") or ()]
        indexes = [a.get("index", 0) for a in rule.get("args") or ()]
        groups = [[a] for a in args] if len(set(indexes)) < len(indexes) else [args]  # repeated index: OR, as runc
        for name in rule.get("names") or ([rule["name"]] if rule.get("name") else []):
            for group in groups:
                try:
                    program.add_rule(verdict, name, *group)
                except (OSError, ValueError):
                    continue  # a syscall this kernel's libseccomp does not know: left out, as runc does
    with tempfile.TemporaryFile() as handle:
        program.export_bpf(handle)
        handle.seek(0)
        return handle.read()
