"""What the kubelet needs of a runtime: a sandbox per Pod (its network), and containers that start, run,
exit with a code, and can be signalled."""

from __future__ import annotations

import abc
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Sandbox:
    """A Pod's network and files: its IP (or None with the host's network) and its directory."""

    uid: str
    ip: str
    directory: str
    netns: str | None = None  # /proc/<pid>/ns/net, when the Pod has its own network namespace
    memory: tuple[str, str] | None = None  # a tmpfs only the Pod mounts, for its secret volumes: (written, mounted)
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class ContainerSpec:
    """Everything a runtime needs to start one container, resolved by the kubelet."""

    name: str
    argv: list[str]
    env: dict[str, str]
    workdir: str
    mounts: list[dict[str, Any]]  # {"source", "target", "readOnly"}
    log_path: str
    tty: bool = False
    stdin: bool = False
    ports: list[int] = field(default_factory=list)
    hostname: str = ""
    init: bool = False  # an init container: runs to completion
    resources: dict[str, Any] = field(default_factory=dict)  # the container's `resources` (requests, limits)
    security: dict[str, Any] = field(default_factory=dict)  # user, groups, capabilities... (kubelet/security.py)


class Container(abc.ABC):
    """A started container."""

    id: str
    pid: int | None = None

    @abc.abstractmethod
    async def wait(self) -> int:
        """The exit code, once the container has exited."""

    @abc.abstractmethod
    def signal(self, signum: int) -> None:
        """Send a signal (SIGTERM, SIGKILL) to the container's processes."""

    def write_stdin(self, data: bytes) -> None:  # noqa: B027 - optional for runtimes without stdin
        """Feed the container's stdin (attach)."""

    def close_stdin(self) -> None:  # noqa: B027
        """Close the container's stdin."""


class Runtime(abc.ABC):
    """A way of running Pods."""

    name = "runtime"

    @abc.abstractmethod
    async def create_sandbox(self, pod: dict[str, Any], ip: str, directory: str) -> Sandbox: ...

    @abc.abstractmethod
    async def start(self, sandbox: Sandbox, spec: ContainerSpec) -> Container: ...

    @abc.abstractmethod
    async def remove_sandbox(self, sandbox: Sandbox) -> None: ...

    async def exec(self, sandbox: Sandbox, container: Container, argv: list[str], *, tty: bool,
                   env: dict[str, str]) -> Any:
        """A process started inside a running container (for `kubectl exec`)."""
        raise NotImplementedError(f"the {self.name} runtime cannot exec")

    async def close(self) -> None:  # noqa: B027 - nothing to release by default
        """Release what the runtime holds (namespaces, processes)."""
