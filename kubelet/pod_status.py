"""A Pod's status computed from its containers' records, as the kubelet reports it: phase (upstream's getPhase
rules), conditions (PodReadyToStartContainers, Initialized, Ready, ContainersReady, with the upstream reasons
and messages; PodScheduled and others' conditions kept), container statuses, IPs and start time."""

from __future__ import annotations

from typing import Any

from mini_kube.machinery.times import now_rfc3339

from .records import ContainerRecord

OWN_CONDITIONS = ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady")


def phase(restart_policy: str, inits: list[ContainerRecord], containers: list[ContainerRecord]) -> str:
    """Pending / Running / Succeeded / Failed from the containers' states."""
    for record in inits:
        term = record.terminated
        if term is None or term["exitCode"] != 0:
            if term is not None and restart_policy == "Never":
                return "Failed"
            return "Pending"
    waiting = running = stopped = succeeded = failed = 0
    for record in containers:
        if record.running:
            running += 1
        elif record.terminated is not None:
            stopped += 1
            if record.terminated["exitCode"] == 0:
                succeeded += 1
            else:
                failed += 1
        elif record.last_state.get("terminated"):
            stopped += 1
            if record.last_state["terminated"]["exitCode"] == 0:
                succeeded += 1
            else:
                failed += 1
        else:
            waiting += 1
    if waiting:
        return "Pending"
    if running:
        return "Running"
    if restart_policy == "Always":
        return "Running"
    if restart_policy == "OnFailure":
        return "Running" if failed else "Succeeded"
    return "Failed" if failed else "Succeeded"


def _condition(kind: str, ok: bool, reason: str = "", message: str = "") -> dict[str, Any]:
    cond: dict[str, Any] = {"lastProbeTime": None, "lastTransitionTime": None, "status": "True" if ok else "False",
                            "type": kind}
    if not ok and reason:
        cond["reason"] = reason
    if not ok and message:
        cond["message"] = message
    return cond


def conditions(pod: dict[str, Any], current_phase: str, sandbox_ready: bool, inits: list[ContainerRecord],
               containers: list[ContainerRecord]) -> list[dict[str, Any]]:
    """The kubelet's conditions merged into the Pod's current ones (transition times kept when unchanged)."""
    terminal = current_phase in ("Succeeded", "Failed")
    pending_inits = [r.name for r in inits if not (r.terminated and r.terminated["exitCode"] == 0)]
    unready = [r.name for r in containers if not r.ready]
    gates = [g.get("conditionType") for g in (pod.get("spec") or {}).get("readinessGates") or ()]
    existing = {c.get("type"): c for c in (pod.get("status") or {}).get("conditions") or ()}
    missing_gates = [g for g in gates if (existing.get(g) or {}).get("status") != "True"]
    if terminal:
        ready_c = _condition("ContainersReady", False, "PodCompleted")
        ready = _condition("Ready", False, "PodCompleted")
    else:
        ready_c = _condition("ContainersReady", not unready, "ContainersNotReady",
                             f"containers with unready status: [{' '.join(unready)}]")
        ready = _condition("Ready", not unready and not missing_gates,
                           "ContainersNotReady" if unready else "ReadinessGatesNotReady",
                           f"containers with unready status: [{' '.join(unready)}]" if unready else
                           f"corresponding condition of pod readiness gate \"{missing_gates[0] if missing_gates else ''}\""
                           " does not exist.")
    mine = [
        _condition("PodReadyToStartContainers", sandbox_ready),
        _condition("Initialized", not pending_inits or terminal and not inits, "ContainersNotInitialized",
                   f"containers with incomplete status: [{' '.join(pending_inits)}]"),
        ready, ready_c,
    ]
    stamp = now_rfc3339()
    for cond in mine:
        old = existing.get(cond["type"])
        if old is not None and old.get("status") == cond["status"] and old.get("reason") == cond.get("reason"):
            cond["lastTransitionTime"] = old.get("lastTransitionTime")
        else:
            cond["lastTransitionTime"] = stamp
    others = [c for c in existing.values() if c.get("type") not in OWN_CONDITIONS]
    return mine + others


def status(pod: dict[str, Any], *, restart_policy: str, host_ip: str, pod_ip: str | None, start_time: str,
           sandbox_ready: bool, inits: list[ContainerRecord], containers: list[ContainerRecord],
           override: dict[str, str] | None = None,
           ephemerals: list[ContainerRecord] | None = None) -> dict[str, Any]:
    """The status the kubelet writes (a merge patch of `status`)."""
    current = (override or {}).get("phase") or phase(restart_policy, inits, containers)
    out: dict[str, Any] = {
        "phase": current,
        "conditions": conditions(pod, current, sandbox_ready, inits, containers),
        "hostIP": host_ip, "hostIPs": [{"ip": host_ip}], "startTime": start_time,
        "containerStatuses": [r.status() for r in containers],
    }
    if inits:
        out["initContainerStatuses"] = [r.status() for r in inits]
    if ephemerals:  # as upstream's kubelet reports them: never ready, no `started`
        out["ephemeralContainerStatuses"] = [{k: v for k, v in r.status().items() if k != "started"}
                                             for r in ephemerals]
    if pod_ip:
        out["podIP"] = pod_ip
        out["podIPs"] = [{"ip": pod_ip}]
    if override:
        out["reason"] = override.get("reason")
        out["message"] = override.get("message")
    return out
