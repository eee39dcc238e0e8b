"""Day-2 workload operations through real kubectl, as a user runs them against a real cluster: rollout history
with change-causes, undo twice (revisions renumbered as upstream renumbers them), autoscale. One shared cluster
on a simulated node, so Pods run and become Ready without processes."""

from __future__ import annotations

import json

import pytest

from tests.helpers import kubectl, new_namespace


@pytest.fixture(scope="module")
def kube():
    from mini_kube.testing import MiniKube

    with MiniKube(nodes=1, node_runtime="simulated") as cluster:
        yield cluster


def _history(kube, ns: str, target: str) -> list[list[str]]:
    """`kubectl rollout history` as rows of [revision, change-cause]."""
    out = kubectl(kube, "-n", ns, "rollout", "history", target).stdout
    return [line.split(None, 1) for line in out.splitlines()[2:] if line.strip()]


def _annotations(kube, ns: str, kind: str, name: str) -> dict[str, str]:
    obj = json.loads(kubectl(kube, "-n", ns, "get", kind, name, "-o", "json").stdout)
    return obj["metadata"].get("annotations") or {}


def test_rollout_history_change_cause_and_undo_renumber_revisions(kube):
    """The Deployment's change-cause is copied to its ReplicaSet (history shows it), the Deployment carries its
    revision, and an undo moves the old ReplicaSet to the next revision (remembered in revision-history), so a
    second undo goes back again, as kube-controller-manager does."""
    ns = new_namespace(kube, "day2")
    kubectl(kube, "-n", ns, "create", "deployment", "web", "--image=nginx:1", "--replicas=2")
    kubectl(kube, "-n", ns, "rollout", "status", "deploy/web", "--timeout=30s")
    kubectl(kube, "-n", ns, "set", "image", "deploy/web", "nginx=nginx:2")
    kubectl(kube, "-n", ns, "annotate", "deploy/web", "kubernetes.io/change-cause=bump to 2")
    kubectl(kube, "-n", ns, "rollout", "status", "deploy/web", "--timeout=30s")
    assert _history(kube, ns, "deploy/web") == [["1", "<none>"], ["2", "bump to 2"]]
    assert _annotations(kube, ns, "deploy", "web")["deployment.kubernetes.io/revision"] == "2"

    assert "rolled back" in kubectl(kube, "-n", ns, "rollout", "undo", "deploy/web").stdout
    kubectl(kube, "-n", ns, "rollout", "status", "deploy/web", "--timeout=30s")
    assert _history(kube, ns, "deploy/web") == [["2", "bump to 2"], ["3", "<none>"]]
    assert _annotations(kube, ns, "deploy", "web")["deployment.kubernetes.io/revision"] == "3"

    kubectl(kube, "-n", ns, "rollout", "undo", "deploy/web")
    kubectl(kube, "-n", ns, "rollout", "status", "deploy/web", "--timeout=30s")
    assert _history(kube, ns, "deploy/web") == [["3", "<none>"], ["4", "bump to 2"]]
    image = kubectl(kube, "-n", ns, "get", "deploy/web", "-o", "jsonpath={.spec.template.spec.containers[0].image}")
    assert image.stdout == "nginx:2"
    rs = json.loads(kubectl(kube, "-n", ns, "get", "rs", "-o", "json").stdout)["items"]
    current = next(r for r in rs if r["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "4")
    assert current["metadata"]["annotations"]["deployment.kubernetes.io/revision-history"] == "2"
    skipped = kubectl(kube, "-n", ns, "rollout", "undo", "deploy/web", "--to-revision=4").stdout
    assert "skipped rollback (current template already matches revision 4)" in skipped
