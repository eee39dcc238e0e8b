"""Kubeconfig as kubectl reads it: `--kubeconfig`, else `$KUBECONFIG` (several files merged, the first file
to set a value wins), else `~/.kube/config`; in-cluster config when none of those exist."""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SA_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")


class ConfigError(Exception):
    """A kubeconfig that cannot be used (printed as kubectl prints configuration errors)."""


class KubeconfigError(ValueError):
    """A kubeconfig that cannot be read or used (missing, not YAML, no such context, unreadable certificates)."""


def kubeconfig_error(path: str | Path, exc: BaseException) -> KubeconfigError:
    """`cannot use kubeconfig PATH: why`, one line: a missing file as the OS says it, an unreadable one by its
    OS error, anything else by what went wrong."""
    cause = exc.__cause__ if isinstance(exc, ConfigError) and isinstance(exc.__cause__, OSError) else exc
    missing = isinstance(exc, ConfigError) and not Path(path).exists()
    why = os.strerror(errno.ENOENT) if missing else cause.strerror if isinstance(cause, OSError) and \
        cause.strerror else cause
    return KubeconfigError(f"cannot use kubeconfig {path}: {' '.join(str(why).split()) or type(exc).__name__}")


def load_credentials(path: str | Path, context: str | None = None) -> Credentials:
    """The credentials of the kubeconfig's current (or named) context, read as kubectl reads it; KubeconfigError,
    saying why, when it cannot be used. Imports no client: a command refuses a bad kubeconfig before loading
    what it would run."""
    import yaml

    try:
        return resolve(KubeConfig.load(str(path)), context)
    except (OSError, ValueError, KeyError, TypeError, AttributeError, ConfigError, yaml.YAMLError) as exc:
        raise kubeconfig_error(path, exc) from exc


def _load_yaml(path: Path) -> dict[str, Any]:
    import yaml

    try:  # libyaml's safe loader when PyYAML has it (ten times as fast), else the pure-Python one
        data = yaml.load(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) or {}
    except OSError as exc:
        raise ConfigError(f"stat {path}: no such file or directory") from exc
    except yaml.YAMLError as exc:
        raise ConfigError(f"error loading config file \"{path}\": {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"error loading config file \"{path}\": not a kubeconfig")
    return data


def config_files(explicit: str | None) -> list[Path]:
    """The files kubectl would read, in precedence order."""
    if explicit:
        return [Path(explicit).expanduser()]
    env = os.environ.get("KUBECONFIG")
    if env:
        return [Path(p).expanduser() for p in env.split(os.pathsep) if p]
    return [Path.home() / ".kube" / "config"]


def _merge_named(target: list[dict[str, Any]], items: list[dict[str, Any]] | None) -> None:
    seen = {entry.get("name") for entry in target}
    for entry in items or ():
        if isinstance(entry, dict) and entry.get("name") not in seen:
            target.append(entry)
            seen.add(entry.get("name"))


@dataclass
class KubeConfig:
    """The merged kubeconfig, and the file that `use-context` writes back to."""

    clusters: list[dict[str, Any]] = field(default_factory=list)
    users: list[dict[str, Any]] = field(default_factory=list)
    contexts: list[dict[str, Any]] = field(default_factory=list)
    current_context: str = ""
    preferences: dict[str, Any] = field(default_factory=dict)
    files: list[Path] = field(default_factory=list)

    @classmethod
    def load(cls, explicit: str | None = None) -> KubeConfig:
        config = cls(files=config_files(explicit))
        for path in config.files:
            if not path.exists():
                if explicit:
                    raise ConfigError(f"stat {path}: no such file or directory")
                continue
            config.merge(_load_yaml(path))
        return config

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> KubeConfig:
        """A kubeconfig held in memory (a parsed document), read as one file would be; it has no file."""
        config = cls()
        config.merge(data)
        return config

    def merge(self, data: dict[str, Any]) -> None:
        """One more kubeconfig document, merged as kubectl merges its files (the first one wins)."""
        _merge_named(self.clusters, data.get("clusters"))
        _merge_named(self.users, data.get("users"))
        _merge_named(self.contexts, data.get("contexts"))
        if not self.current_context and data.get("current-context"):
            self.current_context = str(data["current-context"])

    def named(self, kind: str, name: str) -> dict[str, Any] | None:
        items = {"cluster": self.clusters, "user": self.users, "context": self.contexts}[kind]
        for entry in items:
            if entry.get("name") == name:
                return entry.get(kind) or {}
        return None

    def as_dict(self) -> dict[str, Any]:
        return {"apiVersion": "v1", "clusters": self.clusters, "contexts": self.contexts,
                "current-context": self.current_context, "kind": "Config", "preferences": self.preferences,
                "users": self.users}

    def set_current_context(self, name: str) -> None:
        """Write `current-context` into the first file (as kubectl does with several files)."""
        import yaml

        if self.named("context", name) is None:
            raise ConfigError(f"no context exists with the name: \"{name}\"")
        target = self.files[0]
        data = _load_yaml(target) if target.exists() else {"apiVersion": "v1", "kind": "Config"}
        data["current-context"] = name
        target.write_text(yaml.safe_dump(data, sort_keys=False))
        self.current_context = name


@dataclass
class Credentials:
    """Where to connect and as whom: what the transport needs."""

    server: str
    namespace: str = "default"
    ca_file: str | None = None
    ca_data: str | None = None
    insecure: bool = False
    cert_file: str | None = None
    cert_data: str | None = None
    key_file: str | None = None
    key_data: str | None = None
    token: str | None = None
    username: str | None = None
    password: str | None = None
    tls_server_name: str | None = None


def in_cluster() -> Credentials | None:
    """The pod's service-account credentials, when running inside a cluster."""
    host, port = os.environ.get("KUBERNETES_SERVICE_HOST"), os.environ.get("KUBERNETES_SERVICE_PORT")
    token = SA_DIR / "token"
    if not host or not port or not token.exists():
        return None
    namespace = (SA_DIR / "namespace").read_text().strip() if (SA_DIR / "namespace").exists() else "default"
    host = f"[{host}]" if ":" in host else host
    return Credentials(server=f"https://{host}:{port}", namespace=namespace, ca_file=str(SA_DIR / "ca.crt"),
                       token=token.read_text().strip())


def resolve(config: KubeConfig, context: str | None = None, namespace: str | None = None,
            server: str | None = None, token: str | None = None) -> Credentials:
    """Credentials for a context (the current one by default), with command-line overrides applied."""
    name = context or config.current_context
    if not name and not config.contexts:
        found = in_cluster()
        if found is None:
            raise ConfigError("invalid configuration: no configuration has been provided, try setting "
                              "KUBERNETES_MASTER environment variable")
        found.namespace = namespace or found.namespace
        return found
    ctx = config.named("context", name)
    if ctx is None:
        raise ConfigError(f"context was not found for specified context: {name}")
    cluster = config.named("cluster", ctx.get("cluster", "")) or {}
    user = config.named("user", ctx.get("user", "")) or {}
    url = server or cluster.get("server")
    if not url:
        raise ConfigError(f"invalid configuration: no server found for cluster \"{ctx.get('cluster', '')}\"")
    return Credentials(
        server=str(url).rstrip("/"), namespace=namespace or ctx.get("namespace") or "default",
        ca_file=cluster.get("certificate-authority"), ca_data=cluster.get("certificate-authority-data"),
        insecure=bool(cluster.get("insecure-skip-tls-verify")), tls_server_name=cluster.get("tls-server-name"),
        cert_file=user.get("client-certificate"), cert_data=user.get("client-certificate-data"),
        key_file=user.get("client-key"), key_data=user.get("client-key-data"),
        token=token or user.get("token") or _token_file(user.get("tokenFile")),
        username=user.get("username"), password=user.get("password"))


def _token_file(path: str | None) -> str | None:
    return Path(path).expanduser().read_text().strip() if path else None
