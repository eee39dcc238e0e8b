"""Termination messages, as upstream's kubelet makes them: before each start of a container whose spec has a
`terminationMessagePath` (the API's default is /dev/termination-log), an empty file of its own (mode 0666, under
the Pod's directory) is bound at that path, read-write; once the container has exited, its last 4096 bytes are
the terminated state's `message`. With `terminationMessagePolicy: FallbackToLogsOnError`, a container that failed
(exit code not 0) and wrote nothing there gets the last 2048 bytes of its last 80 log lines instead."""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Any

from .logs import LogReader

MAX_MESSAGE = 4096  # kubecontainer.MaxContainerTerminationMessageLength
MAX_LOG_LINES = 80  # MaxContainerTerminationMessageLogLines
MAX_LOG_BYTES = 2048  # MaxContainerTerminationMessageLogLength


def message_file(pod_directory: Path, container: dict[str, Any]) -> Path | None:
    """A fresh, empty, world-writable file for this run of the container (None when it has no path)."""
    if not container.get("terminationMessagePath"):
        return None
    directory = pod_directory / "containers" / container.get("name", "")
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / uuid.uuid4().hex[:8]
    path.touch()
    os.chmod(path, 0o666)  # whatever the umask: any user the container runs as may write it
    return path


def mount(container: dict[str, Any], path: Path) -> dict[str, Any]:
    """The file's bind mount at the container's terminationMessagePath."""
    return {"source": str(path), "target": container["terminationMessagePath"], "readOnly": False}


def tail_of_file(path: Path, limit: int) -> str:
    """The last `limit` bytes of the file ("" when it is gone)."""
    try:
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            handle.seek(max(0, size - limit))
            return handle.read(limit).decode(errors="replace")
    except FileNotFoundError:
        return ""
    except OSError as error:
        return f"Error on reading termination log {path}: {error}"


def tail_of_logs(log_path: str) -> str:
    """The last 2048 bytes of the container's last 80 log lines."""
    reader = LogReader(log_path, timestamps=False, since=None, tail=MAX_LOG_LINES, limit_bytes=None)
    return b"".join(reader.chunks())[-MAX_LOG_BYTES:].decode(errors="replace")


def message(container: dict[str, Any], path: Path | None, exit_code: int, log_path: str) -> str:
    """The terminated state's message (short, bounded reads: at most 4 KiB of the file, 80 lines of logs)."""
    fallback = container.get("terminationMessagePolicy") == "FallbackToLogsOnError" and exit_code != 0
    text = tail_of_file(path, MAX_MESSAGE) if path is not None else ""
    if not text and fallback:
        return tail_of_logs(log_path)
    return text
