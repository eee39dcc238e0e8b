"""The audit log: one audit.k8s.io/v1 Event per request (level Metadata), as JSON lines, in a file created 0600.

Off unless a path is given. Writing happens on a background thread, so request handling never waits on disk.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import queue
import threading
import uuid
from pathlib import Path
from typing import Any

import orjson
from mini_kube.apiserver.auth.rbac import AttributesLike
from mini_kube.apiserver.auth.user import UserInfo
from mini_kube.apiserver.ratelog import RATE_LIMITED
from mini_kube.machinery import times
from mini_kube.machinery.times import format_micro

_STOP = object()


def object_ref(attrs: AttributesLike, api_version: str = "") -> dict[str, str] | None:
    """The event's objectRef for a resource request (None for /healthz and friends)."""
    if not attrs.is_resource:
        return None
    ref = {"resource": attrs.resource, "namespace": attrs.namespace, "name": attrs.name,
           "apiGroup": attrs.api_group, "apiVersion": api_version or getattr(attrs, "api_version", ""),
           "subresource": attrs.subresource}
    return {k: v for k, v in ref.items() if v}


def make_event(*, user: UserInfo, attrs: AttributesLike, request_uri: str, code: int,
               received: dt.datetime, audit_id: str | None = None, impersonated: UserInfo | None = None,
               source_ips: list[str] | None = None, user_agent: str = "", status_reason: str = "",
               status_message: str = "", annotations: dict[str, str] | None = None,
               now: dt.datetime | None = None) -> dict[str, Any]:
    """A ResponseComplete Event at level Metadata: who did what to which object, and the response code."""
    event: dict[str, Any] = {
        "kind": "Event", "apiVersion": "audit.k8s.io/v1", "level": "Metadata",
        "auditID": audit_id or str(uuid.uuid4()), "stage": "ResponseComplete",
        "requestURI": request_uri, "verb": attrs.verb, "user": user.to_api(),
    }
    if impersonated is not None:
        event["impersonatedUser"] = impersonated.to_api()
    event["sourceIPs"] = source_ips or []
    if user_agent:
        event["userAgent"] = user_agent
    ref = object_ref(attrs)
    if ref:
        event["objectRef"] = ref
    status: dict[str, Any] = {"metadata": {}}
    if code >= 400:
        status["status"] = "Failure"
        if status_message:
            status["message"] = status_message
        if status_reason:
            status["reason"] = status_reason
    status["code"] = code
    event["responseStatus"] = status
    event["requestReceivedTimestamp"] = format_micro(received)
    event["stageTimestamp"] = format_micro(now or times.now())
    if annotations:
        event["annotations"] = annotations
    return event


def open_private(path: Path) -> Any:
    """Open `path` for appending, creating it 0600 (owner only, as upstream's audit log) when it is new."""
    return os.fdopen(os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600), "ab", buffering=0)


class AuditLog:
    """Appends events to `path` from a writer thread; a no-op when `path` is None.

    Failure policy: requests never wait for the audit log. When the file cannot be written (disk full, removed)
    or more than MAX_QUEUED events wait, events are dropped: `dropped` counts them and a warning says so (at
    most once per LOG_INTERVAL); the writer keeps going and reopens the file on the next batch.
    """

    MAX_QUEUED = 10_000

    def __init__(self, path: str | Path | None) -> None:
        self.path = Path(path) if path else None
        self._queue: queue.Queue[Any] = queue.Queue(self.MAX_QUEUED)
        self.dropped = 0
        self._thread: threading.Thread | None = None
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._thread = threading.Thread(target=self._run, name="audit-writer", daemon=True)
            self._thread.start()

    @property
    def enabled(self) -> bool:
        return self.path is not None

    def log(self, event: dict[str, Any]) -> None:
        """Queue one event; returns immediately (dropping it, counted, when the writer is too far behind)."""
        if self._thread is not None:
            try:
                self._queue.put_nowait(event)
            except queue.Full:
                self._drop(1, "the audit writer is behind")

    def _drop(self, count: int, why: str) -> None:
        self.dropped += count
        RATE_LIMITED.warning("audit-drop", "audit: %s; %d events dropped so far", why, self.dropped)

    def _run(self) -> None:
        assert self.path is not None
        handle = None
        while True:
            batch = [self._queue.get()]
            while not self._queue.empty():
                batch.append(self._queue.get_nowait())
            stop = any(i is _STOP for i in batch)
            events = [i for i in batch if i is not _STOP]
            if events:
                try:
                    handle = handle or open_private(self.path)
                    handle.write(b"".join(orjson.dumps(i) + b"\n" for i in events))
                except OSError as exc:
                    self._drop(len(events), f"cannot write {self.path}: {exc.strerror or exc}")
                    if handle is not None:
                        with contextlib.suppress(OSError):
                            handle.close()
                    handle = None
            if stop:
                if handle is not None:
                    handle.close()
                return

    def close(self, timeout: float = 5.0) -> None:
        """Flush what is queued and stop the writer."""
        if self._thread is not None and self._thread.is_alive():
            self._queue.put(_STOP)
            self._thread.join(timeout)
