"""What the kubelet needs of a runtime (the shape of CRI's RuntimeService): a sandbox per Pod (its network), and
containers that start, run, exit with a code, and can be signalled; for runtimes whose containers are processes,
commands run in them (exec probes and hooks: ExecSync; `kubectl exec`: Exec). What a runtime lacks has a default
here, so the kubelet never asks a runtime what it has."""

from __future__ import annotations

import abc
import pty
from dataclasses import dataclass, field
from typing import Any

from ..logs import LogWriter


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
    log_max_size: int = 10 * 1024 * 1024  # the log file is rotated before it grows past this (bytes)
    log_max_files: int = 5  # files of the log kept, the current one included
    tty: bool = False
    stdin: bool = False
    ports: list[int] = field(default_factory=list)
    hostname: str = ""
    init: bool = False  # an init container: runs to completion
    resources: dict[str, Any] = field(default_factory=dict)  # the container's `resources` (requests, limits)
    security: dict[str, Any] = field(default_factory=dict)  # user, groups, capabilities... (kubelet/security.py)
    layers: list[str] = field(default_factory=list)  # an image's layers, topmost first: the container's root
    setuid: list[tuple[str, str]] = field(default_factory=list)  # the image's set-user-ID root programs: (path
    # in the container, the host program it is a copy of)


class Container(abc.ABC):
    """A started container."""

    id: str
    pid: int | None = None
    log: LogWriter | None = None  # its log, while it runs (followed by `kubectl logs -f` and attach)
    oom_killed = False  # it was killed for going over its memory limit

    async def started(self) -> str:
        """Wait until the container's command runs (a process exec'd before would not be in its root); why it
        could not be run, or "" once it runs."""
        return ""

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
    runs_processes = False  # containers are processes: exec, exec probes and hooks, httpGet/tcpSocket reach them
    unenforced = ""  # why this node cannot enforce resources.limits ("" when it can)

    @abc.abstractmethod
    async def create_sandbox(self, pod: dict[str, Any], ip: str, directory: str) -> Sandbox: ...

    @abc.abstractmethod
    async def start(self, sandbox: Sandbox, spec: ContainerSpec) -> Container: ...

    @abc.abstractmethod
    async def remove_sandbox(self, sandbox: Sandbox) -> None: ...

    async def memory_volume(self, sandbox: Sandbox, name: str, size: int) -> tuple[str, str] | None:
        """A tmpfs of `size` bytes for the Pod's emptyDir `name` of medium Memory: (where the kubelet writes it,
        where the Pod's mount namespace has it); None where the runtime has none (a directory stands in)."""
        return None

    async def exec(self, sandbox: Sandbox | None, container: Container, argv: list[str], *, tty: bool,
                   env: dict[str, str] | None = None, terminal: int | None = None) -> Any:
        """A process started inside a running container (for `kubectl exec`), shaped as asyncio's subprocesses
        (stdin writer, stdout and stderr readers, wait): pipes, or with `tty` the terminal `terminal` (a pty's
        slave) as its stdin, stdout and stderr, and its controlling terminal."""
        raise NotImplementedError(f"the {self.name} runtime cannot exec")

    async def run(self, sandbox: Sandbox | None, container: Container, argv: list[str]) -> tuple[int, bytes]:
        """Run a command in the container to its end (CRI's ExecSync): its exit code and output."""
        raise NotImplementedError(f"the {self.name} runtime cannot exec")

    def open_pty(self, container: Container) -> tuple[int, int]:
        """A terminal (master, slave) for a process exec'd into `container` with a tty: by default the host's."""
        return pty.openpty()

    async def close(self) -> None:  # noqa: B027 - nothing to release by default
        """Release what the runtime holds (namespaces, processes)."""
