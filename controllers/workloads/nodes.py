"""Which nodes a Pod may run on, as the scheduler's NodeName, NodeAffinity and TaintToleration plugins judge it
(what the DaemonSet controller asks before it makes a Pod for a node)."""

from __future__ import annotations

from typing import Any

from mini_kube.machinery.labels import node_selector_matches
from mini_kube.machinery.meta import meta
from mini_kube.machinery.taints import untolerated_taint


def affinity_matches(pod_spec: dict[str, Any], node: dict[str, Any]) -> bool:
    """nodeSelector and required node affinity (terms ORed) against the node."""
    labels = meta(node).get("labels") or {}
    if any(labels.get(k) != v for k, v in (pod_spec.get("nodeSelector") or {}).items()):
        return False
    required = (((pod_spec.get("affinity") or {}).get("nodeAffinity") or {})
                .get("requiredDuringSchedulingIgnoredDuringExecution"))
    if required is None:
        return True
    return node_selector_matches(required, meta(node).get("name", ""), labels)


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
