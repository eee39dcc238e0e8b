"""Deleting a CRD: the finalizer and Terminating conditions the apiserver uses while it removes instances.

`DELETE crd` does not remove the CRD at once: `mark_for_deletion` sets the deletionTimestamp, the
`customresourcecleanup.apiextensions.k8s.io` finalizer and Terminating=True (InstanceDeletionPending).
The cleanup then deletes every custom resource (`cleanup_started`, then `cleanup_finished`), removes the
finalizer, and the CRD (and with it the API) goes away.
"""

from __future__ import annotations

from typing import Any

from mini_kube.machinery.times import now_rfc3339

CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"


def set_condition(crd: dict[str, Any], type_: str, status: str, reason: str, message: str,
                  now: str | None = None) -> None:
    """SetCRDCondition: replace the condition of that type; the transition time changes with the status."""
    conditions = crd.setdefault("status", {}).setdefault("conditions", [])
    for existing in conditions:
        if existing.get("type") == type_:
            if existing.get("status") != status or not existing.get("lastTransitionTime"):
                existing["lastTransitionTime"] = now or now_rfc3339()
            existing.update(status=status, reason=reason, message=message)
            return
    conditions.append({"type": type_, "status": status, "lastTransitionTime": now or now_rfc3339(), "reason": reason,
                       "message": message})


def is_established(crd: dict[str, Any]) -> bool:
    return any(c.get("type") == "Established" and c.get("status") == "True"
               for c in (crd.get("status") or {}).get("conditions") or ())


def mark_for_deletion(crd: dict[str, Any], now: str | None = None) -> None:
    """What DELETE does to a CRD (in place): deletionTimestamp, cleanup finalizer, Terminating condition."""
    meta = crd.setdefault("metadata", {})
    meta.setdefault("deletionTimestamp", now or now_rfc3339())
    finalizers = meta.setdefault("finalizers", [])
    if CLEANUP_FINALIZER not in finalizers:
        finalizers.append(CLEANUP_FINALIZER)
    set_condition(crd, "Terminating", "True", "InstanceDeletionPending",
                  "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon", now)


def cleanup_started(crd: dict[str, Any], now: str | None = None) -> None:
    """The cleanup controller took the CRD: instance deletion is in progress."""
    set_condition(crd, "Terminating", "True", "InstanceDeletionInProgress", "CustomResource deletion is in progress",
                  now)


def cleanup_finished(crd: dict[str, Any], now: str | None = None) -> None:
    """All instances are gone (or there never were any): drop the finalizer so the CRD can be removed."""
    if is_established(crd):
        set_condition(crd, "Terminating", "False", "InstanceDeletionCompleted", "removed all instances", now)
    else:
        set_condition(crd, "Terminating", "False", "NeverEstablished", "resource was never established", now)
    meta = crd.setdefault("metadata", {})
    meta["finalizers"] = [f for f in meta.get("finalizers") or () if f != CLEANUP_FINALIZER]
    if not meta["finalizers"]:
        del meta["finalizers"]
