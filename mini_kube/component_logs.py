"""Each in-process component's log as a file of its own, in the CRI format a container's log has, so its mirror
Pod in kube-system (`kubectl logs -n kube-system kube-scheduler-mini-kube`) shows it. The records still go to
`serve`'s stderr as before; these handlers copy each component's records (chosen by logger name) to its file,
rotated as container logs are (MAX_FILES files), all of them together held under TOTAL_SIZE: each component's
files share an equal part of it, so a chatty component cannot fill the data dir's disk."""

from __future__ import annotations

import logging
from pathlib import Path

from mini_kube.kubelet.logs import LogWriter
from mini_kube.kubelet.static_pods import StaticPod
from mini_kube.machinery.tempdirs import make_owned, remove_owned

TOTAL_SIZE = 64 * 1024 * 1024  # all the components' log files together, rotated ones included
MAX_FILES = 5  # each component's log files, the current one included (as --container-log-max-files)

# the loggers whose records are each component's (a logger's children included)
LOGGERS: dict[str, tuple[str, ...]] = {
    "kube-apiserver": ("mini-kube.apiserver", "mini-kube.admission", "mini-kube.auth", "mini-kube.crd",
                       "mini_kube.apiserver", "mini_kube.store"),
    "kube-controller-manager": ("mini-kube.controller", "mini-kube.manager", "mini-kube.gc",
                                "mini-kube.resourcequota"),
    "kube-scheduler": ("mini-kube.scheduler",),
    "cloud-controller-manager": ("mini-kube.ccm",),
    "coredns": ("mini-kube.dns",),
    "kube-proxy": ("mini-kube.proxy", "mini-kube.network.relay"),
}
FORMAT = "%(levelname).1s%(asctime)s %(name)s] %(message)s"


class ComponentLogHandler(logging.Handler):
    """Appends a component's records to its CRI-format log file (stderr records, as a klog process writes)."""

    def __init__(self, path: Path, max_size: int) -> None:
        super().__init__(logging.INFO)
        self.writer = LogWriter(str(path), max_size=max_size, max_files=MAX_FILES)
        self.setFormatter(logging.Formatter(FORMAT, datefmt="%m%d %H:%M:%S"))

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.writer.write("stderr", self.format(record).encode(errors="replace") + b"\n")
        except Exception:  # noqa: BLE001 - logging must never fail the component
            self.handleError(record)

    def close(self) -> None:
        self.writer.close()
        super().close()


class ComponentLogs:
    """The log files of the components `serve` runs, in `directory` (a temporary one, removed at `close`, for
    state that goes with the server); together at most `total_size` bytes."""

    def __init__(self, directory: str | None, components: list[str], total_size: int = TOTAL_SIZE) -> None:
        self.temporary = directory is None
        self.directory = Path(directory) if directory else make_owned("mini-kube-logs-")
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.handlers: list[tuple[logging.Logger, ComponentLogHandler]] = []
        self.paths: dict[str, str] = {}
        file_size = total_size // (max(len(components), 1) * MAX_FILES)
        for component in components:
            path = self.directory / f"{component}.log"
            handler = ComponentLogHandler(path, file_size)
            self.paths[component] = str(path)
            for name in LOGGERS.get(component, ()):
                logger = logging.getLogger(name)
                logger.addHandler(handler)
                self.handlers.append((logger, handler))

    def static_pods(self, components: tuple[str, ...]) -> tuple[StaticPod, ...]:
        return tuple(StaticPod(c, self.paths[c]) for c in components if c in self.paths)

    def close(self) -> None:
        for logger, handler in self.handlers:
            logger.removeHandler(handler)
            handler.close()
        self.handlers.clear()
        if self.temporary:
            remove_owned(self.directory)
