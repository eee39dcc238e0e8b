"""Pod Security levels, policy versions and the namespace labels that choose them (k8s.io/pod-security-admission/api).

A namespace's policy is three (level, version) pairs, one per mode: `enforce` refuses Pods, `audit` annotates the
audit event, `warn` returns warnings. Labels `pod-security.kubernetes.io/<mode>` and `<mode>-version` set them;
what a namespace leaves unset comes from the configured defaults (privileged:latest upstream).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

PRIVILEGED, BASELINE, RESTRICTED = "privileged", "baseline", "restricted"
LEVELS = (PRIVILEGED, BASELINE, RESTRICTED)  # least to most strict
LATEST = "latest"

LABEL_PREFIX = "pod-security.kubernetes.io/"
MODES = ("enforce", "audit", "warn")

EXEMPT = "exempt"  # audit annotation keys (upstream prefixes them with LABEL_PREFIX)
AUDIT_VIOLATIONS = "audit-violations"
ENFORCE_POLICY = "enforce-policy"

_VERSION = re.compile(r"^v1\.([0-9]|[1-9][0-9]*)$")


@dataclass(frozen=True, slots=True)
class Version:
    """A policy version: v1.<minor>, or latest (minor None), which is newer than any."""

    minor: int | None = None

    @property
    def latest(self) -> bool:
        return self.minor is None

    def __str__(self) -> str:
        return LATEST if self.minor is None else f"v1.{self.minor}"

    def older(self, other: Version) -> bool:
        if self.minor is None:
            return False
        return other.minor is None or self.minor < other.minor


@dataclass(frozen=True, slots=True)
class LevelVersion:
    level: str
    version: Version

    def __str__(self) -> str:
        return f"{self.level}:{self.version}"

    def equivalent(self, other: LevelVersion) -> bool:
        """Both privileged (any version), or the same level and version."""
        return (self.level == PRIVILEGED and other.level == PRIVILEGED) or self == other


@dataclass(frozen=True, slots=True)
class Policy:
    enforce: LevelVersion
    audit: LevelVersion
    warn: LevelVersion

    @property
    def fully_privileged(self) -> bool:
        return self.enforce.level == self.audit.level == self.warn.level == PRIVILEGED

    def equivalent(self, other: Policy) -> bool:
        return (self.enforce.equivalent(other.enforce) and self.audit.equivalent(other.audit)
                and self.warn.equivalent(other.warn))


PRIVILEGED_LATEST = LevelVersion(PRIVILEGED, Version())
DEFAULT_POLICY = Policy(PRIVILEGED_LATEST, PRIVILEGED_LATEST, PRIVILEGED_LATEST)


class PolicyError(ValueError):
    """A level or version that cannot be parsed (the message is upstream's)."""


def parse_level(value: str) -> str:
    if value not in LEVELS:
        raise PolicyError("must be one of " + ", ".join(LEVELS))
    return value


def parse_version(value: str) -> Version:
    if value == LATEST:
        return Version()
    match = _VERSION.match(value)
    if match is None:
        raise PolicyError('must be "latest" or "v1.x"')
    return Version(int(match.group(1)))


def compare_levels(a: str, b: str) -> int:
    """-1, 0 or 1 as `a` is less strict than, as strict as, or stricter than `b`."""
    return (LEVELS.index(a) > LEVELS.index(b)) - (LEVELS.index(a) < LEVELS.index(b))


@dataclass(frozen=True, slots=True)
class LabelError:
    """An unparsable Pod Security label: metadata.labels[<label>] Invalid value."""

    label: str
    value: str
    message: str

    @property
    def field(self) -> str:
        return f"metadata.labels[{self.label}]"


def policy_to_evaluate(labels: dict[str, str] | None, defaults: Policy = DEFAULT_POLICY) -> tuple[Policy,
                                                                                                   list[LabelError]]:
    """The namespace's policy from its labels over `defaults`, and the labels that could not be parsed (a bad
    enforce level counts as restricted, a bad audit or warn level as privileged, a bad version as latest)."""
    if not labels:
        return defaults, []
    errs: list[LabelError] = []
    modes = {"enforce": defaults.enforce, "audit": defaults.audit, "warn": defaults.warn}
    set_enforce_level = False
    for mode in MODES:
        current = modes[mode]
        level_label, version_label = LABEL_PREFIX + mode, LABEL_PREFIX + mode + "-version"
        if level_label in labels:
            value = labels[level_label]
            try:
                current = replace(current, level=parse_level(value))
                set_enforce_level = set_enforce_level or mode == "enforce"
            except PolicyError as exc:
                errs.append(LabelError(level_label, value, str(exc)))
                current = replace(current, level=RESTRICTED if mode == "enforce" else PRIVILEGED)
        if version_label in labels:
            value = labels[version_label]
            try:
                current = replace(current, version=parse_version(value))
            except PolicyError as exc:
                errs.append(LabelError(version_label, value, str(exc)))
                current = replace(current, version=Version())
        modes[mode] = current
    warn = modes["warn"]
    # warn defaults to the enforce level when enforce is explicitly stricter
    if LABEL_PREFIX + "warn" not in labels and set_enforce_level and \
            compare_levels(modes["enforce"].level, warn.level) > 0:
        version = warn.version if LABEL_PREFIX + "warn-version" in labels else modes["enforce"].version
        modes["warn"] = LevelVersion(modes["enforce"].level, version)
    return Policy(modes["enforce"], modes["audit"], modes["warn"]), errs
