"""The RuntimeClass admission plugin through real kubectl: a Pod naming a missing (or deleted) RuntimeClass is
refused with upstream's 403; the class's overhead becomes the Pod's, its scheduling nodeSelector and tolerations
are merged into the Pod's (a conflicting selector is refused); an overhead without a class is refused."""

from __future__ import annotations

import json

from tests.helpers import kubectl


def _pod(name: str, **spec: object) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                       "spec": {"containers": [{"name": "main", "image": "busybox"}], **spec}})


def _runtime_class(name: str, **fields: object) -> str:
    return json.dumps({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": name},
                       "handler": "runc", **fields})


def _create(kube, ns: str, body: str, dry_run: bool = True):
    return kubectl(kube, "-n", ns, "create", "-f", "-", "-o", "json", *(["--dry-run=server"] if dry_run else []),
                   input=body, check=False)


def test_missing_and_deleted_runtime_classes_are_refused(mini_kube_session, kube_namespace):
    kube, ns = mini_kube_session, kube_namespace
    name = f"rc-{ns}"
    refused = _create(kube, ns, _pod("p", runtimeClassName=name))
    assert refused.returncode == 1
    assert f'Error from server (Forbidden): error when creating "STDIN": pods "p" is forbidden: pod rejected: ' \
           f'RuntimeClass "{name}" not found' in refused.stderr
    kubectl(kube, "create", "-f", "-", input=_runtime_class(name))
    assert _create(kube, ns, _pod("p", runtimeClassName=name)).returncode == 0
    kubectl(kube, "delete", "runtimeclass", name)
    assert _create(kube, ns, _pod("p", runtimeClassName=name)).returncode == 1


def test_overhead_and_scheduling_come_from_the_class(mini_kube_session, kube_namespace):
    kube, ns = mini_kube_session, kube_namespace
    name = f"rc-sched-{ns}"
    kubectl(kube, "create", "-f", "-", input=_runtime_class(
        name, overhead={"podFixed": {"cpu": "250m", "memory": "120Mi"}},
        scheduling={"nodeSelector": {"sandbox": "yes"},
                    "tolerations": [{"key": "sandbox", "operator": "Exists"},
                                    {"key": "gpu", "operator": "Equal", "value": "x", "effect": "NoSchedule"}]}))
    try:
        made = _create(kube, ns, _pod("p", runtimeClassName=name, nodeSelector={"zone": "a"},
                                      tolerations=[{"key": "gpu", "operator": "Exists"}]))
        assert made.returncode == 0, made.stderr
        spec = json.loads(made.stdout)["spec"]
        assert spec["overhead"] == {"cpu": "250m", "memory": "120Mi"}
        assert spec["nodeSelector"] == {"zone": "a", "sandbox": "yes"}
        assert {"key": "sandbox", "operator": "Exists"} in spec["tolerations"]
        assert not any(t.get("value") == "x" for t in spec["tolerations"])  # covered by the Pod's own gpu Exists
        conflict = _create(kube, ns, _pod("p", runtimeClassName=name, nodeSelector={"sandbox": "no"}))
        assert "conflict: runtimeClass.scheduling.nodeSelector[sandbox] = yes; pod.spec.nodeSelector[sandbox] = no" \
            in conflict.stderr
        other = _create(kube, ns, _pod("p", runtimeClassName=name, overhead={"cpu": "1"}))
        assert "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead" in other.stderr
    finally:
        kubectl(kube, "delete", "runtimeclass", name)
    alone = _create(kube, ns, _pod("p", overhead={"cpu": "1"}))
    assert "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead" in alone.stderr
