"""Which checks a (level, version) runs, in upstream's order (k8s.io/pod-security-admission/policy/registry.go).

Each check has revisions from a minimum policy version on; a restricted revision may replace (override) a
baseline check. Restricted runs the baseline checks it does not override, then its own; checks run sorted by
ID, baseline first. Versions past the server's minor (and `latest`) evaluate as the server's minor, as
upstream's evaluator does with its newest checks.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from . import checks as c
from .api import BASELINE, PRIVILEGED, RESTRICTED, LevelVersion
from .checks import CheckFn, Violation

SERVER_MINOR = 32  # the policy version `latest` means: the server's own (v1.32)


@dataclass(frozen=True, slots=True)
class Revision:
    minimum: int  # first v1.<minor> this revision applies to
    check: CheckFn
    overrides: tuple[str, ...] = ()


CHECKS: dict[str, tuple[str, tuple[Revision, ...]]] = {
    "appArmorProfile": (BASELINE, (Revision(0, c.app_armor_profile),)),
    "capabilities_baseline": (BASELINE, (Revision(0, c.capabilities_baseline),)),
    "hostNamespaces": (BASELINE, (Revision(0, c.host_namespaces),)),
    "hostPathVolumes": (BASELINE, (Revision(0, c.host_path_volumes),)),
    "hostPorts": (BASELINE, (Revision(0, c.host_ports),)),
    "privileged": (BASELINE, (Revision(0, c.privileged),)),
    "procMount": (BASELINE, (Revision(0, c.proc_mount),)),
    "seLinuxOptions": (BASELINE, (Revision(0, c.se_linux_options(c.SELINUX_TYPES_1_0)),
                                  Revision(31, c.se_linux_options(c.SELINUX_TYPES_1_31)))),
    "seccompProfile_baseline": (BASELINE, (Revision(0, c.seccomp_profile_baseline_1_0),
                                           Revision(19, c.seccomp_profile_baseline_1_19))),
    "sysctls": (BASELINE, (Revision(0, c.sysctls(c.SYSCTLS_1_0)), Revision(27, c.sysctls(c.SYSCTLS_1_27)),
                           Revision(29, c.sysctls(c.SYSCTLS_1_29)), Revision(32, c.sysctls(c.SYSCTLS_1_32)))),
    "windowsHostProcess": (BASELINE, (Revision(0, c.windows_host_process),)),
    "allowPrivilegeEscalation": (RESTRICTED, (
        Revision(8, c.allow_privilege_escalation_1_8),
        Revision(25, c.not_on_windows(c.allow_privilege_escalation_1_8)))),
    "capabilities_restricted": (RESTRICTED, (
        Revision(22, c.capabilities_restricted_1_22, ("capabilities_baseline",)),
        Revision(25, c.not_on_windows(c.capabilities_restricted_1_22), ("capabilities_baseline",)))),
    "restrictedVolumes": (RESTRICTED, (Revision(0, c.restricted_volumes, ("hostPathVolumes",)),)),
    "runAsNonRoot": (RESTRICTED, (Revision(0, c.run_as_non_root),)),
    "runAsUser": (RESTRICTED, (Revision(23, c.run_as_user_1_23),)),
    "seccompProfile_restricted": (RESTRICTED, (
        Revision(19, c.seccomp_profile_restricted_1_19, ("seccompProfile_baseline",)),
        Revision(25, c.not_on_windows(c.seccomp_profile_restricted_1_19), ("seccompProfile_baseline",)))),
}


def _revision_at(revisions: tuple[Revision, ...], minor: int) -> Revision | None:
    found = None
    for revision in revisions:
        if revision.minimum <= minor:
            found = revision
    return found


@functools.cache
def checks_for(level: str, minor: int) -> tuple[CheckFn, ...]:
    """The check functions of `level` at policy version v1.<minor>, in upstream's order."""
    active = {check_id: (lvl, rev) for check_id, (lvl, revisions) in CHECKS.items()
              if (rev := _revision_at(revisions, minor)) is not None and (lvl == BASELINE or level == RESTRICTED)}
    overridden = {o for lvl, rev in active.values() if lvl == RESTRICTED for o in rev.overrides}
    ordered = sorted((lvl != BASELINE, check_id) for check_id, (lvl, _) in active.items()
                     if check_id not in overridden)
    return tuple(active[check_id][1].check for _, check_id in ordered)


def evaluate(policy: LevelVersion, meta: dict[str, Any], spec: dict[str, Any]) -> list[Violation]:
    """The violations of `policy` by a Pod (or template) with this metadata and spec; empty when allowed."""
    if policy.level == PRIVILEGED:
        return []
    minor = policy.version.minor
    minor = SERVER_MINOR if minor is None or minor > SERVER_MINOR else minor
    return [v for check in checks_for(policy.level, minor) if (v := check(meta, spec)) is not None]


def forbidden_detail(violations: list[Violation]) -> str:
    """`reason (detail), reason, ...` as upstream's AggregateCheckResult.ForbiddenDetail."""
    return ", ".join(f"{v.reason} ({v.detail})" if v.detail else v.reason for v in violations)


def forbidden_reason(violations: list[Violation]) -> str:
    return ", ".join(v.reason for v in violations)
