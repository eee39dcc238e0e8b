"""Which nodes a Pod may run on, as the scheduler's NodeName, NodeAffinity and TaintToleration plugins judge it
(what the DaemonSet controller asks before it makes a Pod for a node)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mini_kube.machinery.meta import meta


def tolerates(toleration: dict[str, Any], taint: dict[str, Any]) -> bool:
    """v1.Toleration.ToleratesTaint."""
    if toleration.get("effect") and toleration["effect"] != taint.get("effect"):
        return False
    if toleration.get("key") and toleration["key"] != taint.get("key"):
        return False
    operator = toleration.get("operator") or "Equal"
    if operator == "Exists":
        return True
    return operator == "Equal" and (toleration.get("value") or "") == (taint.get("value") or "")


def untolerated_taint(taints: list[dict[str, Any]], tolerations: list[dict[str, Any]],
                      effects: Callable[[dict[str, Any]], bool]) -> dict[str, Any] | None:
    """The first taint (among those `effects` selects) that no toleration tolerates."""
    for taint in taints:
        if effects(taint) and not any(tolerates(t, taint) for t in tolerations):
            return taint
    return None


def _requirement_matches(req: dict[str, Any], values_of: dict[str, str]) -> bool:
    key, op, values = req.get("key") or "", req.get("operator"), req.get("values") or []
    present = key in values_of
    value = values_of.get(key, "")
    if op == "In":
        return present and value in values
    if op == "NotIn":
        return not present or value not in values
    if op == "Exists":
        return present
    if op == "DoesNotExist":
        return not present
    if op in ("Gt", "Lt"):
        try:
            have, want = int(value), int(values[0])
        except (ValueError, IndexError):
            return False
        return present and (have > want if op == "Gt" else have < want)
    return False


def term_matches(term: dict[str, Any], node: dict[str, Any]) -> bool:
    """A NodeSelectorTerm: all of its expressions and fields (an empty term matches nothing)."""
    exprs, fields = term.get("matchExpressions") or [], term.get("matchFields") or []
    if not exprs and not fields:
        return False
    labels = meta(node).get("labels") or {}
    node_fields = {"metadata.name": meta(node).get("name", "")}
    return all(_requirement_matches(r, labels) for r in exprs) and all(
        _requirement_matches(r, node_fields) for r in fields)


def affinity_matches(pod_spec: dict[str, Any], node: dict[str, Any]) -> bool:
    """nodeSelector and required node affinity (terms ORed) against the node."""
    labels = meta(node).get("labels") or {}
    if any(labels.get(k) != v for k, v in (pod_spec.get("nodeSelector") or {}).items()):
        return False
    required = (((pod_spec.get("affinity") or {}).get("nodeAffinity") or {})
                .get("requiredDuringSchedulingIgnoredDuringExecution"))
    if required is None:
        return True
    return any(term_matches(term, node) for term in required.get("nodeSelectorTerms") or [])


def should_run(pod_spec: dict[str, Any], node: dict[str, Any]) -> tuple[bool, bool]:
    """(should a daemon Pod with this spec be placed on the node, may one already there keep running):
    NodeShouldRunDaemonPod. `pod_spec` already carries the daemon tolerations."""
    name = meta(node).get("name")
    if pod_spec.get("nodeName") not in (None, "", name) or not affinity_matches(pod_spec, node):
        return False, False
    taints = (node.get("spec") or {}).get("taints") or []
    tolerations = pod_spec.get("tolerations") or []
    if untolerated_taint(taints, tolerations, lambda t: t.get("effect") in ("NoSchedule", "NoExecute")) is None:
        return True, True
    return False, untolerated_taint(taints, tolerations, lambda t: t.get("effect") == "NoExecute") is None
