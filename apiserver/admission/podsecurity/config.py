"""PodSecurityConfiguration (pod-security.admission.config.k8s.io/v1): the defaults for unlabelled namespaces and
the exemptions, read from the PodSecurity entry of an AdmissionConfiguration file
(`--admission-control-config-file`), validated as upstream's ValidatePodSecurityConfiguration."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from mini_kube.machinery.names import is_dns1123_label, is_dns1123_subdomain

from .api import (
    DEFAULT_POLICY,
    LATEST,
    PRIVILEGED,
    LevelVersion,
    Policy,
    PolicyError,
    parse_level,
    parse_version,
)

PLUGIN_NAME = "PodSecurity"
CONFIG_GROUP = "pod-security.admission.config.k8s.io"
CONFIG_VERSIONS = ("v1", "v1beta1", "v1alpha1")
ADMISSION_CONFIG_API_VERSIONS = ("apiserver.config.k8s.io/v1", "apiserver.k8s.io/v1alpha1")


class ConfigurationError(ValueError):
    """The admission configuration cannot be used (the message says where and why)."""


@dataclass(frozen=True, slots=True)
class PodSecurityConfiguration:
    defaults: Policy = DEFAULT_POLICY
    exempt_usernames: frozenset[str] = field(default_factory=frozenset)
    exempt_namespaces: frozenset[str] = field(default_factory=frozenset)
    exempt_runtime_classes: frozenset[str] = field(default_factory=frozenset)


def _strings(value: Any, path: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigurationError(f"{path}: must be a list of strings")
    return value


def _exemptions(values: list[str], path: str, check: Any) -> list[str]:
    errs, seen = [], set()
    for i, value in enumerate(values):
        problems = check(value)
        if problems:
            errs.append(f'{path}[{i}]: Invalid value: "{value}": {", ".join(problems)}')
        elif value in seen:
            errs.append(f'{path}[{i}]: Duplicate value: "{value}"')
        else:
            seen.add(value)
    return errs


def parse_configuration(obj: Any) -> PodSecurityConfiguration:
    """A PodSecurityConfiguration object (defaulted: privileged:latest where unset) checked as upstream."""
    if obj is None:
        return PodSecurityConfiguration()
    if not isinstance(obj, dict):
        raise ConfigurationError("expected a PodSecurityConfiguration object")
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if kind != "PodSecurityConfiguration" or api_version not in {f"{CONFIG_GROUP}/{v}" for v in CONFIG_VERSIONS}:
        raise ConfigurationError(f'no kind "{kind}" is registered for version "{api_version}"; expected '
                                 f"{CONFIG_GROUP}/v1 PodSecurityConfiguration")
    defaults = obj.get("defaults") or {}
    exemptions = obj.get("exemptions") or {}
    if not isinstance(defaults, dict) or not isinstance(exemptions, dict):
        raise ConfigurationError("defaults and exemptions must be objects")
    errs: list[str] = []
    modes: dict[str, LevelVersion] = {}
    for mode in ("enforce", "warn", "audit"):
        level, version = str(defaults.get(mode) or PRIVILEGED), str(defaults.get(f"{mode}-version") or LATEST)
        parsed = LevelVersion(PRIVILEGED, DEFAULT_POLICY.enforce.version)
        try:
            parsed = LevelVersion(parse_level(level), parsed.version)
        except PolicyError as exc:
            errs.append(f'defaults.{mode}: Invalid value: "{level}": {exc}')
        try:
            parsed = LevelVersion(parsed.level, parse_version(version))
        except PolicyError as exc:
            errs.append(f'defaults.{mode}-version: Invalid value: "{version}": {exc}')
        modes[mode] = parsed
    namespaces = _strings(exemptions.get("namespaces"), "exemptions.namespaces")
    runtime_classes = _strings(exemptions.get("runtimeClasses"), "exemptions.runtimeClasses")
    usernames = _strings(exemptions.get("usernames"), "exemptions.usernames")
    errs += _exemptions(namespaces, "exemptions.namespaces", is_dns1123_label)
    errs += _exemptions(runtime_classes, "exemptions.runtimeClasses", is_dns1123_subdomain)
    errs += _exemptions(usernames, "exemptions.usernames", lambda v: [] if v else ["username must not be empty"])
    if errs:
        raise ConfigurationError(errs[0] if len(errs) == 1 else "[" + ", ".join(errs) + "]")
    return PodSecurityConfiguration(Policy(modes["enforce"], modes["audit"], modes["warn"]), frozenset(usernames),
                                    frozenset(namespaces), frozenset(runtime_classes))


def plugin_configuration(path: str | Path | None, plugin: str = PLUGIN_NAME) -> Any:
    """The `configuration` of `plugin` in an AdmissionConfiguration file (inline, or the file its `path` names,
    relative to the configuration file), or None when the file is not given or does not mention the plugin."""
    if not path:
        return None
    config_path = Path(path)
    try:
        document = yaml.safe_load(config_path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigurationError(f"cannot read {path}: {exc}") from None
    if not isinstance(document, dict) or document.get("kind") != "AdmissionConfiguration" or \
            document.get("apiVersion") not in ADMISSION_CONFIG_API_VERSIONS:
        raise ConfigurationError(f"{path}: expected an apiserver.config.k8s.io/v1 AdmissionConfiguration")
    for entry in document.get("plugins") or ():
        if not isinstance(entry, dict) or entry.get("name") != plugin:
            continue
        if entry.get("configuration") is not None:
            return entry["configuration"]
        if entry.get("path"):
            target = config_path.parent / str(entry["path"])
            try:
                return yaml.safe_load(target.read_text())
            except (OSError, yaml.YAMLError) as exc:
                raise ConfigurationError(f"cannot read {target}: {exc}") from None
    return None


def load(path: str | Path | None) -> PodSecurityConfiguration:
    """The PodSecurity configuration from an AdmissionConfiguration file (upstream's defaults without one)."""
    try:
        return parse_configuration(plugin_configuration(path))
    except ConfigurationError as exc:
        raise ConfigurationError(f'couldn\'t init admission plugin "{PLUGIN_NAME}": {exc}') from None
