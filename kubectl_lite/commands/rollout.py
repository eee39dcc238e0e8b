"""`rollout status|history|undo|restart|pause|resume` for Deployments (status also for StatefulSets and
DaemonSets), with kubectl's messages."""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from mini_kube.machinery.times import now_rfc3339

from ..printing import tabulate, type_name
from ..session import Session, Target, UsageError

REVISION = "deployment.kubernetes.io/revision"
POLL_SECONDS = 0.1


def add_parser(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("rollout", parents=[common], help="Manage the rollout of a resource")
    verbs = p.add_subparsers(dest="rollout_command", required=True)
    for verb in ("status", "history", "undo", "restart", "pause", "resume"):
        v = verbs.add_parser(verb, parents=[common])
        v.add_argument("words", nargs="+")
        if verb == "status":
            v.add_argument("-w", "--watch", default="true", choices=["true", "false"])
            v.add_argument("--timeout", default="0s")
        if verb in ("undo", "history"):
            v.add_argument("--to-revision" if verb == "undo" else "--revision", dest="revision", type=int, default=0)
        v.set_defaults(run=VERBS[verb])


def _targets(session: Session) -> list[Target]:
    return session.named_targets(session.args.words, "required resource not specified")


def _label(target: Target) -> str:
    return f"{type_name(target.resource.kind, target.resource.group)}/{target.name}"


def deployment_status(d: dict[str, Any]) -> tuple[str, bool]:
    """kubectl's rollout message for a Deployment and whether the rollout is done."""
    name = d["metadata"]["name"]
    spec, status = d.get("spec") or {}, d.get("status") or {}
    if d["metadata"].get("generation", 0) > status.get("observedGeneration", 0):
        return "Waiting for deployment spec update to be observed...\n", False
    for cond in status.get("conditions") or ():
        if cond.get("type") == "Progressing" and cond.get("reason") == "ProgressDeadlineExceeded":
            raise UsageError(f"deployment \"{name}\" exceeded its progress deadline")
    want, updated = spec.get("replicas", 1), status.get("updatedReplicas", 0)
    if updated < want:
        return (f"Waiting for deployment \"{name}\" rollout to finish: {updated} out of {want} new replicas have "
                "been updated...\n"), False
    if status.get("replicas", 0) > updated:
        return (f"Waiting for deployment \"{name}\" rollout to finish: {status['replicas'] - updated} old "
                "replicas are pending termination...\n"), False
    if status.get("availableReplicas", 0) < updated:
        return (f"Waiting for deployment \"{name}\" rollout to finish: {status.get('availableReplicas', 0)} of "
                f"{updated} updated replicas are available...\n"), False
    return f"deployment \"{name}\" successfully rolled out\n", True


def _workload_status(obj: dict[str, Any]) -> tuple[str, bool]:
    kind, name = str(obj.get("kind") or ""), obj["metadata"]["name"]
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    if kind == "Deployment":
        return deployment_status(obj)
    if obj["metadata"].get("generation", 0) > status.get("observedGeneration", 0):
        return f"Waiting for {kind.lower()} spec update to be observed...\n", False
    if kind == "DaemonSet":
        want, updated = status.get("desiredNumberScheduled", 0), status.get("updatedNumberScheduled", 0)
        if updated < want:
            return (f"Waiting for daemon set \"{name}\" rollout to finish: {updated} out of {want} new pods have "
                    "been updated...\n"), False
        if status.get("numberAvailable", 0) < want:
            return (f"Waiting for daemon set \"{name}\" rollout to finish: {status.get('numberAvailable', 0)} of "
                    f"{want} updated pods are available...\n"), False
        return f"daemon set \"{name}\" successfully rolled out\n", True
    if kind == "StatefulSet":
        want, ready = spec.get("replicas", 1), status.get("readyReplicas", 0)
        if ready < want:
            return f"Waiting for {want - ready} pods to be ready...\n", False
        return f"statefulset rolling update complete {want} pods at revision {status.get('updateRevision', '')}...\n", True
    raise UsageError(f"no status viewer has been implemented for {kind}")


def run_status(session: Session) -> int:
    args = session.args
    timeout = float(args.timeout.rstrip("s") or 0) if args.timeout.endswith("s") else float(args.timeout)
    deadline = time.monotonic() + timeout if timeout else None
    for target in _targets(session):
        last = ""
        while True:
            obj = session.request("GET", target.resource.path(target.namespace, target.name))
            message, done = _workload_status(obj)
            if message != last:
                sys.stdout.write(message)
                sys.stdout.flush()
                last = message
            if done or args.watch == "false":
                break
            if deadline and time.monotonic() > deadline:
                print("error: timed out waiting for the condition", file=sys.stderr)
                return 1
            time.sleep(POLL_SECONDS)
    return 0


def _replicasets(session: Session, deployment: dict[str, Any]) -> list[dict[str, Any]]:
    namespace = deployment["metadata"]["namespace"]
    listed = session.request("GET", f"/apis/apps/v1/namespaces/{namespace}/replicasets")
    uid = deployment["metadata"]["uid"]
    owned = [rs for rs in listed.get("items") or ()
             if any(o.get("uid") == uid for o in rs["metadata"].get("ownerReferences") or ())]
    return sorted(owned, key=lambda rs: int((rs["metadata"].get("annotations") or {}).get(REVISION, 0)))


def run_history(session: Session) -> int:
    for target in _targets(session):
        deployment = session.request("GET", target.resource.path(target.namespace, target.name))
        rows = [["REVISION", "CHANGE-CAUSE"]]
        for rs in _replicasets(session, deployment):
            annotations = rs["metadata"].get("annotations") or {}
            rows.append([annotations.get(REVISION, "0"), annotations.get("kubernetes.io/change-cause", "<none>")])
        sys.stdout.write(f"{_label(target)} \n{tabulate(rows)}\n")
    return 0


def run_undo(session: Session) -> int:
    for target in _targets(session):
        deployment = session.request("GET", target.resource.path(target.namespace, target.name))
        history = _replicasets(session, deployment)
        revisions = {int((rs["metadata"].get("annotations") or {}).get(REVISION, 0)): rs for rs in history}
        if session.args.revision:
            chosen = revisions.get(session.args.revision)
            if chosen is None:
                raise UsageError(f"unable to find specified revision {session.args.revision} in history")
        else:
            current = int((deployment["metadata"].get("annotations") or {}).get(REVISION, 0))
            older = [r for r in sorted(revisions) if r != current]
            if not older:
                raise UsageError(f"no rollout history found for deployment \"{target.name}\"")
            chosen = revisions[older[-1]]
        template = json.loads(json.dumps(chosen["spec"]["template"]))
        (template.get("metadata") or {}).get("labels", {}).pop("pod-template-hash", None)
        if template == deployment["spec"]["template"]:
            print(f"{_label(target)} skipped rollback (current template already matches revision "
                  f"{(chosen['metadata'].get('annotations') or {}).get(REVISION)})")
            continue
        patch = [{"op": "replace", "path": "/spec/template", "value": template}]
        session.request("PATCH", target.resource.path(target.namespace, target.name), body=patch,
                        content_type="application/json-patch+json")
        print(f"{_label(target)} rolled back")
    return 0


def run_restart(session: Session) -> int:
    stamp = now_rfc3339()
    patch = {"spec": {"template": {"metadata": {"annotations": {"kubectl.kubernetes.io/restartedAt": stamp}}}}}
    for target in _targets(session):
        session.request("PATCH", target.resource.path(target.namespace, target.name), body=patch,
                        content_type="application/strategic-merge-patch+json",
                        params={"fieldManager": "kubectl-rollout"})
        print(f"{_label(target)} restarted")
    return 0


def _set_paused(session: Session, paused: bool) -> int:
    word = "paused" if paused else "resumed"
    for target in _targets(session):
        current = session.request("GET", target.resource.path(target.namespace, target.name))
        if bool((current.get("spec") or {}).get("paused")) == paused:
            raise UsageError(f"{_label(target)} is already {word}" if paused else f"{_label(target)} is not paused")
        session.request("PATCH", target.resource.path(target.namespace, target.name),
                        body={"spec": {"paused": paused}}, content_type="application/merge-patch+json",
                        params={"fieldManager": "kubectl-rollout"})
        print(f"{_label(target)} {word}")
    return 0


VERBS = {"status": run_status, "history": run_history, "undo": run_undo, "restart": run_restart,
         "pause": lambda s: _set_paused(s, True), "resume": lambda s: _set_paused(s, False)}
