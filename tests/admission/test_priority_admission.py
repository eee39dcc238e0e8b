"""The Priority admission plugin through real kubectl: the server starts with upstream's two system
PriorityClasses; a Pod's priorityClassName becomes its spec.priority and preemptionPolicy; a missing class, or a
priority that differs from the class's, is refused with upstream's 403; a Pod naming no class gets the global
default class (only one may exist), else priority 0; an update keeps the priority set at creation."""

from __future__ import annotations

import json

from tests.helpers import kubectl


def _pod(name: str, **spec: object) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                       "spec": {"containers": [{"name": "main", "image": "busybox"}], **spec}})


def _create(kube, ns: str, body: str, dry_run: bool = True):
    return kubectl(kube, "-n", ns, "create", "-f", "-", "-o", "json", *(["--dry-run=server"] if dry_run else []),
                   input=body, check=False)


def _spec(result) -> dict:
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)["spec"]


def test_system_priority_classes_exist_from_the_start(mini_kube_session):
    listed = kubectl(mini_kube_session, "get", "priorityclasses", "-o", "json").stdout
    classes = {c["metadata"]["name"]: c for c in json.loads(listed)["items"]}
    assert classes["system-node-critical"]["value"] == 2000001000
    assert classes["system-cluster-critical"]["value"] == 2000000000
    assert classes["system-cluster-critical"]["description"] == (
        "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.")
    assert classes["system-node-critical"]["preemptionPolicy"] == "PreemptLowerPriority"


def test_the_class_decides_priority_and_preemption_policy(mini_kube_session, kube_namespace):
    kube, ns = mini_kube_session, kube_namespace
    kubectl(kube, "create", "priorityclass", f"polite-{ns}", "--value=700", "--preemption-policy=Never")
    try:
        spec = _spec(_create(kube, ns, _pod("p", priorityClassName=f"polite-{ns}")))
        assert (spec["priority"], spec["preemptionPolicy"]) == (700, "Never")
        critical = _spec(_create(kube, ns, _pod("c", priorityClassName="system-cluster-critical")))
        assert (critical["priority"], critical["preemptionPolicy"]) == (2000000000, "PreemptLowerPriority")
        plain = _spec(_create(kube, ns, _pod("plain")))
        assert (plain["priority"], plain["preemptionPolicy"]) == (0, "PreemptLowerPriority")
        assert "priorityClassName" not in plain
        assert _spec(_create(kube, ns, _pod("same", priorityClassName=f"polite-{ns}", priority=700)))["priority"] == 700
        mismatched = _create(kube, ns, _pod("p", priorityClassName=f"polite-{ns}", priority=5))
        assert mismatched.returncode == 1
        assert ('Error from server (Forbidden): error when creating "STDIN": pods "p" is forbidden: the integer '
                "value of priority (5) must not be provided in pod spec; priority admission controller computed 700 "
                "from the given PriorityClass name") in mismatched.stderr
        policy = _create(kube, ns, _pod("p", priorityClassName=f"polite-{ns}", preemptionPolicy="PreemptLowerPriority"))
        assert "the string value of PreemptionPolicy (PreemptLowerPriority) must not be provided in pod spec; " \
               "priority admission controller computed Never from the given PriorityClass name" in policy.stderr
        assert _create(kube, ns, _pod("bare", priority=3)).returncode == 1  # no class: the priority must be 0
    finally:
        kubectl(kube, "delete", "priorityclass", f"polite-{ns}")


def test_a_missing_class_is_refused(mini_kube_session, kube_namespace):
    refused = _create(mini_kube_session, kube_namespace, _pod("p", priorityClassName="no-such-class"))
    assert refused.returncode == 1
    assert ('Error from server (Forbidden): error when creating "STDIN": pods "p" is forbidden: no PriorityClass '
            "with name no-such-class was found") in refused.stderr


def test_the_global_default_class_and_only_one(mini_kube_session, kube_namespace):
    kube, ns = mini_kube_session, kube_namespace
    default = json.dumps({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                          "metadata": {"name": f"default-{ns}"}, "value": 42, "globalDefault": True})
    kubectl(kube, "create", "-f", "-", input=default)
    try:
        spec = _spec(_create(kube, ns, _pod("p")))
        assert (spec["priorityClassName"], spec["priority"]) == (f"default-{ns}", 42)
        second = kubectl(kube, "create", "priorityclass", f"second-{ns}", "--value=7", "--global-default",
                         check=False)
        assert second.returncode == 1
        assert second.stderr == (f'error: failed to create priorityclass: priorityclasses.scheduling.k8s.io '
                                 f'"second-{ns}" is forbidden: PriorityClass default-{ns} is already marked as '
                                 "default. Only one default can exist\n")
        # the default class itself may be updated and stay the default
        kubectl(kube, "annotate", "priorityclass", f"default-{ns}", "note=kept")
    finally:
        kubectl(kube, "delete", "priorityclass", f"default-{ns}")


def test_an_update_keeps_the_priority(mini_kube_session, kube_namespace):
    kube, ns = mini_kube_session, kube_namespace
    kubectl(kube, "create", "priorityclass", f"keep-{ns}", "--value=300")
    try:
        _spec(_create(kube, ns, _pod("p", priorityClassName=f"keep-{ns}"), dry_run=False))
        pod = json.loads(kubectl(kube, "-n", ns, "get", "pod", "p", "-o", "json").stdout)
        del pod["spec"]["priority"], pod["spec"]["preemptionPolicy"]
        pod["metadata"]["labels"] = {"changed": "yes"}
        kubectl(kube, "-n", ns, "replace", "-f", "-", input=json.dumps(pod))
        spec = json.loads(kubectl(kube, "-n", ns, "get", "pod", "p", "-o", "json").stdout)["spec"]
        assert (spec["priority"], spec["preemptionPolicy"]) == (300, "PreemptLowerPriority")
    finally:
        kubectl(kube, "-n", ns, "delete", "pod", "p", "--wait=false")
        kubectl(kube, "delete", "priorityclass", f"keep-{ns}")
