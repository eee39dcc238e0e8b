"""An Agent's status from what the operator found: its runtime, its base ConfigMap, its Deployment's rollout and its
Service. Conditions are metav1.Conditions (Ready, Progressing, RuntimeResolved); a condition keeps its
lastTransitionTime while its status does not change."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mini_kube.machinery.meta import meta
from mini_kube.machinery.times import now_rfc3339

from .api import APPLY_FAILED, CONFIGMAP_NOT_FOUND, PROGRESSING, READY, RUNTIME_NOT_FOUND, RUNTIME_RESOLVED
from .render import endpoint, selector_string


@dataclass
class Observed:
    """What one reconcile found."""

    runtime_kind: str = ""  # ServingRuntime or ClusterServingRuntime; empty when not found
    runtime_name: str = ""
    missing_configmap: str = ""  # the referenced ConfigMap, when it does not exist
    deployment: dict[str, Any] | None = None
    service: dict[str, Any] | None = None
    failure: str = ""  # the first child that could not be applied, and why


def rollout(d: dict[str, Any]) -> tuple[str, str]:
    """(state, message) of a Deployment's rollout as `kubectl rollout status` words it; state is one of
    Complete, Progressing, Failed."""
    name, spec, status = meta(d)["name"], d.get("spec") or {}, d.get("status") or {}
    if int(meta(d).get("generation") or 0) > int(status.get("observedGeneration") or 0):
        return "Progressing", "Waiting for deployment spec update to be observed..."
    progressing = next((c for c in status.get("conditions") or () if c.get("type") == "Progressing"), None)
    if progressing and progressing.get("reason") == "ProgressDeadlineExceeded":
        return "Failed", f'deployment "{name}" exceeded its progress deadline'
    wanted = int(spec.get("replicas", 1))
    updated, total = int(status.get("updatedReplicas") or 0), int(status.get("replicas") or 0)
    available = int(status.get("availableReplicas") or 0)
    waiting = f'Waiting for deployment "{name}" rollout to finish: '
    if updated < wanted:
        return "Progressing", waiting + f"{updated} out of {wanted} new replicas have been updated..."
    if total > updated:
        return "Progressing", waiting + f"{total - updated} old replicas are pending termination..."
    if available < updated:
        return "Progressing", waiting + f"{available} of {updated} updated replicas are available..."
    return "Complete", f'deployment "{name}" successfully rolled out'


def _condition(kind: str, status: bool, reason: str, message: str, generation: int,
               old: list[dict[str, Any]]) -> dict[str, Any]:
    word = "True" if status else "False"
    previous = next((c for c in old if c.get("type") == kind), None)
    since = previous["lastTransitionTime"] if previous and previous.get("status") == word and \
        previous.get("lastTransitionTime") else now_rfc3339()
    return {"type": kind, "status": word, "observedGeneration": generation, "lastTransitionTime": since,
            "reason": reason, "message": message}


def agent_status(agent: dict[str, Any], seen: Observed) -> dict[str, Any]:
    """The Agent's whole status."""
    generation = int(meta(agent).get("generation") or 0)
    old = (agent.get("status") or {}).get("conditions") or []
    runtime = agent.get("spec", {}).get("runtime", "")
    if seen.runtime_kind:
        resolved = _condition(RUNTIME_RESOLVED, True, "Resolved", f"{seen.runtime_kind} {seen.runtime_name}",
                              generation, old)
    else:
        resolved = _condition(RUNTIME_RESOLVED, False, RUNTIME_NOT_FOUND,
                              f'no ServingRuntime "{runtime}" in namespace "{meta(agent)["namespace"]}" and no '
                              f'ClusterServingRuntime "{runtime}"', generation, old)
    blocked: tuple[str, str] | None = (RUNTIME_NOT_FOUND, resolved["message"]) if not seen.runtime_kind else (
        (CONFIGMAP_NOT_FOUND, f'ConfigMap "{seen.missing_configmap}" not found') if seen.missing_configmap else None)
    d = seen.deployment
    if seen.failure and not blocked:
        blocked = (APPLY_FAILED, seen.failure)
    if blocked:
        progressing = _condition(PROGRESSING, False, *blocked, generation, old)
        ready = _condition(READY, False, *blocked, generation, old)
    elif d is None:
        progressing = _condition(PROGRESSING, True, "Creating", "creating the Deployment", generation, old)
        ready = _condition(READY, False, "Creating", "creating the Deployment", generation, old)
    else:
        state, message = rollout(d)
        reason = {"Complete": "RolloutComplete", "Progressing": "RollingOut", "Failed": "ProgressDeadlineExceeded"}
        progressing = _condition(PROGRESSING, state == "Progressing", reason[state], message, generation, old)
        wanted = int((d.get("spec") or {}).get("replicas", 1))
        ready_count = int((d.get("status") or {}).get("readyReplicas") or 0)
        if state == "Complete" and ready_count >= wanted:
            ready = _condition(READY, True, "Available", f"{ready_count}/{wanted} replicas ready", generation, old)
        else:
            ready = _condition(READY, False, reason[state] if state == "Failed" else "RolloutInProgress",
                               f"{ready_count}/{wanted} replicas ready: {message}", generation, old)
    status: dict[str, Any] = {"observedGeneration": generation, "conditions": [ready, progressing, resolved],
                              "selector": selector_string(agent), "endpoint": endpoint(agent, seen.service)}
    if d is not None:
        status["replicas"] = int((d.get("status") or {}).get("replicas") or 0)
        status["readyReplicas"] = int((d.get("status") or {}).get("readyReplicas") or 0)
    if seen.runtime_kind:
        status["runtime"] = {"kind": seen.runtime_kind, "name": seen.runtime_name}
    return status


def same_status(a: dict[str, Any] | None, b: dict[str, Any]) -> bool:
    """Equal, apart from the order of conditions."""
    if a is None:
        return False
    key = lambda c: c.get("type", "")  # noqa: E731
    return {**a, "conditions": sorted(a.get("conditions") or [], key=key)} == \
        {**b, "conditions": sorted(b.get("conditions") or [], key=key)}
