"""`kubectl-lite exec` as kubectl takes it: flags after the pod name (`exec POD -c C -- cmd`), and a refused exec
(no such pod, no such container) as one line, the same as real kubectl's, instead of a traceback."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from mini_kube.client import ResourceRef

from tests.helpers import kubectl_binary

from .conftest import eventually

pytestmark = pytest.mark.slow  # each test here takes more than a few seconds


PODS = ResourceRef("", "v1", "pods")


def _run(kube, namespace: str, tool: list[str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*tool, "--kubeconfig", kube.kubeconfig, "-n", namespace, *args], capture_output=True,
                          text=True, timeout=60, env=os.environ)


def _lite(kube, namespace: str, *args: str) -> subprocess.CompletedProcess[str]:
    return _run(kube, namespace, [sys.executable, "-m", "mini_kube.kubectl_lite.cli"], *args)


def _real(kube, namespace: str, *args: str) -> subprocess.CompletedProcess[str]:
    return _run(kube, namespace, [kubectl_binary()], *args)


def _two_container_pod(kube, namespace: str) -> None:
    kube.client.create(PODS, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {
        "nodeName": "mini-kube", "terminationGracePeriodSeconds": 0, "containers": [
            {"name": "main", "image": "busybox", "command": ["sleep", "300"]},
            {"name": "agent", "image": "busybox", "command": ["sleep", "300"]}]}}, namespace)
    eventually(lambda: all(s.get("ready") for s in (kube.client.get(PODS, "p", namespace).get("status") or {}).get(
        "containerStatuses") or [{}]))


def test_flags_after_the_pod_name(process_cluster, process_namespace):
    kube, ns = process_cluster, process_namespace
    _two_container_pod(kube, ns)
    for args in (["p", "-c", "agent", "--", "sh", "-c", "echo ok $HOSTNAME"],
                 ["-c", "agent", "p", "--", "sh", "-c", "echo ok $HOSTNAME"],
                 ["p", "--container=agent", "--", "sh", "-c", "echo ok $HOSTNAME"]):
        lite = _lite(kube, ns, "exec", *args)
        assert (lite.returncode, lite.stdout, lite.stderr) == (0, "ok p\n", ""), args


def test_a_refused_exec_is_one_line_as_kubectl_says_it(process_cluster, process_namespace):
    kube, ns = process_cluster, process_namespace
    _two_container_pod(kube, ns)
    for args in (["nosuchpod", "--", "true"], ["-c", "nosuch", "p", "--", "true"]):
        lite, real = _lite(kube, ns, "exec", *args), _real(kube, ns, "exec", *args)
        assert lite.returncode == real.returncode == 1, (args, lite.stderr, real.stderr)
        assert len(lite.stderr.splitlines()) == 1 and "Traceback" not in lite.stderr, lite.stderr
        assert lite.stderr == real.stderr, (args, lite.stderr, real.stderr)
