"""What the kubelet knows of each container of a Pod, in the shape of a v1 ContainerStatus."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from mini_kube.machinery.times import now_rfc3339

from .runtime.base import Container


def image_ref(image: str) -> str:
    """`nginx` -> `docker.io/library/nginx:latest`, as containerd reports image names."""
    name, tag = image, ""
    if "@" not in image and ":" in image.rsplit("/", 1)[-1]:
        name, tag = image.rsplit(":", 1)
    parts = name.split("/")
    if len(parts) == 1:
        parts = ["docker.io", "library", *parts]
    elif "." not in parts[0] and ":" not in parts[0] and parts[0] != "localhost":
        parts = ["docker.io", *parts]
    return "/".join(parts) + ("" if "@" in image else f":{tag or 'latest'}")


def image_id(image: str) -> str:
    ref = image_ref(image)
    return f"{ref.rsplit(':', 1)[0]}@sha256:{hashlib.sha256(ref.encode()).hexdigest()}"


@dataclass
class ContainerRecord:
    """One container's state: waiting / running / terminated, the last termination, restarts, readiness."""

    name: str
    image: str
    init: bool = False
    state: dict[str, Any] = field(default_factory=lambda: {"waiting": {"reason": "ContainerCreating"}})
    last_state: dict[str, Any] = field(default_factory=dict)
    restart_count: int = 0
    ready: bool = False
    started: bool = False
    container: Container | None = None
    container_id: str = ""
    started_monotonic: float = 0.0
    image_id: str = ""  # the image's real ID (a loaded image's config digest), when it has one

    @property
    def running(self) -> bool:
        return "running" in self.state

    @property
    def terminated(self) -> dict[str, Any] | None:
        return self.state.get("terminated")

    def set_running(self, container: Container, monotonic: float) -> None:
        self.container = container
        self.container_id = container.id
        self.state = {"running": {"startedAt": now_rfc3339()}}
        self.started_monotonic = monotonic
        self.ready = False
        self.started = False

    def set_terminated(self, code: int, reason: str = "", message: str = "") -> None:
        started = (self.state.get("running") or {}).get("startedAt") or now_rfc3339()
        term: dict[str, Any] = {"exitCode": code, "reason": reason or ("Completed" if code == 0 else "Error"),
                                "startedAt": started, "finishedAt": now_rfc3339(), "containerID": self.container_id}
        if message:
            term["message"] = message
        self.state = {"terminated": term}
        self.ready = False
        self.started = False

    def set_waiting(self, reason: str, message: str = "") -> None:
        """Waiting again (back-off): the termination moves to lastState."""
        if "terminated" in self.state:
            self.last_state = {"terminated": self.state["terminated"]}
        self.state = {"waiting": {"reason": reason, **({"message": message} if message else {})}}

    def status(self) -> dict[str, Any]:
        out: dict[str, Any] = {"containerID": self.container_id or None, "image": image_ref(self.image),
                               "imageID": (self.image_id or image_id(self.image)) if self.container_id else "",
                               "lastState": self.last_state, "name": self.name, "ready": self.ready,
                               "restartCount": self.restart_count, "started": self.started, "state": self.state}
        if not self.container_id:
            del out["containerID"]
        security = getattr(self.container, "security", None) if self.container_id else None
        if security and "uid" in security:  # the identity its process got, as the runtime reports it
            out["user"] = {"linux": {"uid": security["uid"], "gid": security["gid"],
                                     "supplementalGroups": list(security.get("groups") or ())}}
        if self.init:
            out["started"] = self.running
            if (self.terminated or {}).get("exitCode") == 0:  # as upstream's prober manager: done is ready
                out["ready"] = True
        return out
