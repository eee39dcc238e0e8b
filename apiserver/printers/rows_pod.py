"""Row cells for Pods and PodTemplates: the READY and STATUS summaries kubectl users read every day."""

from __future__ import annotations

from typing import Any

from mini_kube.apiserver.printers.formatting import NONE, container_cells, dig, format_labels
from mini_kube.apiserver.printers.humanize import epoch, human_duration, since

Obj = dict[str, Any]
_TERMINAL = ("Succeeded", "Failed")
_COMPLETED = {
    "Succeeded": [{"type": "Completed", "status": "True", "reason": "Succeeded",
                   "message": "The pod has completed successfully."}],
    "Failed": [{"type": "Completed", "status": "True", "reason": "Failed", "message": "The pod failed."}],
}


def _restartable(container: Obj | None) -> bool:
    return container is not None and container.get("restartPolicy") == "Always"


def _later(current: float | None, status: Obj) -> float | None:
    """The later of `current` and the container's last termination time."""
    finished = epoch(dig(status, "lastState", "terminated", "finishedAt"))
    if finished is not None and (current is None or current < finished):
        return finished
    return current


def _has_condition(status: Obj, kind: str) -> bool:
    for condition in status.get("conditions") or ():
        if condition.get("type") == kind:
            return condition.get("status") == "True"
    return False


def _exit_text(terminated: Obj, prefix: str) -> str:
    if terminated.get("signal"):
        return f"{prefix}Signal:{terminated['signal']}"
    return f"{prefix}ExitCode:{terminated.get('exitCode', 0)}"


class _Summary:
    """Ready count, restart count and status reason, computed the way upstream's printPod walks statuses."""

    def __init__(self, pod: Obj) -> None:
        self.spec: Obj = pod.get("spec") or {}
        self.status: Obj = pod.get("status") or {}
        self.meta: Obj = pod.get("metadata") or {}
        self.total = len(self.spec.get("containers") or ())
        self.ready = 0
        self.restarts = 0
        self.last_restart: float | None = None
        phase = self.status.get("phase") or ""
        self.reason = self.status.get("reason") or phase
        for condition in self.status.get("conditions") or ():
            if condition.get("type") == "PodScheduled" and condition.get("reason") == "SchedulingGated":
                self.reason = "SchedulingGated"
        initializing = self._init_containers()
        if not initializing or _has_condition(self.status, "Initialized"):
            self._containers()
        if self.meta.get("deletionTimestamp"):
            if self.status.get("reason") == "NodeLost":
                self.reason = "Unknown"
            elif phase not in _TERMINAL:
                self.reason = "Terminating"

    def _init_containers(self) -> bool:
        specs = {c.get("name"): c for c in self.spec.get("initContainers") or ()}
        self.total += sum(1 for c in specs.values() if _restartable(c))
        self.sidecar_restarts = 0
        self.sidecar_last: float | None = None
        count = len(self.spec.get("initContainers") or ())
        for index, cs in enumerate(self.status.get("initContainerStatuses") or ()):
            restartable = _restartable(specs.get(cs.get("name")))
            self.restarts += cs.get("restartCount") or 0
            self.last_restart = _later(self.last_restart, cs)
            if restartable:
                self.sidecar_restarts += cs.get("restartCount") or 0
                self.sidecar_last = _later(self.sidecar_last, cs)
            state = cs.get("state") or {}
            terminated, waiting = state.get("terminated"), state.get("waiting")
            if terminated is not None and (terminated.get("exitCode") or 0) == 0:
                continue
            if restartable and cs.get("started"):
                self.ready += 1 if cs.get("ready") else 0
                continue
            if terminated is not None:
                reason = terminated.get("reason")
                self.reason = "Init:" + reason if reason else _exit_text(terminated, "Init:")
            elif waiting and waiting.get("reason") and waiting["reason"] != "PodInitializing":
                self.reason = "Init:" + waiting["reason"]
            else:
                self.reason = f"Init:{index}/{count}"
            return True
        return False

    def _containers(self) -> None:
        self.restarts, self.last_restart = self.sidecar_restarts, self.sidecar_last
        running = False
        for cs in reversed(self.status.get("containerStatuses") or ()):
            self.restarts += cs.get("restartCount") or 0
            self.last_restart = _later(self.last_restart, cs)
            state = cs.get("state") or {}
            waiting, terminated = state.get("waiting"), state.get("terminated")
            if waiting and waiting.get("reason"):
                self.reason = waiting["reason"]
            elif terminated and terminated.get("reason"):
                self.reason = terminated["reason"]
            elif terminated is not None:
                self.reason = _exit_text(terminated, "")
            elif cs.get("ready") and state.get("running") is not None:
                running = True
                self.ready += 1
        if self.reason == "Completed" and running:
            self.reason = "Running" if _has_condition(self.status, "Ready") else "NotReady"


def _readiness_gates(spec: Obj, status: Obj) -> str:
    gates = spec.get("readinessGates") or []
    if not gates:
        return NONE
    conditions: dict[str, str] = {}
    for condition in status.get("conditions") or ():
        conditions.setdefault(condition.get("type"), condition.get("status"))
    passed = sum(1 for gate in gates if conditions.get(gate.get("conditionType")) == "True")
    return f"{passed}/{len(gates)}"


def pod(obj: Obj, now: float) -> list:
    summary = _Summary(obj)
    restarts = str(summary.restarts)
    if summary.restarts and summary.last_restart is not None:
        restarts = f"{summary.restarts} ({human_duration(now - summary.last_restart)} ago)"
    spec, status = summary.spec, summary.status
    pod_ips = status.get("podIPs") or ([{"ip": status["podIP"]}] if status.get("podIP") else [])
    return [
        summary.meta.get("name", ""), f"{summary.ready}/{summary.total}", summary.reason, restarts,
        since(summary.meta.get("creationTimestamp"), now), (pod_ips[0].get("ip") if pod_ips else "") or NONE,
        spec.get("nodeName") or NONE, status.get("nominatedNodeName") or NONE, _readiness_gates(spec, status),
    ]


def pod_conditions(obj: Obj) -> list[Obj] | None:
    """Row conditions: a finished pod's row says it completed (type `Completed`)."""
    return _COMPLETED.get(dig(obj, "status", "phase"))


def pod_template(obj: Obj, now: float) -> list:
    template = obj.get("template") or {}
    names, images = container_cells(dig(template, "spec", "containers"))
    return [dig(obj, "metadata", "name", default=""), names, images,
            format_labels(dig(template, "metadata", "labels"))]
