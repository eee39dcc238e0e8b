"""A ReplicaSet replaces a Pod that is terminating at once (a terminating Pod is not active, as upstream counts
it): a Deployment whose Pod ignores SIGTERM with a 60 s grace period, scaled to 0 and back to 1, has its new Pod
while the old one still terminates, not 60 s later."""

from __future__ import annotations

import json
import time

import pytest

from tests.helpers import kubectl

from .conftest import eventually

pytestmark = pytest.mark.slow  # each test here takes more than a few seconds


DEPLOYMENT = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: stubborn}
spec:
  replicas: 1
  selector: {matchLabels: {app: stubborn}}
  template:
    metadata: {labels: {app: stubborn}}
    spec:
      terminationGracePeriodSeconds: 60
      containers:
      - name: main
        image: busybox
        command: [sh, -c, "trap '' TERM; sleep 1000"]
"""


def _pods(kube, ns: str) -> list[dict]:
    return json.loads(kubectl(kube, "-n", ns, "get", "pods", "-l", "app=stubborn", "-o", "json").stdout)["items"]


def test_a_terminating_pod_is_replaced_at_once(process_cluster, process_namespace):
    kube, ns = process_cluster, process_namespace
    kubectl(kube, "-n", ns, "apply", "-f", "-", input=DEPLOYMENT)
    try:
        kubectl(kube, "-n", ns, "rollout", "status", "deployment/stubborn", "--timeout=60s")
        [old] = _pods(kube, ns)
        kubectl(kube, "-n", ns, "scale", "deployment/stubborn", "--replicas=0")
        eventually(lambda: all(p["metadata"].get("deletionTimestamp") for p in _pods(kube, ns)))
        kubectl(kube, "-n", ns, "scale", "deployment/stubborn", "--replicas=1")
        started = time.monotonic()
        new = eventually(lambda: [p for p in _pods(kube, ns) if not p["metadata"].get("deletionTimestamp")],
                         timeout=15)
        assert time.monotonic() - started < 15
        assert new[0]["metadata"]["name"] != old["metadata"]["name"]
        terminating = [p for p in _pods(kube, ns) if p["metadata"].get("deletionTimestamp")]
        assert [p["metadata"]["name"] for p in terminating] == [old["metadata"]["name"]]  # still in its grace
        rs = json.loads(kubectl(kube, "-n", ns, "get", "rs", "-l", "app=stubborn", "-o", "json").stdout)["items"]
        eventually(lambda: json.loads(kubectl(kube, "-n", ns, "get", "deployment", "stubborn", "-o", "json").stdout)[
            "status"].get("replicas") == 1)
        assert [r["spec"]["replicas"] for r in rs] == [1]
    finally:
        kubectl(kube, "-n", ns, "delete", "deployment", "stubborn", "--wait=false")
        kubectl(kube, "-n", ns, "delete", "pods", "-l", "app=stubborn", "--grace-period=0", "--force",
                "--wait=false", check=False)
